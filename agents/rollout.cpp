#include "agents/rollout.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "agents/policy_file.hpp"
#include "agents/ppo_loss.hpp"
#include "agents/returns.hpp"
#include "common/splitmix64.hpp"

namespace agents {

std::uint64_t splitmix64(std::uint64_t x) { return common::splitmix64(x); }

void add_step(EpisodeStats& stats, double reward, const orchestra::StepInfo& info) {
  stats.total_reward += reward;
  stats.epochs = info.epoch;
  stats.clock_ms = info.clock_ms;
  if (info.reached_target && !stats.reached_target) {
    stats.reached_target = true;
    stats.time_to_target_ms = info.clock_ms;
  }
}

RolloutRunner::RolloutRunner(orchestra::BarrierEnv& env, std::uint64_t base_seed, std::uint64_t first_episode)
    : env_(env), base_seed_(base_seed), episode_(first_episode) {}

RolloutRunner::Taken RolloutRunner::take_step(ActorCritic& net, std::mt19937_64& rng, std::vector<EpisodeStats>& finished) {
  if (!running_) {
    observation_ = env_.reset(splitmix64(base_seed_ + episode_)).observation;
    ++episode_;
    current_ = EpisodeStats{};
    running_ = true;
  }
  Taken t;
  t.observation = observation_;
  const auto size = static_cast<std::int64_t>(observation_.size());
  std::vector<double> probs;
  {
    // Only the policy's forward runs without autograd: the environment's step trains a model.
    torch::NoGradGuard no_grad;
    const torch::Tensor obs = torch::from_blob(observation_.data(), {1, size}, torch::kFloat);
    const ActorCriticOutput out = net->forward(obs);
    const torch::Tensor p = torch::softmax(out.logits, -1).to(torch::kDouble).contiguous();
    probs.assign(p.data_ptr<double>(), p.data_ptr<double>() + p.numel());
    t.value = out.value.item<double>();
  }
  t.action_index = sample_index(probs, rng);
  t.log_prob = std::log(std::max(probs[static_cast<std::size_t>(t.action_index)], 1e-300));
  if (static_cast<int>(probs.size()) != orchestra::num_barrier_actions(env_.max_move()))
    throw std::invalid_argument("rollout: the network has " + std::to_string(probs.size()) + " actions, the environment " +
                                std::to_string(orchestra::num_barrier_actions(env_.max_move())));
  t.step = env_.step(orchestra::action_from_index(t.action_index, env_.max_move()));
  ++steps_;
  observation_ = t.step.observation;
  add_step(current_, t.step.reward, t.step.info);
  if (t.step.terminated || t.step.truncated) {
    finished.push_back(current_);
    running_ = false;
    t.episode_over = true;
  }
  return t;
}

Rollout RolloutRunner::collect(ActorCritic& net, int n_steps, std::mt19937_64& rng) {
  if (n_steps < 1) throw std::invalid_argument("rollout: n_steps must be >= 1");
  Rollout r;
  for (int i = 0; i < n_steps; ++i) {
    Taken t = take_step(net, rng, r.finished);
    r.observations.push_back(std::move(t.observation));
    r.action_indices.push_back(t.action_index);
    r.rewards.push_back(t.step.reward);
    if (t.episode_over) {
      // The budget ends an episode for good (orchestra/rl/local_sgd_barrier_env.hpp): no bootstrap.
      r.terminated = true;
      break;
    }
  }
  r.next_observation = observation_;
  return r;
}

PpoRollout RolloutRunner::collect_steps(ActorCritic& net, int steps, std::mt19937_64& rng) {
  if (steps < 1) throw std::invalid_argument("rollout: steps must be >= 1");
  PpoRollout r;
  for (int i = 0; i < steps; ++i) {
    Taken t = take_step(net, rng, r.finished);
    r.observations.push_back(std::move(t.observation));
    r.action_indices.push_back(t.action_index);
    r.old_log_probs.push_back(t.log_prob);
    r.values.push_back(t.value);
    r.rewards.push_back(t.step.reward);
    r.dones.push_back(t.episode_over);
  }
  r.next_observation = observation_;
  return r;
}

namespace {

// Backpropagates a loss (A3C's or PPO's: total, policy, value, entropy) through `net`, clips, and
// returns the flat gradient the parameter server applies.
template <typename Loss>
GradientResult gradient_of(ActorCritic& net, const Loss& loss, const A3cOptions& options) {
  loss.total.backward();
  GradientResult g;
  g.norm_before_clip = clip_gradients(*net, options.max_grad_norm);
  g.gradient = flat_gradients(net);
  g.policy_loss = loss.policy;
  g.value_loss = loss.value;
  g.entropy = loss.entropy;
  return g;
}

}  // namespace

GradientResult rollout_gradient(ActorCritic& net, const Rollout& rollout, const A3cOptions& options) {
  const auto steps = static_cast<std::int64_t>(rollout.observations.size());
  if (steps == 0) throw std::invalid_argument("rollout gradient: empty rollout");
  const auto size = static_cast<std::int64_t>(rollout.next_observation.size());
  std::vector<float> stacked;
  stacked.reserve(static_cast<std::size_t>((steps + 1) * size));
  for (const auto& o : rollout.observations) {
    if (static_cast<std::int64_t>(o.size()) != size) throw std::invalid_argument("rollout gradient: observations differ in size");
    stacked.insert(stacked.end(), o.begin(), o.end());
  }
  stacked.insert(stacked.end(), rollout.next_observation.begin(), rollout.next_observation.end());
  const torch::Tensor all = torch::from_blob(stacked.data(), {steps + 1, size}, torch::kFloat);

  // The loss needs autograd whatever the caller's mode.
  torch::AutoGradMode autograd(true);
  net->zero_grad();
  const ActorCriticOutput out = net->forward(all);
  const torch::Tensor values = out.value.detach().to(torch::kDouble).contiguous();
  const double* v = values.data_ptr<double>();
  const double bootstrap = rollout.terminated ? 0.0 : v[steps];  // Alg. S3: R = 0 for terminal s_t
  const NStepTargets targets =
      n_step_targets(rollout.rewards, std::vector<double>(v, v + steps), bootstrap, options.gamma);

  const ActorCriticOutput head{out.logits.narrow(0, 0, steps), out.value.narrow(0, 0, steps)};
  return gradient_of(net, a3c_loss(head, rollout.action_indices, targets.returns, targets.advantages, options), options);
}

NStepTargets ppo_targets(ActorCritic& net, const PpoRollout& rollout, const A3cOptions& options) {
  double bootstrap = 0;
  if (!rollout.dones.empty() && !rollout.dones.back()) {
    torch::NoGradGuard no_grad;
    std::vector<float> next = rollout.next_observation;
    bootstrap = net->forward(torch::from_blob(next.data(), {1, static_cast<std::int64_t>(next.size())}, torch::kFloat)).value.item<double>();
  }
  NStepTargets t = gae_targets(rollout.rewards, rollout.values, rollout.dones, bootstrap, options.gamma, options.gae_lambda);
  normalize_advantages(t.advantages);
  return t;
}

void normalize_advantages(std::vector<double>& advantages) {
  // One scale for the policy's step whatever the reward's units.
  double mean = 0, square = 0;
  for (double a : advantages) mean += a;
  mean /= static_cast<double>(advantages.size());
  for (double a : advantages) square += (a - mean) * (a - mean);
  const double sd = std::sqrt(square / static_cast<double>(advantages.size()));
  for (double& a : advantages) a = (a - mean) / (sd + 1e-8);
}

GradientResult ppo_gradient(ActorCritic& net, const PpoRollout& rollout, const NStepTargets& targets, const std::vector<std::size_t>& indices,
                            const A3cOptions& options) {
  if (indices.empty()) throw std::invalid_argument("ppo gradient: empty minibatch");
  const auto size = static_cast<std::int64_t>(rollout.next_observation.size());
  std::vector<float> stacked;
  std::vector<int> actions;
  std::vector<double> old_log_probs, advantages, returns;
  for (std::size_t i : indices) {
    if (i >= rollout.observations.size()) throw std::invalid_argument("ppo gradient: sample index out of range");
    stacked.insert(stacked.end(), rollout.observations[i].begin(), rollout.observations[i].end());
    actions.push_back(rollout.action_indices[i]);
    old_log_probs.push_back(rollout.old_log_probs[i]);
    advantages.push_back(targets.advantages[i]);
    returns.push_back(targets.returns[i]);
  }
  torch::AutoGradMode autograd(true);
  net->zero_grad();
  const ActorCriticOutput out = net->forward(torch::from_blob(stacked.data(), {static_cast<std::int64_t>(indices.size()), size}, torch::kFloat));
  return gradient_of(net, ppo_loss(out, actions, old_log_probs, advantages, returns, options), options);
}

}  // namespace agents
