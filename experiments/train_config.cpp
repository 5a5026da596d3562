#include "experiments/train_config.hpp"

#include <filesystem>

#include "agents/toy_barrier_env.hpp"
#include "env/errors.hpp"
#include "experiments/config.hpp"
#include "experiments/orchestra_options.hpp"
#include "experiments/yaml_reader.hpp"
#include "orchestra/local_sgd_barrier_env.hpp"
#include "orchestra/rl_state.hpp"

namespace experiments {
namespace {

orchestra::LocalSgdBarrierEnvConfig env_config(const TrainConfig& config, const std::string& experiment) {
  const ExperimentConfig exp = load_config(experiment);
  YamlReader r(config.controller, config.file, "controller");
  const orchestra::BarrierControllerOptions controller = read_barrier_options(r, orchestra::BarrierSource::Lcm, exp);
  r.reject_unknown_keys();
  orchestra::LocalSgdBarrierEnvConfig c = barrier_env_config(exp, controller);
  c.reward_record = config.reward_record;
  c.reward = config.reward;
  c.time_reward_scale_s = config.time_reward_scale_s;
  return c;
}

}  // namespace

TrainConfig load_train_config(const std::string& path) {
  if (!std::filesystem::exists(path)) throw env::ConfigError(path + ": no such config file");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::ParserException& e) {
    throw env::ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) throw env::ConfigError(path + ": expected a mapping with keys like environment:, experiments:, a3c:");
  TrainConfig c;
  c.file = path;
  YamlReader top(root, path, "");
  c.name = top.text("name", std::filesystem::path(path).stem().string());
  c.environment = top.choice("environment", "local-sgd", {"local-sgd", "toy"}) == "toy" ? TrainEnvironment::Toy
                                                                                     : TrainEnvironment::LocalSgd;
  c.toy_step_ms = top.real("toy_step_ms", 0.0, 0.0, 60000.0);
  c.controller = top.raw("controller");
  c.reward_record = top.choice("reward_record", "episode", {"episode", "history"}) == "history"
                        ? orchestra::RecordScope::History
                        : orchestra::RecordScope::Episode;
  c.reward = top.choice("reward", "eq1", {"eq1", "epoch_time"}) == "epoch_time"
                 ? orchestra::LocalSgdBarrierEnvConfig::Reward::EpochTime
                 : orchestra::LocalSgdBarrierEnvConfig::Reward::Eq1;
  c.time_reward_scale_s = top.real("time_reward_scale_s", c.time_reward_scale_s, 0.0, 1e9, /*min_exclusive=*/true);
  const YAML::Node list = top.raw("experiments");
  if (list && !list.IsNull()) {
    if (!list.IsSequence()) top.fail("experiments", "expected a list of experiment config files");
    for (const auto& item : list) {
      if (!item.IsScalar()) YamlReader::fail_at(item, path, "experiments", "expected a file name");
      std::filesystem::path p = item.Scalar();
      if (p.is_relative()) p = std::filesystem::path(path).parent_path() / p;
      if (!std::filesystem::exists(p)) YamlReader::fail_at(item, path, "experiments", p.string() + ": no such file");
      c.experiments.push_back(p.string());
    }
  }
  c.a3c = agents::read_a3c_options(top.raw("a3c"), path, "a3c");
  top.reject_unknown_keys();
  if (c.environment == TrainEnvironment::Toy) {
    c.observation_size = agents::ToyBarrierEnv::kObservationSize;
  } else {
    if (c.experiments.empty()) top.fail("experiments", "environment local-sgd needs at least one experiment config");
    for (std::size_t k = 0; k < c.experiments.size(); ++k) {
      const auto environment = env_config(c, c.experiments[k]);  // errors now, not in an agent
      if (k == 0) c.action_unit_ms = environment.controller.action_unit_ms;
    }
    c.observation_size = orchestra::StateLayout::kStateSize;
  }
  return c;
}

std::unique_ptr<orchestra::BarrierEnv> make_training_env(const TrainConfig& config, int index) {
  if (config.environment == TrainEnvironment::Toy) return std::make_unique<agents::ToyBarrierEnv>(config.toy_step_ms);
  const std::string& experiment = config.experiments[static_cast<std::size_t>(index) % config.experiments.size()];
  return std::make_unique<orchestra::LocalSgdBarrierEnv>(env_config(config, experiment));
}

}  // namespace experiments
