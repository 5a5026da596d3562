// The environment's training loop against a bare libtorch loop on the same model, batches and
// data (issue 2 goal: overhead at most 10%). Both run SSGD on 4 workers: each step takes the same
// four sub-batches of one shuffled order, weights each mean loss by B_i/B and applies one update.
// The environment adds the simulated clock, the data bookkeeping and the round reports.
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>

#include "env/train/local_sgd_env.hpp"
#include "env/train/compute_threads.hpp"

namespace {

using Clock = std::chrono::steady_clock;

env::EnvSpec cluster_spec() {
  env::EnvSpec spec;
  const double slopes[] = {0.59, 0.58, 0.60, 2.67};
  for (int i = 0; i < 4; ++i) {
    env::WorkerSpec w;
    w.name = "w" + std::to_string(i);
    w.time_model = std::make_shared<env::BatchTimeModel>(std::vector<double>{6.0, slopes[i]});
    w.noise = 0.02;
    spec.simulation.cluster.workers.push_back(w);
  }
  spec.simulation.cluster.server_names = {"s"};
  spec.simulation.global_batch = 512;
  spec.training.model.hidden = {256, 128};
  // The loop's overhead is measured against the same calls: one model, four sub-batches (the
  // batched replicas' single forward over the joined batch is bench_batched_replicas's subject).
  spec.training.replicas = env::ReplicaMode::Sequential;
  return spec;
}

double environment_epoch(const std::shared_ptr<const env::DatasetPair>& data) {
  env::LocalSgdEnv environment(cluster_spec(), data, 1);
  env::RoundPlan plan;
  plan.workers = {{128, 1}, {128, 1}, {128, 1}, {128, 1}};
  const auto start = Clock::now();
  while (!environment.epoch_finished()) environment.run_round(plan);
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The same work written directly against libtorch: same model, same optimizer, same sub-batches.
double bare_epoch(const env::DatasetPair& data) {
  torch::manual_seed(1);
  auto model = env::make_model(cluster_spec().training.model, {1, 28, 28}, 10);
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(5e-4));
  const std::int64_t n = data.train.size();
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(3);
  std::shuffle(order.begin(), order.end(), rng);
  const auto start = Clock::now();
  for (std::int64_t first = 0; first < n; first += 512) {
    const std::int64_t total = std::min<std::int64_t>(512, n - first);
    sgd.zero_grad();
    for (int w = 0; w < 4; ++w) {
      const std::int64_t b0 = first + total * w / 4, b1 = first + total * (w + 1) / 4;
      auto index = torch::from_blob(order.data() + b0, {b1 - b0}, torch::kInt64);
      auto loss = torch::nn::functional::cross_entropy(model->forward(data.train.images.index_select(0, index)),
                                                       data.train.labels.index_select(0, index));
      (loss * (static_cast<double>(b1 - b0) / total)).backward();
      loss.item<double>();  // the environment reads every loss too
    }
    sgd.step();
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  // Thread count (libtorch intra-op and OpenBLAS alike), to measure the thread settings too.
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  env::set_compute_threads(threads);
  auto data = std::make_shared<const env::DatasetPair>(env::load_dataset(env::DataSpec{}, 1));
  std::vector<double> bare, wrapped;
  // Interleaved repetitions, so both see the same machine load; medians reported.
  for (int rep = 0; rep < 5; ++rep) {
    bare.push_back(bare_epoch(*data));
    wrapped.push_back(environment_epoch(data));
  }
  std::sort(bare.begin(), bare.end());
  std::sort(wrapped.begin(), wrapped.end());
  const double b = bare[bare.size() / 2], w = wrapped[wrapped.size() / 2];
  std::printf("one epoch of 4-worker SSGD, MLP 784-256-128-10, Fashion-MNIST, %d thread(s) (median of 5)\n", threads);
  std::printf("  bare libtorch loop   %.3f s\n  environment          %.3f s\n  overhead             %+.1f%%\n", b, w,
              100.0 * (w / b - 1.0));
  return 0;
}
