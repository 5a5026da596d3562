// Experience from K environments at once (orchestra/vector_barrier_env.hpp) for a vectorized
// agent: every step is one batched forward of the acting network (acting_network.hpp) over the K
// observations, then K actions drawn from pi(.|s) in env order from one generator, then one vector
// step. Episodes restart as they end (auto-reset), so no environment waits for another.
//
// A3C's segments: each environment builds its own rollout exactly as RolloutRunner::collect does
// (up to n_steps steps, never across an episode's end, bootstrapped unless the episode ended), and
// collect_segments returns once at least `count` of them are complete, the unfinished ones carrying
// over to the next call. A segment can thus span a parameter update of the agent's network: its
// later steps are acted by newer parameters than its first, a lag of the kind asynchronous A3C
// already has between its agents (the gradient is always taken at the current parameters).
//
// PPO's rollouts: `steps` steps of every environment (Stable-Baselines3's n_steps per env), one
// PpoRollout per environment with its own done flags and bootstrap state.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "agents/acting_network.hpp"
#include "agents/rollout.hpp"
#include "orchestra/vector_barrier_env.hpp"

namespace agents {

class VectorRolloutRunner {
 public:
  // Resets `env` with one episode stream per environment (orchestra::stream_seeds).
  VectorRolloutRunner(orchestra::VectorBarrierEnv& env, const std::vector<std::uint64_t>& seeds);

  // Steps every environment until at least `count` segments of up to n_steps steps are complete
  // (a step may complete several at once, so a few more than `count` can come back).
  std::vector<Rollout> collect_segments(const ActingNetwork& net, int n_steps, int count, std::mt19937_64& rng);
  // Exactly `steps` steps of every environment; rollout j is environment j's.
  std::vector<PpoRollout> collect_steps(const ActingNetwork& net, int steps, std::mt19937_64& rng);

  int num_envs() const { return env_.num_envs(); }
  std::int64_t steps() const { return steps_; }  // environment steps, all environments together

 private:
  // One batched act and vector step: fills actions_/acting_ and returns the step.
  orchestra::VectorStep advance(const ActingNetwork& net, std::mt19937_64& rng);

  orchestra::VectorBarrierEnv& env_;
  std::size_t observation_size_;
  std::vector<float> observations_;        // [K x observation_size]: every env's current state
  std::vector<EpisodeStats> running_;      // per env, the episode being played
  std::vector<Rollout> partial_;           // per env, A3C's unfinished segment
  std::vector<int> action_indices_;        // the last step's, per env
  ActingOutput acting_;                    // the last step's pi and V, per env
  std::int64_t steps_ = 0;
};

}  // namespace agents
