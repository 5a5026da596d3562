// PPO's learner (Schulman et al. 2017): a rollout, then ppo_epochs shuffled passes of minibatch
// gradients over it, each pushed and answered with the server's newest parameters (the clip bounds
// how far they move from the collecting policy, whose log-probabilities the rollout holds).
//
// One environment: exactly the agent of before the learner table (ppo_rollout_steps steps).
// K environments: ppo_rollout_steps steps of each, stepped as one (vector_rollout.hpp, Stable-
// Baselines3's n_steps per env), GAE per environment, advantages normalized over all K x steps
// samples, and the same minibatch passes over them.
#include <algorithm>
#include <memory>
#include <random>

#include "agents/acting_network.hpp"
#include "agents/learner.hpp"
#include "agents/vector_rollout.hpp"

namespace agents {
namespace {

// ppo_epochs shuffled passes of minibatches over `rollout`; false when a push said stop.
bool minibatch_passes(ActorCritic& net, const PpoRollout& rollout, const NStepTargets& targets, const A3cOptions& o,
                      std::mt19937_64& rng, LearnerLink& link) {
  std::vector<std::size_t> order(rollout.observations.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (int epoch = 0; epoch < o.ppo_epochs; ++epoch) {
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[static_cast<std::size_t>(rng() % i)]);
    for (std::size_t start = 0; start < order.size(); start += static_cast<std::size_t>(o.ppo_minibatch)) {
      const std::size_t end = std::min(order.size(), start + static_cast<std::size_t>(o.ppo_minibatch));
      const std::vector<std::size_t> batch(order.begin() + static_cast<std::ptrdiff_t>(start), order.begin() + static_cast<std::ptrdiff_t>(end));
      if (!link.push(ppo_gradient(net, rollout, targets, batch, o))) return false;
    }
  }
  return true;
}

class SingleEnvPpo final : public Learner {
 public:
  explicit SingleEnvPpo(const LearnerSetup& s)
      : options_(s.options), rng_(splitmix64(s.seed)), runner_(*s.envs.front(), splitmix64(s.seed + 1)) {}

  void learn(ActorCritic& net, LearnerLink& link) override {
    while (true) {
      const PpoRollout rollout = runner_.collect_steps(net, options_.ppo_rollout_steps, rng_);
      link.report(rollout.finished);
      const NStepTargets targets = ppo_targets(net, rollout, options_);
      if (!minibatch_passes(net, rollout, targets, options_, rng_, link)) return;
    }
  }
  std::int64_t env_steps() const override { return runner_.steps(); }

 private:
  A3cOptions options_;
  std::mt19937_64 rng_;
  RolloutRunner runner_;
};

class VectorPpo final : public Learner {
 public:
  explicit VectorPpo(const LearnerSetup& s)
      : options_(s.options),
        rng_(splitmix64(s.seed)),
        owned_(s.vector ? nullptr : std::make_unique<orchestra::BarrierEnvVector>(s.envs)),
        env_(s.vector ? *s.vector : *owned_),
        runner_(env_, orchestra::stream_seeds(splitmix64(s.seed + 1), env_.num_envs())) {}

  void learn(ActorCritic& net, LearnerLink& link) override {
    ActingNetwork acting(net->spec());
    ActingOutput bootstrap;
    while (true) {
      acting.load(net);
      const std::vector<PpoRollout> rollouts = runner_.collect_steps(acting, options_.ppo_rollout_steps, rng_);
      // One rollout of every environment's samples, GAE computed per environment (no value flows
      // from one environment's steps into another's).
      PpoRollout all;
      NStepTargets targets;
      std::vector<EpisodeStats> finished;
      for (const PpoRollout& r : rollouts) {
        acting.forward(r.next_observation.data(), 1, bootstrap);
        const NStepTargets t = gae_targets(r.rewards, r.values, r.dones, bootstrap.values[0], options_.gamma, options_.gae_lambda);
        all.observations.insert(all.observations.end(), r.observations.begin(), r.observations.end());
        all.action_indices.insert(all.action_indices.end(), r.action_indices.begin(), r.action_indices.end());
        all.old_log_probs.insert(all.old_log_probs.end(), r.old_log_probs.begin(), r.old_log_probs.end());
        targets.returns.insert(targets.returns.end(), t.returns.begin(), t.returns.end());
        targets.advantages.insert(targets.advantages.end(), t.advantages.begin(), t.advantages.end());
        finished.insert(finished.end(), r.finished.begin(), r.finished.end());
      }
      all.next_observation = rollouts.front().next_observation;  // ppo_gradient reads only its width
      link.report(finished);
      normalize_advantages(targets.advantages);  // over every sample, as ppo_targets over one rollout
      if (!minibatch_passes(net, all, targets, options_, rng_, link)) return;
    }
  }
  std::int64_t env_steps() const override { return runner_.steps(); }

 private:
  A3cOptions options_;
  std::mt19937_64 rng_;
  std::unique_ptr<orchestra::BarrierEnvVector> owned_;  // the generic vector over `envs`, unless given one
  orchestra::VectorBarrierEnv& env_;
  VectorRolloutRunner runner_;
};

}  // namespace

std::unique_ptr<Learner> make_ppo_learner(const LearnerSetup& setup) {
  if (setup.vector == nullptr && setup.envs.size() == 1) return std::make_unique<SingleEnvPpo>(setup);
  return std::make_unique<VectorPpo>(setup);
}

}  // namespace agents
