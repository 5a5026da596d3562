#include "agents/toy_barrier_env.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace agents {
namespace {

int uniform_int(std::mt19937_64& rng, int lo, int hi) {  // portable: no std::uniform_int_distribution
  return lo + static_cast<int>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

}  // namespace

orchestra::ResetResult ToyBarrierEnv::reset(std::uint64_t seed) {
  rng_.seed(seed);
  best_level_ = uniform_int(rng_, 2, 12);
  level_ = std::max(1, best_level_ + uniform_int(rng_, -6, 6));
  epochs_ = 0;
  clock_ = 0;
  accuracy_ = 0;
  last_epoch_ = 0;
  best_rate_ = 0;
  done_ = false;
  orchestra::ResetResult r;
  r.observation = observe();
  r.info.barrier_ms = level_;
  return r;
}

orchestra::StepResult ToyBarrierEnv::step(int action) {
  if (action < -1 || action > 1) throw std::invalid_argument("toy env: action must be -1, 0 or +1, got " + std::to_string(action));
  if (done_) throw std::invalid_argument("toy env: step() after the episode ended; call reset()");
  if (step_delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(step_delay_ms_));
  level_ = std::max(1, level_ + action);
  const double noise = 1.0 + 0.02 * (static_cast<double>(rng_() >> 11) / 9007199254740992.0);
  last_epoch_ = (1.0 + 0.25 * std::abs(level_ - best_level_)) * noise;
  clock_ += last_epoch_;
  accuracy_ += 0.1;
  ++epochs_;

  orchestra::StepResult r;
  const double rate = 1.0 / last_epoch_;  // Eq. 1's p with a constant accuracy gain
  if (epochs_ > 1) r.reward = rate > best_rate_ + 1e-9 ? 1.0 : (rate < best_rate_ - 1e-9 ? -1.0 : 0.0);
  best_rate_ = std::max(best_rate_, rate);
  r.terminated = accuracy_ >= 1.0 - 1e-9;
  r.truncated = !r.terminated && epochs_ >= kMaxEpochs;
  done_ = r.terminated || r.truncated;
  r.observation = observe();
  r.info.epoch = epochs_;
  r.info.barrier_ms = level_;
  r.info.step_ms = last_epoch_;
  r.info.clock_ms = clock_;
  r.info.accuracy = accuracy_;
  r.info.reached_target = r.terminated;
  return r;
}

std::vector<float> ToyBarrierEnv::observe() const {
  std::vector<float> obs(kObservationSize, 0.0f);
  obs[0] = static_cast<float>(level_ - best_level_) / 12.0f;
  obs[1] = static_cast<float>(level_) / 24.0f;
  obs[2] = static_cast<float>(epochs_) / 10.0f;
  obs[3] = static_cast<float>(last_epoch_ / 5.0);
  return obs;
}

}  // namespace agents
