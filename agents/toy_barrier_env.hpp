// A small deterministic BarrierEnv for tests, benchmarks of the transport and smoke runs of
// `orchestra train` (`a3c_environment: toy`), the way CartPole serves to check an RL algorithm
// before it meets a costly environment. No libtorch training inside: one step costs microseconds.
//
// Dynamics: the barrier is an integer level b; an unknown best level b* in [2, 12] is drawn from the
// seed, and b starts at b* + offset, offset drawn from [-6, 6]. An epoch takes 1 + 0.25 |b - b*|
// (+ up to 2% seeded noise) time units and adds 0.1 accuracy; the target (1.0) is reached after 10
// epochs, so the time to target is smallest when the agent walks to b* at once and stays. Reward is
// Orchestra Eq. 1's sign rule on p = 1 / epoch time against the best p so far (0 on ties within
// 1e-9, and on the first epoch). Observation (kObservationSize): (b - b*) / 12, b / 24, epochs / 10,
// last epoch time / 5, zeros.
#pragma once

#include <cstdint>
#include <random>

#include "orchestra/barrier_env.hpp"

namespace agents {

class ToyBarrierEnv final : public orchestra::BarrierEnv {
 public:
  static constexpr int kObservationSize = 8;
  static constexpr int kMaxEpochs = 30;

  // step_delay_ms: each step sleeps this long, standing in for an epoch of real training (process
  // tests need agents slow enough to be killed mid-run).
  explicit ToyBarrierEnv(double step_delay_ms = 0) : step_delay_ms_(step_delay_ms) {}

  orchestra::ResetResult reset(std::uint64_t seed) override;
  orchestra::StepResult step(int action) override;
  int observation_size() const override { return kObservationSize; }

 private:
  std::vector<float> observe() const;

  double step_delay_ms_ = 0;
  std::mt19937_64 rng_;
  int level_ = 0;
  int best_level_ = 0;
  int epochs_ = 0;
  double clock_ = 0;
  double accuracy_ = 0;
  double last_epoch_ = 0;
  double best_rate_ = 0;
  bool done_ = true;
};

}  // namespace agents
