// Timing-only simulation at cluster scale (issue 2 goal: at least one million worker-steps per
// second at 1,000 workers). No gradients: the clock, the noise, the barrier bookkeeping and the
// data accounting run for every worker step.
#include <chrono>
#include <cstdio>

#include "env/sim/simulation.hpp"

int main() {
  for (const int workers : {1000, 4000}) {
    env::SimulationSpec spec;
    for (int i = 0; i < workers; ++i) {
      env::WorkerSpec w;
      w.name = "w" + std::to_string(i);
      w.time_model = std::make_shared<env::BatchTimeModel>(std::vector<double>{5.0 + i % 7, 0.5 + 0.1 * (i % 5), 1e-4});
      w.noise = 0.05;
      w.server = i / 8;
      spec.cluster.workers.push_back(w);
    }
    for (int s = 0; s < (workers + 7) / 8; ++s) spec.cluster.server_names.push_back("s" + std::to_string(s));
    spec.global_batch = 32 * workers;
    spec.train_samples = static_cast<std::int64_t>(workers) * 32 * 200;  // 200 steps per worker per epoch
    spec.message_bytes = 100e6;
    for (const auto aggregation : {env::Aggregation::GradientAllReduce, env::Aggregation::ModelAverage}) {
      env::Simulation sim(spec, 1, nullptr);
      env::RoundPlan plan;
      plan.aggregation = aggregation;
      plan.workers.assign(static_cast<std::size_t>(workers), env::WorkerPlan{32, 8});
      std::int64_t steps = 0;
      const auto start = std::chrono::steady_clock::now();
      for (int epoch = 0; epoch < 3; ++epoch) {
        while (!sim.epoch_finished())
          for (const auto& w : sim.run_round(plan).workers) steps += w.local_steps;
        sim.finish_epoch();
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("%5d workers  %-18s %10lld worker-steps in %.3f s  = %.2f M worker-steps/s\n", workers,
                  aggregation == env::Aggregation::GradientAllReduce ? "gradient all-reduce" : "model averaging",
                  static_cast<long long>(steps), seconds, steps / seconds / 1e6);
    }
  }
  return 0;
}
