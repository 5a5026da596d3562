// Hyperparameters of A3C training (Mnih et al. 2016, "Asynchronous Methods for Deep Reinforcement
// Learning", Alg. S3) and of its transport, in one struct with the default beside each field. Read
// from the `a3c:` section of a training config (configs/a3c_train.yaml) by read_a3c_options, whose
// errors name file:line and the key, like the experiment configs'.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace agents {

enum class OptimizerKind { Adam, RmsProp };

// How the server's learning rate moves over training. Mnih et al. 2016 (supplement, "Experimental
// setup") anneal it linearly to 0 over the training run, so that the last updates are small and
// the final network is not one noisy step away from a different policy; none keeps it constant.
enum class LearningRateDecay { None, Linear };

// The most environments one agent steps as one (a3c.envs_per_agent).
inline constexpr int kMaxEnvsPerAgent = 1 << 16;

struct A3cOptions {
  // The learner the agents run: a row of the learner table (agents/learner.hpp, learner_registry.cpp;
  // `orchestra train --help` lists them). a3c (Mnih et al. 2016, the paper's): one gradient per
  // rollout of up to n_steps steps. ppo (Schulman et al. 2017, clipped surrogate with GAE):
  // rollouts of ppo_rollout_steps steps, each used for ppo_epochs passes of minibatch gradients,
  // every one pushed to the same parameter server: an environment step of real training costs
  // seconds, and PPO learns several times from each.
  std::string algorithm = "a3c";
  // Environments per agent, stepped as one (vector_rollout.hpp) with one batched network forward
  // per step. 1 (the default) is the agent of one environment. With K > 1 an A3C push carries the
  // sum of K rollouts' gradients (one optimizer step per K rollouts: episodes = K x updates with
  // whole-episode returns), and a PPO rollout is ppo_rollout_steps steps of each environment.
  // Each environment is a full copy (the local-SGD environment loads its data set per copy), so
  // K is for cheap environments; agents stay the parallelism across cores.
  int envs_per_agent = 1;
  // Network: shared trunk of tanh layers, then a policy head (3 actions) and a value head.
  std::vector<int> hidden = {64, 64};
  // Rollout length t_max: gradients are pushed every n_steps environment steps or at episode end
  // (Mnih et al. use t_max = 5; one step here is one training epoch, so rollouts are short).
  int n_steps = 5;
  double gamma = 0.99;             // discount of the n-step return (and of PPO's GAE)
  // PPO (algorithm: ppo): steps per rollout (across episodes), passes over it, minibatch size,
  // the clip epsilon of the surrogate and GAE's lambda (Schulman et al. 2016).
  int ppo_rollout_steps = 256;
  int ppo_epochs = 4;
  int ppo_minibatch = 64;
  double ppo_clip = 0.2;
  double gae_lambda = 0.95;
  double entropy_coef = 0.01;      // beta of the entropy bonus (Mnih et al.: 0.01)
  double value_loss_coef = 0.5;    // weight of the critic's squared error in the shared loss
  double max_grad_norm = 0.5;      // global L2 clip of each pushed gradient, enforced by the server too (0: none; the server still bounds norms at 1e9)
  OptimizerKind optimizer = OptimizerKind::Adam;  // the server's optimizer; rmsprop as in the paper
  double learning_rate = 7e-4;
  LearningRateDecay lr_decay = LearningRateDecay::None;  // linear: learning_rate x (1 - update / total_updates)
  double rmsprop_alpha = 0.99;     // RMSProp decay (Mnih et al.: 0.99)
  double optimizer_eps = 1e-5;

  int agents = 2;                  // K agent processes started by `orchestra train`
  std::int64_t total_updates = 2000;  // optimizer steps on the server, then the policy is saved
  // A gradient computed on parameters more than this many updates old is dropped and counted
  // (moolib's syncId check); async A3C tolerates some staleness, so this is a bound, not 0.
  int max_staleness = 32;
  std::int64_t checkpoint_every = 100;  // updates between atomic checkpoints (and one at the end)
  // Updates between snapshots of the policy, DIR/snapshots/policy-<update>.pt, to evaluate how the
  // controller learned (orchestra evaluate takes several); 0: none.
  std::int64_t snapshot_every = 0;
  std::int64_t log_every = 10;          // updates between rows of train.csv
  int stats_window = 20;                // episodes averaged in train.csv's mean columns

  // Bounded waits (gloo's BarrierOptions::setTimeout): nothing blocks forever.
  double agent_silence_s = 120;    // server: an agent quiet this long is reported and left behind
  double idle_timeout_s = 600;     // server: no message from any agent this long ends training
  double reply_timeout_s = 60;     // agent: the server's reply to a push; then the agent gives up
  double poll_interval_ms = 200;   // server: receive timeout per poll (checks children, silence)

  std::uint64_t seed = 1;          // network init, the server's seed stream for the agents
  // Fine-tuning: the server starts from this policy file's network (agents/policy_file.hpp; the
  // path as given, like orchestra-a3c's policy:) instead of a fresh one drawn from `seed`; its
  // observation size and hidden widths must be the training's. Empty: a fresh network. The
  // optimizer starts fresh, and --resume continues from the checkpoint, not from this file.
  std::string init_policy;
};

// Reads `node` (the a3c: mapping; null = all defaults). Unknown keys and bad values throw
// common::ConfigError "file:line: a3c.key: expected ..., got ...".
// `resolved`, when given, receives the options as read, defaults filled in (what a resume compares).
A3cOptions read_a3c_options(const YAML::Node& node, const std::string& file, const std::string& path = "a3c",
                            nlohmann::json* resolved = nullptr);

// The rate of the optimizer step that makes update number `update` + 1 (0-based: the first step
// is update 0 and uses the full learning_rate).
double learning_rate_at(const A3cOptions& options, std::int64_t update);

// Throws std::invalid_argument naming the field when an option is out of range.
void validate(const A3cOptions& options);

}  // namespace agents
