// Cluster A of the Orchestra paper as a fake cluster view, and a helper that feeds a barrier
// controller an epoch of measured rounds: shared by the controller's tests.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "env/barrier_policy.hpp"
#include "orchestra/barrier_controller.hpp"

namespace testing {

// Orchestra's cluster A (Table 1): one RTX 2080 Ti and three T4s, one GPU per server. Linear
// batch-time models with the T4 2.1x slower: at B = 64 the 2080 Ti takes 10 ms, a T4 21 ms.
inline double model_ms(int worker, int batch) {
  const double ti2080 = 2.0 + 0.125 * batch;
  return worker == 0 ? ti2080 : 2.1 * ti2080;
}

struct FakeCluster {
  env::ClusterView view;
  std::vector<int> probed_batch;
  int probes = 0;
};

// Probes are off by +50%, 0, -10%, +10%, 0 in turn: the median of five is the model's time (their
// mean would be 6% high).
inline std::shared_ptr<FakeCluster> cluster_a(std::vector<int> max_batch = {512, 512, 512, 512}) {
  auto fake = std::make_shared<FakeCluster>();
  fake->view.num_workers = 4;
  fake->view.global_batch = 256;
  fake->view.train_samples = 60000;
  fake->view.worker_names = {"2080ti", "t4-a", "t4-b", "t4-c"};
  fake->view.max_batch = std::move(max_batch);
  fake->view.server_of = {0, 1, 2, 3};
  fake->view.num_servers = 4;
  fake->probed_batch.assign(4, 0);
  FakeCluster* raw = fake.get();
  fake->view.probe_step_ms = [raw](int worker, int batch) {
    static constexpr double kNoise[] = {1.5, 1.0, 0.9, 1.1, 1.0};
    raw->probed_batch[static_cast<std::size_t>(worker)] = batch;
    return model_ms(worker, batch) * kNoise[raw->probes++ % 5];
  };
  fake->view.allreduce_ms = [](int) { return 5.0; };
  return fake;
}

inline env::PlanContext at(std::int64_t round, int epoch, bool epoch_start) { return {round, epoch, epoch_start, 0.0}; }

// One epoch in which worker n takes `rounds` rounds of tau_n full batches at batch_ms[n] each.
inline void feed_epoch(orchestra::BarrierController& c, const std::vector<double>& batch_ms, int rounds, int epoch,
                std::int64_t first_round, double accuracy = 0.5) {
  env::EpochReport e;
  e.epoch = epoch;
  e.rounds = rounds;
  e.accuracy = accuracy;
  e.loss = 1.0;
  e.worker_busy_ms.assign(4, 0);
  e.worker_idle_ms.assign(4, 0);
  e.worker_steps.assign(4, 0);
  for (int r = 0; r < rounds; ++r) {
    env::RoundReport report;
    report.round = first_round + r;
    report.epoch = epoch;
    report.comm_ms = 5;
    for (std::size_t n = 0; n < 4; ++n) {
      env::WorkerRoundStats w;
      w.batch_size = c.batch_sizes()[n];
      w.local_steps = c.local_steps()[n];
      w.samples = w.local_steps * w.batch_size;
      w.compute_ms = w.local_steps * batch_ms[n];
      report.workers.push_back(w);
      e.worker_busy_ms[n] += w.compute_ms;
      e.worker_steps[n] += w.local_steps;
    }
    c.observe_round(report);
    e.epoch_ms += 30;
  }
  c.observe_epoch(e);
}

}  // namespace testing
