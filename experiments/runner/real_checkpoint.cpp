#include "experiments/runner/real_checkpoint.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/json_diff.hpp"
#include "common/own_output.hpp"
#include "experiments/results/results_folder.hpp"

namespace experiments {
namespace {

using nlohmann::json;

// 2: records the resolved config (check_resume); 1 did not.
constexpr int kVersion = 2;

json real(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double real_of(const json& j) { return j.is_null() ? NAN : j.get<double>(); }

json epoch_json(const env::EpochReport& e) {
  return {{"epoch", e.epoch}, {"rounds", e.rounds}, {"clock_ms", e.clock_ms}, {"epoch_ms", e.epoch_ms},
          {"accuracy", real(e.accuracy)}, {"loss", real(e.loss)}, {"train_loss", real(e.train_loss)},
          {"mean_straggler_effect", e.mean_straggler_effect}, {"utilization", e.utilization},
          {"worker_busy_ms", e.worker_busy_ms}, {"worker_idle_ms", e.worker_idle_ms}, {"worker_steps", e.worker_steps}};
}

env::EpochReport epoch_of(const json& j) {
  env::EpochReport e;
  e.epoch = j.at("epoch").get<int>();
  e.rounds = j.at("rounds").get<std::int64_t>();
  e.clock_ms = j.at("clock_ms").get<double>();
  e.epoch_ms = j.at("epoch_ms").get<double>();
  e.accuracy = real_of(j.at("accuracy"));
  e.loss = real_of(j.at("loss"));
  e.train_loss = real_of(j.at("train_loss"));
  e.mean_straggler_effect = j.at("mean_straggler_effect").get<double>();
  e.utilization = j.at("utilization").get<double>();
  e.worker_busy_ms = j.at("worker_busy_ms").get<std::vector<double>>();
  e.worker_idle_ms = j.at("worker_idle_ms").get<std::vector<double>>();
  e.worker_steps = j.at("worker_steps").get<std::vector<std::int64_t>>();
  return e;
}

json outcome_json(const PolicyOutcome& o) {
  json evals = json::array();
  for (const auto& p : o.evals) evals.push_back({p.round, p.epoch, p.clock_s, real(p.accuracy), real(p.loss)});
  json epochs = json::array();
  for (const auto& e : o.epochs) epochs.push_back(epoch_json(e));
  return {{"label", o.label}, {"kind", o.kind}, {"params", o.params}, {"epochs", epochs}, {"evals", evals},
          {"time_to_target_s", o.time_to_target_s ? json(*o.time_to_target_s) : json(nullptr)},
          {"final_accuracy", real(o.final_accuracy)}, {"final_loss", real(o.final_loss)}, {"sim_time_s", o.sim_time_s},
          {"rounds", o.rounds}, {"mean_straggler_effect", o.mean_straggler_effect}, {"mean_utilization", o.mean_utilization},
          {"idle_s_per_worker", o.idle_s_per_worker}, {"wall_seconds", o.wall_seconds}, {"rounds_csv", o.rounds_csv},
          {"iterations_csv", o.iterations_csv}};
}

PolicyOutcome outcome_of(const json& j) {
  PolicyOutcome o;
  o.label = j.at("label").get<std::string>();
  o.kind = j.at("kind").get<std::string>();
  o.params = j.at("params");
  for (const auto& e : j.at("epochs")) o.epochs.push_back(epoch_of(e));
  for (const auto& p : j.at("evals"))
    o.evals.push_back({p.at(0).get<std::int64_t>(), p.at(1).get<int>(), p.at(2).get<double>(), real_of(p.at(3)), real_of(p.at(4))});
  if (!j.at("time_to_target_s").is_null()) o.time_to_target_s = j.at("time_to_target_s").get<double>();
  o.final_accuracy = real_of(j.at("final_accuracy"));
  o.final_loss = real_of(j.at("final_loss"));
  o.sim_time_s = j.at("sim_time_s").get<double>();
  o.rounds = j.at("rounds").get<std::int64_t>();
  o.mean_straggler_effect = j.at("mean_straggler_effect").get<double>();
  o.mean_utilization = j.at("mean_utilization").get<double>();
  o.idle_s_per_worker = j.at("idle_s_per_worker").get<std::vector<double>>();
  o.wall_seconds = j.at("wall_seconds").get<double>();
  o.rounds_csv = j.at("rounds_csv").get<std::string>();
  o.iterations_csv = j.at("iterations_csv").get<std::string>();
  return o;
}

}  // namespace

std::string checkpoint_base(const std::string& out_dir, const std::string& label) { return out_dir + "/checkpoints/" + label; }

void save_checkpoint(const std::string& out_dir, const RunCheckpoint& c, env::Classifier* model, const json& resolved_config) {
  const std::string base = checkpoint_base(out_dir, c.outcome.label);
  std::filesystem::create_directories(out_dir + "/checkpoints");
  if (model) {
    // Serialized in memory, then written like every result (temp + fsync + rename), so a crash
    // mid-write leaves the previous checkpoint intact.
    torch::serialize::OutputArchive archive;
    model->save(archive);
    std::ostringstream bytes;
    archive.save_to(bytes);
    common::write_file_atomic(base + ".pt", bytes.str());
  }
  const json meta{{"version", kVersion}, {"config", resolved_config}, {"finished", c.finished}, {"epochs_done", c.epochs_done}, {"rounds", c.rounds}, {"clock_ms", c.clock_ms},
                  {"straggler_sum", c.totals.straggler_sum}, {"busy_ms", c.totals.busy_ms}, {"outcome", outcome_json(c.outcome)}};
  common::write_file_atomic(base + ".json", meta.dump() + "\n");
}

std::optional<RunCheckpoint> load_checkpoint(const std::string& out_dir, const std::string& label) {
  const std::string path = checkpoint_base(out_dir, label) + ".json";
  if (!std::filesystem::exists(path)) return std::nullopt;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    const json j = json::parse(text.str());
    if (j.at("version").get<int>() != kVersion) throw common::DataError("unknown checkpoint version");  // caught below, the path added
    RunCheckpoint c;
    c.finished = j.at("finished").get<bool>();
    c.epochs_done = j.at("epochs_done").get<int>();
    c.rounds = j.at("rounds").get<std::int64_t>();
    c.clock_ms = j.at("clock_ms").get<double>();
    c.totals.straggler_sum = j.at("straggler_sum").get<double>();
    c.totals.busy_ms = j.at("busy_ms").get<double>();
    c.outcome = outcome_of(j.at("outcome"));
    c.outcome.clock = env::ClockKind::Wall;  // checkpoints are written by real runs only
    return c;
  } catch (const std::exception& e) {
    throw common::DataError(path + ": unreadable checkpoint: " + e.what());
  }
}

json resume_identity(const json& resolved_config) {
  json id = experiment_identity(resolved_config);
  if (resolved_config.is_object() && resolved_config.contains("policy")) id["policy"] = resolved_config["policy"];
  return id;
}

void check_resume(const std::string& out_dir, const std::string& label, const json& resolved_config) {
  const std::string path = checkpoint_base(out_dir, label) + ".json";
  if (!std::filesystem::exists(path)) return;
  json meta;
  try {
    std::ifstream in(path);
    meta = json::parse(in);
  } catch (const json::exception& e) {
    throw common::DataError(path + ": unreadable checkpoint (" + std::string(e.what()) + ")");
  }
  if (!meta.is_object() || !meta.contains("config") || meta.value("version", 0) != kVersion)
    throw common::ConfigError(path + ": --resume: this checkpoint does not record the config it was written with (an older version of the toolkit), "
                                     "so resuming could go on with another one: run without --resume");
  const json before = resume_identity(meta["config"]), now = resume_identity(resolved_config);
  if (before != now)
    throw common::ConfigError(path + ": --resume: policy " + label + " ran with another config than this one: " + common::describe_differences(before, now) +
                              ": resume with the config it ran with, or run without --resume into another folder");
}

void check_resume_loads(const std::string& out_dir, const std::string& label, env::Classifier& model) {
  const std::optional<RunCheckpoint> checkpoint = load_checkpoint(out_dir, label);
  if (checkpoint && !checkpoint->finished) load_checkpoint_model(out_dir, label, model);
}

void check_checkpoints_replaceable(const std::string& out_dir, const std::string& label) {
  // What every file of the kind holds: the meta's epochs_done key (save_checkpoint), and the zip
  // entry of libtorch's serialized module.
  const std::string base = checkpoint_base(out_dir, label);
  common::check_replaceable_output(base + ".json", "--out", "a checkpoint's meta (orchestra launch)", "\"epochs_done\":");
  common::check_replaceable_output(base + ".pt", "--out", "a checkpointed model (orchestra launch)", "archive/data.pkl");
}

void load_checkpoint_model(const std::string& out_dir, const std::string& label, env::Classifier& model) {
  const std::string path = checkpoint_base(out_dir, label) + ".pt";
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    model.load(archive);
  } catch (const c10::Error& e) {
    throw common::DataError(path + ": cannot load the checkpointed model: " + std::string(e.what_without_backtrace()).substr(0, 200));
  }
}

}  // namespace experiments
