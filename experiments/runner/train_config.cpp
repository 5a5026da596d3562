#include "experiments/runner/train_config.hpp"
#include "experiments/runner/training_identity.hpp"

#include "experiments/runner/cluster_distribution_config.hpp"
#include "experiments/runner/hardest_clusters.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "agents/policy_file.hpp"
#include "common/yaml_file.hpp"
#include "env/surrogate/surrogate_file.hpp"
#include "orchestra/barrier_env.hpp"
#include "env/train/workload_task.hpp"
#include "agents/toy_barrier_env.hpp"
#include "common/errors.hpp"
#include "experiments/config/config.hpp"
#include "experiments/registry/orchestra_options.hpp"
#include "common/names.hpp"
#include "common/yaml_reader.hpp"
#include "orchestra/rl/local_sgd_barrier_env.hpp"
#include "orchestra/rl/merged_barrier_env_vector.hpp"
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
  c.focus_draws = config.focus_draws;
  c.focus_share = config.focus_share;
  c.budget.max_reference_epochs = config.max_reference_epochs;
  if (config.environment == TrainEnvironment::Surrogate) c.surrogate = config.surrogate;
  return c;
}

// focus: {files: [...], share: S}: the files' draw seeds, every file read now (errors name the
// config's line), and only with a distribution to draw them from.
void read_focus(common::YamlReader& top, TrainConfig& c) {
  common::YamlReader focus = top.child("focus");
  const std::vector<YAML::Node> files = focus.sequence("files");
  if (files.empty()) focus.fail("files", "expected a list of focus-clusters files (orchestra surrogate hardest writes them)");
  for (const YAML::Node& item : files) {
    if (!item.IsScalar()) common::YamlReader::fail_at(item, c.file, "focus.files", "expected a file name");
    std::filesystem::path p = item.Scalar();
    if (p.is_relative()) p = std::filesystem::path(c.file).parent_path() / p;
    try {
      const std::vector<std::uint64_t> draws = read_focus_draws(p.lexically_normal().string());
      c.focus_draws.insert(c.focus_draws.end(), draws.begin(), draws.end());
    } catch (const common::DataError& e) {
      common::YamlReader::fail_at(item, c.file, "focus.files", e.what());
    }
    c.focus_files.push_back(p.lexically_normal().string());
  }
  c.focus_share = focus.real("share", 0.5, 0.0, 1.0);
  focus.reject_unknown_keys();
  if (!c.distribution) top.fail("focus", "focus clusters are draws of the clusters: distribution; this config has none");
}

}  // namespace

TrainConfig load_train_config(const std::string& path) {
  return load_train_config(common::read_yaml_file(path), path);
}

