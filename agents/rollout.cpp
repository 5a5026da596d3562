#include "agents/rollout.hpp"

#include <stdexcept>

#include "agents/policy_file.hpp"
#include "agents/returns.hpp"

namespace agents {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

RolloutRunner::RolloutRunner(orchestra::BarrierEnv& env, std::uint64_t base_seed, std::uint64_t first_episode)
    : env_(env), base_seed_(base_seed), episode_(first_episode) {}

Rollout RolloutRunner::collect(ActorCritic& net, int n_steps, std::mt19937_64& rng) {
  if (n_steps < 1) throw std::invalid_argument("rollout: n_steps must be >= 1");
  if (!running_) {
    observation_ = env_.reset(splitmix64(base_seed_ + episode_)).observation;
    ++episode_;
    current_ = EpisodeStats{};
    running_ = true;
  }
  Rollout r;
  for (int i = 0; i < n_steps; ++i) {
    const auto size = static_cast<std::int64_t>(observation_.size());
    torch::Tensor p;
    {
      // Only the policy's forward runs without autograd: the environment's step trains a model.
      torch::NoGradGuard no_grad;
      const torch::Tensor obs = torch::from_blob(observation_.data(), {1, size}, torch::kFloat);
      p = torch::softmax(net->forward(obs).logits, -1).to(torch::kDouble).contiguous();
    }
    const int index = sample_index(std::vector<double>(p.data_ptr<double>(), p.data_ptr<double>() + p.numel()), rng);
    const orchestra::StepResult step = env_.step(static_cast<int>(orchestra::action_from_index(index)));
    ++steps_;
    r.observations.push_back(observation_);
    r.action_indices.push_back(index);
    r.rewards.push_back(step.reward);
    observation_ = step.observation;
    current_.total_reward += step.reward;
    current_.epochs = step.info.epoch;
    current_.clock_ms = step.info.clock_ms;
    if (step.info.reached_target && !current_.reached_target) {
      current_.reached_target = true;
      current_.time_to_target_ms = step.info.clock_ms;
    }
    if (step.terminated || step.truncated) {
      // The budget ends an episode for good (orchestra/rl/local_sgd_barrier_env.hpp): no bootstrap.
      r.terminated = true;
      r.finished.push_back(current_);
      running_ = false;
      break;
    }
  }
  r.next_observation = observation_;
  return r;
}

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
  const A3cLoss loss = a3c_loss(head, rollout.action_indices, targets.returns, targets.advantages, options);
  loss.total.backward();
  GradientResult g;
  g.norm_before_clip = clip_gradients(*net, options.max_grad_norm);
  g.gradient = flat_gradients(net);
  g.policy_loss = loss.policy;
  g.value_loss = loss.value;
  g.entropy = loss.entropy;
  return g;
}

}  // namespace agents
