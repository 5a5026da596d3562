#include "experiments/runner/train_config.hpp"

#include "experiments/runner/cluster_distribution_config.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <utility>
#include <vector>

#include "agents/policy_file.hpp"
#include "agents/toy_barrier_env.hpp"
#include "common/errors.hpp"
#include "experiments/config/config.hpp"
#include "experiments/registry/orchestra_options.hpp"
#include "common/yaml_reader.hpp"
#include "orchestra/rl/local_sgd_barrier_env.hpp"
#include "orchestra/rl_state.hpp"

namespace experiments {
namespace {

orchestra::LocalSgdBarrierEnvConfig env_config(const TrainConfig& config, const std::string& experiment) {
  const ExperimentConfig exp = load_config(experiment);
  common::YamlReader r(config.controller, config.file, "controller");
  const orchestra::BarrierControllerOptions controller = read_barrier_options(r, orchestra::BarrierSource::Lcm, exp);
  r.reject_unknown_keys();
  orchestra::LocalSgdBarrierEnvConfig c = barrier_env_config(exp, controller);
  c.distribution = config.distribution;
  c.reward_record = config.reward_record;
  c.reward = config.reward;
  c.time_reward_rounds = config.time_reward_rounds;
  c.move_cost_rounds = config.move_cost_rounds;
  c.eval_every_reference_rounds = config.eval_every_reference_rounds;
  c.exploring_start = config.exploring_start;
  c.budget.max_reference_epochs = config.max_reference_epochs;
  return c;
}

}  // namespace

TrainConfig load_train_config(const std::string& path) {
  if (!std::filesystem::exists(path)) throw common::ConfigError(path + ": no such config file");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::ParserException& e) {
    throw common::ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  return load_train_config(root, path);
}

TrainConfig load_train_config(const YAML::Node& root, const std::string& path) {
  if (!root.IsMap()) throw common::ConfigError(path + ": expected a mapping with keys like environment:, experiments:, a3c:");
  TrainConfig c;
  c.file = path;
  common::YamlReader top(root, path, "");
  c.name = top.text("name", std::filesystem::path(path).stem().string());
  c.environment = top.option("environment", TrainEnvironment::LocalSgd, {{"local-sgd", TrainEnvironment::LocalSgd}, {"toy", TrainEnvironment::Toy}});
  c.toy_step_ms = top.real("toy_step_ms", 0.0, 0.0, 60000.0);
  c.controller = top.raw("controller");
  c.reward_record = top.option("reward_record", orchestra::RecordScope::Episode,
                               {{"episode", orchestra::RecordScope::Episode}, {"history", orchestra::RecordScope::History}});
  using Reward = orchestra::LocalSgdBarrierEnvConfig::Reward;
  const std::vector<std::pair<const char*, Reward>> rewards = {{"eq1", Reward::Eq1}, {"time", Reward::Time}, {"log_time", Reward::LogTime}};
  c.reward = top.option("reward", Reward::Eq1, rewards);
  c.time_reward_rounds = top.real("time_reward_rounds", c.time_reward_rounds, 0.0, 1e9, /*min_exclusive=*/true);
  c.move_cost_rounds = top.real("move_cost_rounds", c.move_cost_rounds, 0.0, 1e9);
  if (c.move_cost_rounds > 0 && c.reward != Reward::Time) top.fail("move_cost_rounds", "is charged in the time reward's units; it needs reward: time");
  c.eval_every_reference_rounds = top.real("eval_every_reference_rounds", c.eval_every_reference_rounds, 0.0, 1e9);
  c.max_reference_epochs = top.real("max_reference_epochs", c.max_reference_epochs, 0.0, 1e9);
  c.exploring_start = read_range(top, "exploring_start", c.exploring_start, 1e-3, 1e3);
  if (top.has("clusters")) c.distribution = read_cluster_distribution(top.child("clusters"));
  const YAML::Node list = top.raw("experiments");
  if (list && !list.IsNull()) {
    if (!list.IsSequence()) top.fail("experiments", "expected a list of experiment config files");
    for (const auto& item : list) {
      if (!item.IsScalar()) common::YamlReader::fail_at(item, path, "experiments", "expected a file name");
      std::filesystem::path p = item.Scalar();
      if (p.is_relative()) p = std::filesystem::path(path).parent_path() / p;
      if (!std::filesystem::exists(p)) common::YamlReader::fail_at(item, path, "experiments", p.string() + ": no such file");
      c.experiments.push_back(p.string());
    }
  }
  c.a3c = agents::read_a3c_options(top.raw("a3c"), path, "a3c");
  top.reject_unknown_keys();
  c.training_info = {{"config", c.name},
                     {"algorithm", c.a3c.algorithm},
                     {"environment", c.environment == TrainEnvironment::Toy ? "toy" : (c.distribution ? "cluster distribution" : "fixed clusters")},
                     {"reward", std::find_if(rewards.begin(), rewards.end(), [&](const auto& r) { return r.second == c.reward; })->first},
                     {"reward_record", c.reward_record == orchestra::RecordScope::History ? "history" : "episode"}};
  if (c.exploring_start.lo != 1.0 || c.exploring_start.hi != 1.0) {
    std::ostringstream range;
    range << "[" << c.exploring_start.lo << ", " << c.exploring_start.hi << "] x T*";
    c.training_info["exploring_start"] = range.str();
  }
  if (c.a3c.lr_decay == agents::LearningRateDecay::Linear) c.training_info["lr_decay"] = "linear";
  if (c.a3c.envs_per_agent > 1) c.training_info["envs_per_agent"] = std::to_string(c.a3c.envs_per_agent);
  if (c.move_cost_rounds > 0) {
    std::ostringstream cost;
    cost << c.move_cost_rounds;
    c.training_info["move_cost_rounds"] = cost.str();
  }
  if (c.environment == TrainEnvironment::Toy) {
    c.observation_size = agents::ToyBarrierEnv::kObservationSize;
  } else {
    if (c.experiments.empty()) top.fail("experiments", "environment local-sgd needs at least one experiment config");
    for (std::size_t k = 0; k < c.experiments.size(); ++k) {
      const auto environment = env_config(c, c.experiments[k]);  // errors now, not in an agent
      if (k == 0) c.control = agents::PolicyControl::of(environment.controller);
    }
    c.observation_size = orchestra::StateLayout::kStateSize;
  }
  if (!c.a3c.init_policy.empty()) {
    try {
      agents::load_policy_of_shape(c.a3c.init_policy, agents::ActorCriticSpec{c.observation_size, c.a3c.hidden});
    } catch (const std::exception& e) {
      common::YamlReader(top.raw("a3c"), path, "a3c").fail("init_policy", e.what());
    }
    c.training_info["init_policy"] = c.a3c.init_policy;
  }
  return c;
}

std::unique_ptr<orchestra::BarrierEnv> make_training_env(const TrainConfig& config, std::int64_t index) {
  if (config.environment == TrainEnvironment::Toy) return std::make_unique<agents::ToyBarrierEnv>(config.toy_step_ms);
  const std::string& experiment = config.experiments[static_cast<std::size_t>(index) % config.experiments.size()];
  return std::make_unique<orchestra::LocalSgdBarrierEnv>(env_config(config, experiment));
}

std::vector<std::unique_ptr<orchestra::BarrierEnv>> make_agent_envs(const TrainConfig& config, int agent) {
  const int k = config.a3c.envs_per_agent;
  std::vector<std::unique_ptr<orchestra::BarrierEnv>> envs;
  for (int j = 0; j < k; ++j) envs.push_back(make_training_env(config, static_cast<std::int64_t>(agent) * k + j));
  return envs;
}

}  // namespace experiments