TrainConfig load_train_config(const YAML::Node& root, const std::string& path) {
  if (!root.IsMap()) throw common::ConfigError(path + ": expected a mapping with keys like environment:, experiments:, a3c:");
  TrainConfig c;
  c.file = path;
  common::YamlReader top(root, path, "");
  // results/<name>/ by default: a name, whether given or the file's stem.
  const std::string stem = std::filesystem::path(path).stem().string();
  if (!top.has("name"))
    if (const auto problem = common::name_problem(stem))
      top.fail("name", "the results folder is named after the config file's stem, " + common::quoted_name(stem) + ", which " + *problem + ": give name:");
  c.name = top.name("name", stem);
  c.environment = top.option("environment", TrainEnvironment::LocalSgd,
                             {{"local-sgd", TrainEnvironment::LocalSgd}, {"surrogate", TrainEnvironment::Surrogate}, {"toy", TrainEnvironment::Toy}});
  const std::string surrogate = top.text("surrogate", "");
  if (c.environment == TrainEnvironment::Surrogate) {
    if (surrogate.empty()) top.fail("environment", "surrogate needs surrogate: FILE, a surrogate written by orchestra surrogate fit");
    std::filesystem::path p = surrogate;
    if (p.is_relative()) p = std::filesystem::path(path).parent_path() / p;
    c.surrogate_file = p.lexically_normal().string();
    try {
      c.surrogate = env::read_surrogate(c.surrogate_file);
    } catch (const common::DataError& e) {
      top.fail("surrogate", e.what());
    }
  } else if (!surrogate.empty()) {
    top.fail("surrogate", "is only read with environment: surrogate");
  }
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
  if (top.has("focus")) read_focus(top, c);
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
  c.merge_episodes = top.boolean("merge_episodes", false);
  nlohmann::json resolved_a3c;
  c.a3c = agents::read_a3c_options(top.raw("a3c"), path, "a3c", &resolved_a3c);
  if (c.merge_episodes) {
    if (c.environment != TrainEnvironment::LocalSgd) top.fail("merge_episodes", "merges real training; it needs environment: local-sgd");
    if (c.a3c.envs_per_agent < 2) top.fail("merge_episodes", "merges an agent's environments; it needs a3c.envs_per_agent of 2 or more");
    if (c.experiments.size() != 1)
      top.fail("merge_episodes", "merged episodes train one model; it needs exactly one experiment, got " + std::to_string(c.experiments.size()));
  }
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
  if (c.surrogate) c.training_info["training"] = "surrogate " + c.surrogate_file;  // absent: libtorch, as before
  if (c.a3c.envs_per_agent > 1) c.training_info["envs_per_agent"] = std::to_string(c.a3c.envs_per_agent);
  if (c.merge_episodes) c.training_info["merge_episodes"] = "true";
  if (!c.focus_draws.empty()) {
    std::ostringstream focus;
    focus << c.focus_draws.size() << " focus clusters, share " << c.focus_share;
    c.training_info["focus"] = focus.str();
  }
  if (c.move_cost_rounds > 0) {
    std::ostringstream cost;
    cost << c.move_cost_rounds;
    c.training_info["move_cost_rounds"] = cost.str();
  }
  if (c.environment == TrainEnvironment::Toy) {
    c.observation_size = agents::ToyBarrierEnv::kObservationSize;
  } else {
    if (c.experiments.empty())
      top.fail("experiments", std::string("environment ") + (c.environment == TrainEnvironment::Surrogate ? "surrogate" : "local-sgd") +
                                  " needs at least one experiment config");
    for (std::size_t k = 0; k < c.experiments.size(); ++k) {
      const auto environment = env_config(c, c.experiments[k]);  // errors now, not in an agent
      if (c.surrogate) {
        const std::string why = env::task_mismatch(c.surrogate->task, env::wanted_task(environment.data, environment.training, environment.global_batch));
        if (!why.empty()) top.fail("surrogate", c.surrogate_file + ": " + why + " (" + c.experiments[k] + ")");
      }
      if (k == 0) c.control = agents::PolicyControl::of(environment.controller);
    }
    c.observation_size = orchestra::state_size(c.control.state_features);
  }
  if (!c.a3c.init_policy.empty()) {
    try {
      agents::load_policy_of_shape(c.a3c.init_policy,
                                   agents::ActorCriticSpec{c.observation_size, c.a3c.hidden, orchestra::num_barrier_actions(c.control.max_move)});
    } catch (const std::exception& e) {
      common::YamlReader(top.raw("a3c"), path, "a3c").fail("init_policy", e.what());
    }
    c.training_info["init_policy"] = c.a3c.init_policy;
  }
  c.identity = training_identity({root, top.resolved(), resolved_a3c, c.experiments, c.focus_draws, c.surrogate ? env::surrogate_digest(*c.surrogate) : ""});
  return c;
}

orchestra::LocalSgdBarrierEnvConfig training_env_config(const TrainConfig& config, std::int64_t index) {
  if (config.experiments.empty()) throw common::ConfigError(config.file + ": experiments: the environment needs at least one experiment config");
  return env_config(config, config.experiments[static_cast<std::size_t>(index) % config.experiments.size()]);
}

std::unique_ptr<orchestra::BarrierEnv> make_training_env(const TrainConfig& config, std::int64_t index) {
  if (config.environment == TrainEnvironment::Toy) return std::make_unique<agents::ToyBarrierEnv>(config.toy_step_ms);
  return std::make_unique<orchestra::LocalSgdBarrierEnv>(training_env_config(config, index));
}

std::vector<std::unique_ptr<orchestra::BarrierEnv>> make_agent_envs(const TrainConfig& config, int agent) {
  const int k = config.a3c.envs_per_agent;
  std::vector<std::unique_ptr<orchestra::BarrierEnv>> envs;
  for (int j = 0; j < k; ++j) envs.push_back(make_training_env(config, static_cast<std::int64_t>(agent) * k + j));
  return envs;
}

std::unique_ptr<orchestra::VectorBarrierEnv> make_merged_agent_envs(const TrainConfig& config) {
  if (!config.merge_episodes) throw std::logic_error("make_merged_agent_envs without merge_episodes");
  return std::make_unique<orchestra::MergedBarrierEnvVector>(
      std::make_unique<orchestra::BatchedBarrierEnvs>(env_config(config, config.experiments.front()), config.a3c.envs_per_agent));
}

}  // namespace experiments
