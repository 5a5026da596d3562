#include "agents/checkpoint.hpp"

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "agents/optimizer_state.hpp"
#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/json_diff.hpp"

namespace agents {
namespace {

// 2: the optimizer's state by parameter index (optimizer_state.hpp); 1 had libtorch's own, keyed
// by tensor address.
constexpr std::int64_t kCheckpointVersion = 2;

std::int64_t read_int(torch::serialize::InputArchive& archive, const std::string& key, const std::string& path) {
  c10::IValue v;
  if (!archive.try_read(key, v) || !v.isInt()) throw common::DataError(path + ": checkpoint has no integer '" + key + "'");
  return v.toInt();
}

}  // namespace

void save_checkpoint(const std::string& path, ActorCritic& net, const torch::optim::Optimizer& optimizer,
                     const CheckpointState& state) {
  torch::serialize::OutputArchive archive;
  archive.write("checkpoint_version", c10::IValue(kCheckpointVersion));
  archive.write("observation_size", c10::IValue(static_cast<std::int64_t>(net->spec().observation_size)));
  archive.write("parameter_count", c10::IValue(parameter_count(net)));
  torch::serialize::OutputArchive network;
  net->save(network);
  archive.write("network", network);
  torch::serialize::OutputArchive opt;
  save_optimizer_state(optimizer, opt);
  archive.write("optimizer_state", opt);
  archive.write("updates", c10::IValue(state.updates));
  archive.write("episodes", c10::IValue(state.episodes));
  archive.write("next_agent_id", c10::IValue(state.next_agent_id));
  archive.write("rng_state", c10::IValue(state.rng_state));
  std::vector<double> recent;
  for (const auto& e : state.recent) {
    recent.insert(recent.end(), {e.total_reward, static_cast<double>(e.epochs), e.reached_target ? 1.0 : 0.0,
                                 e.time_to_target_ms, e.clock_ms});
  }
  archive.write("recent_episodes", torch::tensor(recent, torch::kDouble).reshape({-1, 5}));
  if (!state.identity.is_null()) archive.write("training_identity", c10::IValue(state.identity.dump()));
  std::ostringstream bytes;
  archive.save_to(bytes);
  const std::string s = bytes.str();
  common::write_file_atomic(path, std::vector<char>(s.begin(), s.end()));
}

CheckpointState load_checkpoint(const std::string& path, ActorCritic& net, torch::optim::Optimizer& optimizer,
                                const nlohmann::json& expected_identity) {
  if (!std::filesystem::exists(path)) throw common::DataError(path + ": no checkpoint to resume from");
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
  } catch (const c10::Error& e) {
    const std::string why = e.what_without_backtrace();
    throw common::DataError(path + ": not a readable checkpoint (" + why.substr(0, why.find('\n')) + ")");
  } catch (const std::exception& e) {
    // A damaged file fails in TorchScript's parser (a report of several lines) or an allocation.
    const std::string why = e.what();
    throw common::DataError(path + ": not a readable checkpoint (" + why.substr(0, why.find('\n')) + ")");
  }
  const std::int64_t version = read_int(archive, "checkpoint_version", path);
  if (version != kCheckpointVersion)
    throw common::DataError(path + ": checkpoint of another format version (" + std::to_string(version) + ", this toolkit reads " +
                            std::to_string(kCheckpointVersion) + "): resume with the toolkit that wrote it, or start afresh with --overwrite");
  // Another training's checkpoint is refused before anything is read into the network.
  CheckpointState state;
  c10::IValue identity;  // absent from checkpoints written before it: nothing to compare
  if (archive.try_read("training_identity", identity)) {
    if (!identity.isString()) throw common::DataError(path + ": checkpoint's training_identity is not text");
    state.identity = nlohmann::json::parse(identity.toStringRef(), nullptr, /*allow_exceptions=*/false);
    if (state.identity.is_discarded()) throw common::DataError(path + ": checkpoint's training_identity is not valid JSON");
    if (!expected_identity.is_null() && state.identity != expected_identity)
      throw common::ConfigError(path + ": --resume: trained with another config than this one: " +
                                common::describe_differences(state.identity, expected_identity) +
                                ": resume with the config it was trained with, or start afresh with --overwrite");
  }
  if (read_int(archive, "observation_size", path) != net->spec().observation_size ||
      read_int(archive, "parameter_count", path) != parameter_count(net))
    throw common::DataError(path + ": the checkpoint's network differs from the config's (observation size " +
                            std::to_string(read_int(archive, "observation_size", path)) + ", " +
                            std::to_string(read_int(archive, "parameter_count", path)) + " parameters)");
  try {
    torch::serialize::InputArchive network;
    archive.read("network", network);
    net->load(network);
    torch::serialize::InputArchive opt;
    archive.read("optimizer_state", opt);
    load_optimizer_state(optimizer, opt);
  } catch (const std::invalid_argument& e) {
    throw common::DataError(path + ": the checkpoint's network or optimizer state does not fit this config's (" + e.what() +
                            "): resume with the config it was trained with");
  } catch (const c10::Error& e) {
    // A network of other shapes fails deep in libtorch: one line.
    const std::string why = e.what_without_backtrace();
    throw common::DataError(path + ": the checkpoint's network or optimizer state does not fit this config's (" +
                            why.substr(0, why.find('\n')) + "): resume with the config it was trained with");
  }
  state.updates = read_int(archive, "updates", path);
  state.episodes = read_int(archive, "episodes", path);
  state.next_agent_id = read_int(archive, "next_agent_id", path);
  c10::IValue rng;
  archive.read("rng_state", rng);
  state.rng_state = rng.toStringRef();
  torch::Tensor recent;
  archive.read("recent_episodes", recent);
  recent = recent.contiguous();
  for (std::int64_t i = 0; i < recent.size(0); ++i) {
    const double* row = recent[i].data_ptr<double>();
    EpisodeStats e;
    e.total_reward = row[0];
    e.epochs = static_cast<int>(row[1]);
    e.reached_target = row[2] > 0.5;
    e.time_to_target_ms = row[3];
    e.clock_ms = row[4];
    state.recent.push_back(e);
  }
  return state;
}

}  // namespace agents
