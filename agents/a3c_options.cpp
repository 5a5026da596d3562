#include "agents/a3c_options.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "agents/learner.hpp"
#include "common/errors.hpp"
#include "common/limits.hpp"
#include "common/yaml_reader.hpp"

namespace agents {
namespace {

constexpr double kHuge = std::numeric_limits<double>::max();

}  // namespace

A3cOptions read_a3c_options(const YAML::Node& node, const std::string& file, const std::string& path, nlohmann::json* resolved) {
  common::YamlReader r(node, file, path);
  A3cOptions o;
  const std::vector<std::int64_t> hidden(o.hidden.begin(), o.hidden.end());
  o.hidden.clear();
  for (const auto h : r.integers("hidden", hidden, 1, 4096)) o.hidden.push_back(static_cast<int>(h));
  if (o.hidden.empty()) r.fail("hidden", "expected a non-empty list of layer widths");
  o.algorithm = r.choice("algorithm", o.algorithm, learner_names());
  o.envs_per_agent = static_cast<int>(r.integer("envs_per_agent", o.envs_per_agent, 1, kMaxEnvsPerAgent));
  o.n_steps = static_cast<int>(r.integer("n_steps", o.n_steps, 1, 10000));
  o.gamma = r.real("gamma", o.gamma, 0.0, 1.0);
  o.ppo_rollout_steps = static_cast<int>(r.integer("ppo_rollout_steps", o.ppo_rollout_steps, 1, 1 << 20));
  o.ppo_epochs = static_cast<int>(r.integer("ppo_epochs", o.ppo_epochs, 1, 1000));
  o.ppo_minibatch = static_cast<int>(r.integer("ppo_minibatch", o.ppo_minibatch, 1, 1 << 20));
  o.ppo_clip = r.real("ppo_clip", o.ppo_clip, 0.0, 1.0, true);
  o.gae_lambda = r.real("gae_lambda", o.gae_lambda, 0.0, 1.0);
  // A key of another learner than the chosen one is a mistake, not a silent no-op.
  for (const LearnerKind& kind : learner_registry())
    if (o.algorithm != kind.name)
      for (const std::string& key : kind.keys)
        if (r.has(key)) r.fail(key, std::string("an option of the ") + kind.name + " learner: set algorithm: " + kind.name + " to use it");
  o.entropy_coef = r.real("entropy_coef", o.entropy_coef, 0.0, 100.0);
  o.value_loss_coef = r.real("value_loss_coef", o.value_loss_coef, 0.0, 100.0);
  o.max_grad_norm = r.real("max_grad_norm", o.max_grad_norm, 0.0, kHuge);
  o.optimizer = r.option("optimizer", OptimizerKind::Adam, {{"adam", OptimizerKind::Adam}, {"rmsprop", OptimizerKind::RmsProp}});
  o.learning_rate = r.real("learning_rate", o.learning_rate, 0.0, 10.0, true);
  o.lr_decay = r.option("lr_decay", o.lr_decay, {{"none", LearningRateDecay::None}, {"linear", LearningRateDecay::Linear}});
  o.rmsprop_alpha = r.real("rmsprop_alpha", o.rmsprop_alpha, 0.0, 1.0);
  o.optimizer_eps = r.real("optimizer_eps", o.optimizer_eps, 0.0, 1.0, true);
  o.agents = static_cast<int>(r.integer("agents", o.agents, 1, 1024));
  o.total_updates = r.integer("total_updates", o.total_updates, 1, common::kMaxCount);
  o.max_staleness = static_cast<int>(r.integer("max_staleness", o.max_staleness, 0, 1 << 30));
  o.checkpoint_every = r.integer("checkpoint_every", o.checkpoint_every, 1, common::kMaxCount);
  o.snapshot_every = r.integer("snapshot_every", o.snapshot_every, 0, common::kMaxCount);
  o.log_every = r.integer("log_every", o.log_every, 1, common::kMaxCount);
  o.stats_window = static_cast<int>(r.integer("stats_window", o.stats_window, 1, 1 << 20));
  o.agent_silence_s = r.real("agent_silence_s", o.agent_silence_s, 0.0, 1e7, true);
  o.idle_timeout_s = r.real("idle_timeout_s", o.idle_timeout_s, 0.0, 1e7, true);
  o.reply_timeout_s = r.real("reply_timeout_s", o.reply_timeout_s, 0.0, 1e6, true);  // ZeroMQ's send timeout: an int of ms
  o.poll_interval_ms = r.real("poll_interval_ms", o.poll_interval_ms, 1.0, 60000.0);
  o.seed = static_cast<std::uint64_t>(r.integer("seed", static_cast<std::int64_t>(o.seed), 0, common::kMaxSeed));
  o.init_policy = r.text("init_policy", o.init_policy);
  if (r.has("init_policy")) {
    // Relative to the config's folder, as every other file a config names (surrogate:, experiments:).
    std::filesystem::path file = o.init_policy;
    if (file.is_relative()) file = std::filesystem::path(r.file()).parent_path() / file;
    o.init_policy = file.lexically_normal().string();
    if (!std::filesystem::is_regular_file(o.init_policy)) r.fail("init_policy", o.init_policy + ": no such file");
  }
  r.reject_unknown_keys();
  if (resolved) *resolved = r.resolved();
  return o;
}

double learning_rate_at(const A3cOptions& options, std::int64_t update) {
  if (options.lr_decay == LearningRateDecay::None) return options.learning_rate;
  const double left = 1.0 - static_cast<double>(update) / static_cast<double>(options.total_updates);
  return options.learning_rate * std::clamp(left, 0.0, 1.0);
}

void validate(const A3cOptions& o) {
  const auto bad = [](const std::string& field, const std::string& expected) {
    throw std::invalid_argument("a3c options: " + field + ": expected " + expected);
  };
  if (o.hidden.empty()) bad("hidden", "at least one layer");
  for (int h : o.hidden)
    if (h < 1) bad("hidden", "positive layer widths");
  if (o.n_steps < 1) bad("n_steps", "an integer >= 1");
  if (o.envs_per_agent < 1) bad("envs_per_agent", "an integer >= 1");
  try {
    find_learner(o.algorithm);
  } catch (const std::invalid_argument& e) {
    bad("algorithm", std::string("a learner of the table: ") + e.what());
  }
  if (!(o.gamma >= 0 && o.gamma <= 1)) bad("gamma", "a number in [0, 1]");
  if (o.ppo_rollout_steps < 1 || o.ppo_epochs < 1 || o.ppo_minibatch < 1) bad("ppo_rollout_steps, ppo_epochs, ppo_minibatch", "integers >= 1");
  if (!(o.ppo_clip > 0 && o.ppo_clip <= 1)) bad("ppo_clip", "a number in (0, 1]");
  if (!(o.gae_lambda >= 0 && o.gae_lambda <= 1)) bad("gae_lambda", "a number in [0, 1]");
  if (!(o.entropy_coef >= 0)) bad("entropy_coef", "a number >= 0");
  if (!(o.value_loss_coef >= 0)) bad("value_loss_coef", "a number >= 0");
  if (!(o.max_grad_norm >= 0)) bad("max_grad_norm", "a number >= 0");
  if (!(o.learning_rate > 0)) bad("learning_rate", "a number > 0");
  if (o.agents < 1) bad("agents", "an integer >= 1");
  if (o.total_updates < 1) bad("total_updates", "an integer >= 1");
  if (o.max_staleness < 0) bad("max_staleness", "an integer >= 0");
  if (o.checkpoint_every < 1) bad("checkpoint_every", "an integer >= 1");
  if (o.log_every < 1) bad("log_every", "an integer >= 1");
  if (!(o.agent_silence_s > 0 && o.idle_timeout_s > 0 && o.reply_timeout_s > 0 && o.poll_interval_ms > 0))
    bad("timeouts", "positive durations");
}

}  // namespace agents
