// K barrier environments stepped together (Gymnasium's VectorEnv, EnvPool's batched interface, in
// C++): one call resets or steps all of them, with the observations of all K in one contiguous
// float buffer, so that a learner acts on them with one batched network forward per step.
//
// Auto-reset (Gymnasium's "same-step" mode, as Stable-Baselines3's VecEnv): when env j's episode
// ends at a step (terminated or truncated), that step's result still reports the episode's reward,
// flags and info, its last observation goes to final_observations row j, and the env is reset at
// once: observations row j is already the next episode's first observation (the info of that
// reset is not reported). No step is spent on the reset, and no env waits for the others.
//
// Seeding, and what it guarantees: reset(seeds) gives env j its own episode stream seeds[j]; env
// j's e-th episode (e = 0, 1, ... counted by the env itself, auto-resets included) starts with
// BarrierEnv::reset(episode_seed(seeds[j], e)) = reset(splitmix64(seeds[j] + e)), the same rule as
// the single-environment runner (agents/rollout.hpp). So env j's episodes depend only on seeds[j]
// and on the actions it is given, never on K or on the other envs: with stream_seeds(base, K),
// whose entry j is base + j * 2^32 for any K, the episode e of env j is the same episode whatever
// K is (tested), and no two (env, episode) pairs with fewer than 2^32 episodes per env share a seed.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "orchestra/barrier_env.hpp"

namespace orchestra {

// The seed of episode `episode` of a stream: splitmix64(stream + episode).
std::uint64_t episode_seed(std::uint64_t stream, std::uint64_t episode);

// K stream seeds from one base seed: entry j is base + j * 2^32, whatever K (so env j's episodes
// do not depend on how many envs run beside it).
std::vector<std::uint64_t> stream_seeds(std::uint64_t base, int count);

struct VectorReset {
  std::vector<float> observations;  // [K x observation_size], row j env j's first observation
  std::vector<StepInfo> infos;      // [K]
};

struct VectorStep {
  std::vector<float> observations;        // [K x observation_size]: where an episode ended, the next one's first
  std::vector<double> rewards;            // [K]
  std::vector<std::uint8_t> terminated;   // [K] 1: reached the target (bytes, not vector<bool>: contiguous)
  std::vector<std::uint8_t> truncated;    // [K] 1: ran out of its budget
  std::vector<StepInfo> infos;            // [K] the step's info, of the episode that ran it
  std::vector<float> final_observations;  // [K x observation_size]: the ended episode's last observation; zeros elsewhere
  std::vector<std::uint64_t> episodes;    // [K] the index (per env) of the episode this step belonged to
  bool done(int env) const { return terminated[static_cast<std::size_t>(env)] || truncated[static_cast<std::size_t>(env)]; }
};

class VectorBarrierEnv {
 public:
  virtual ~VectorBarrierEnv() = default;
  virtual int num_envs() const = 0;
  virtual int observation_size() const = 0;
  virtual int max_move() const = 0;  // every env's BarrierEnv::max_move()
  // Starts episode 0 of every env; seeds.size() must be num_envs() (std::invalid_argument otherwise).
  virtual VectorReset reset(const std::vector<std::uint64_t>& seeds) = 0;
  // actions[j] in [-max_move(), +max_move()] for env j (BarrierEnv::step's); num_envs() of them. Throws
  // std::invalid_argument for a wrong count, a bad action, or a step before reset.
  virtual VectorStep step(const std::vector<int>& actions) = 0;
  // Episodes env j has started since reset (the running one included).
  virtual std::uint64_t episodes_started(int env) const = 0;
};

// The generic implementation over K BarrierEnvs (the real local-SGD environment, the toy one, or
// any other), stepped one after the other on the calling thread: the agents' processes are the
// parallelism. Environments whose K steps are cheaper taken together (the real environment's
// merged training, orchestra/rl/merged_barrier_env_vector.hpp) override step_envs and keep the
// auto-reset and the seed streams of this class.
class BarrierEnvVector : public VectorBarrierEnv {
 public:
  // Owns the environments. Throws std::invalid_argument for none, a null one, or ones whose
  // observation sizes or moves differ.
  explicit BarrierEnvVector(std::vector<std::unique_ptr<BarrierEnv>> envs);
  // Borrows them: they must outlive this object.
  explicit BarrierEnvVector(std::vector<BarrierEnv*> envs);

  int num_envs() const override { return static_cast<int>(envs_.size()); }
  int observation_size() const override { return observation_size_; }
  int max_move() const override { return max_move_; }
  VectorReset reset(const std::vector<std::uint64_t>& seeds) override;
  VectorStep step(const std::vector<int>& actions) override;
  std::uint64_t episodes_started(int env) const override { return episodes_.at(static_cast<std::size_t>(env)); }

 protected:
  // One step of every environment, actions[j] for environment j, each with an episode running;
  // results in environment order. By default one after the other.
  virtual std::vector<StepResult> step_envs(const std::vector<int>& actions);

 private:
  void check_envs();
  // Starts env j's next episode; writes its first observation to `row`.
  StepInfo start_episode(std::size_t j, float* row);

  std::vector<std::unique_ptr<BarrierEnv>> owned_;
  std::vector<BarrierEnv*> envs_;
  int observation_size_ = 0;
  int max_move_ = 1;
  std::vector<std::uint64_t> streams_;
  std::vector<std::uint64_t> episodes_;  // started per env
};

}  // namespace orchestra
