// The C++ side of bench/python/bench_env_step.py: the environment `orchestra train` makes from a
// training config (load_train_config, make_training_env(config, 0)), EPISODES episodes with seeds
// SEED, SEED + 1, ..., actions cycling through the moves +1, 0, -1, 0; every step() timed alone.
// Prints one line of JSON: steps, the seconds inside step() and inside reset(). The Python script
// runs the same episodes through orchestra.BarrierEnv and compares.
//
// usage: bench_env_step TRAIN_CONFIG EPISODES SEED
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include "env/train/compute_threads.hpp"
#include "experiments/runner/train_config.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: bench_env_step TRAIN_CONFIG EPISODES SEED\n";
    return 2;
  }
  try {
    env::set_compute_threads(1);  // as the Python environment's default
    const experiments::TrainConfig config = experiments::load_train_config(argv[1]);
    const auto env = experiments::make_training_env(config, 0);
    const int episodes = std::stoi(argv[2]);
    const std::uint64_t seed = std::stoull(argv[3]);
    const int moves[] = {1, 0, -1, 0};
    using Clock = std::chrono::steady_clock;
    double step_s = 0, reset_s = 0;
    std::int64_t steps = 0;
    for (int e = 0; e < episodes; ++e) {
      auto start = Clock::now();
      env->reset(seed + static_cast<std::uint64_t>(e));
      reset_s += std::chrono::duration<double>(Clock::now() - start).count();
      for (int k = 0;; ++k) {
        start = Clock::now();
        const orchestra::StepResult r = env->step(moves[k % 4]);
        step_s += std::chrono::duration<double>(Clock::now() - start).count();
        ++steps;
        if (r.terminated || r.truncated) break;
      }
    }
    std::printf("{\"steps\": %lld, \"step_s\": %.9f, \"reset_s\": %.9f}\n", static_cast<long long>(steps), step_s, reset_s);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_env_step: " << e.what() << "\n";
    return 1;
  }
}
