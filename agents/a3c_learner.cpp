// A3C's learner (Mnih et al. 2016, Alg. S3): play up to n_steps steps with the current policy,
// push the rollout's gradient, take the server's parameters as the next policy.
//
// One environment (a3c.envs_per_agent 1, the default): exactly the agent of before the learner
// table, acting through libtorch one state at a time, one push per rollout.
// K environments: stepped as one (vector_rollout.hpp), acting with the plain-C++ forward
// (acting_network.hpp) on all K states at once, and one push per K completed rollouts carrying the
// sum of their gradients (batched_gradient.hpp): K times fewer round trips and optimizer steps for
// the same experience.
#include <memory>
#include <random>

#include "agents/acting_network.hpp"
#include "agents/batched_gradient.hpp"
#include "agents/learner.hpp"
#include "agents/vector_rollout.hpp"

namespace agents {
namespace {

class SingleEnvA3c final : public Learner {
 public:
  explicit SingleEnvA3c(const LearnerSetup& s)
      : options_(s.options), rng_(splitmix64(s.seed)), runner_(*s.envs.front(), splitmix64(s.seed + 1)) {}

  void learn(ActorCritic& net, LearnerLink& link) override {
    while (true) {
      const Rollout rollout = runner_.collect(net, options_.n_steps, rng_);
      link.report(rollout.finished);
      if (!link.push(rollout_gradient(net, rollout, options_))) return;
    }
  }
  std::int64_t env_steps() const override { return runner_.steps(); }

 private:
  A3cOptions options_;
  std::mt19937_64 rng_;
  RolloutRunner runner_;
};

class VectorA3c final : public Learner {
 public:
  explicit VectorA3c(const LearnerSetup& s)
      : options_(s.options),
        rng_(splitmix64(s.seed)),
        owned_(s.vector ? nullptr : std::make_unique<orchestra::BarrierEnvVector>(s.envs)),
        env_(s.vector ? *s.vector : *owned_),
        // Env j's episode stream is the single-env runner's base + j 2^32: env 0 plays the episodes
        // a one-env agent of the same seed would.
        runner_(env_, orchestra::stream_seeds(splitmix64(s.seed + 1), env_.num_envs())) {}

  void learn(ActorCritic& net, LearnerLink& link) override {
    ActingNetwork acting(net->spec());
    while (true) {
      acting.load(net);
      const std::vector<Rollout> rollouts = runner_.collect_segments(acting, options_.n_steps, runner_.num_envs(), rng_);
      std::vector<EpisodeStats> finished;
      for (const Rollout& r : rollouts) finished.insert(finished.end(), r.finished.begin(), r.finished.end());
      link.report(finished);
      if (!link.push(batched_rollout_gradient(net, rollouts, options_))) return;
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

std::unique_ptr<Learner> make_a3c_learner(const LearnerSetup& setup) {
  if (setup.vector == nullptr && setup.envs.size() == 1) return std::make_unique<SingleEnvA3c>(setup);
  return std::make_unique<VectorA3c>(setup);
}

}  // namespace agents
