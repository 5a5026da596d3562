// Batched replicas against sequential ones (runtime.replicas), the same experiments alternating in
// one process: the whole `orchestra run` work of a policy (training, evaluation, results files).
//  - 16 workers, MLP 784-64-10, 32 samples per worker step, Fashion-MNIST, 1 epoch: local SGD
//    (H = 8) and orchestra-lcm (unequal tau_n); goal >= 3x.
//  - the A3C training environment's cluster (configs/a3c_env_small.yaml, 4 workers, 8 epochs):
//    local SGD and orchestra-lcm (the controller's substrate); goal >= 2x.
// The first table times whole experiments (data loading, profiling probes and evaluation
// included, which do not change); the second only the environment's epoch of training (the data
// loaded once), which is what batching changes: a local-SGD plan and an Orchestra-like plan with
// unequal steps (tau = 8 on the fast half, 4 on the slow half), 32 samples per step.
// usage: bench_batched_replicas [--repeat N] [--threads T]   (median of N alternating runs, 3)
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "env/train/compute_threads.hpp"
#include "env/train/local_sgd_env.hpp"
#include "experiments/config/config.hpp"
#include "experiments/runner/experiment.hpp"

namespace {

const char* kSixteen = R"(name: batched_16
seed: 3
data: {dataset: fashion-mnist}
model: {arch: mlp, hidden: [64]}
training: {global_batch: 512, lr: 0.05, momentum: 0.9, weight_decay: 0.0005, epochs: 1}
cluster:
  servers:
    - name: s1
      workers:
        - {name: fast, count: 8, time_model: {coefficients: [12, 0.25]}, max_batch: 512, noise: 0.03}
    - name: s2
      workers:
        - {name: slow, count: 8, time_model: {coefficients: [20, 0.525]}, max_batch: 512, noise: 0.03}
network: {bandwidth_gbps: 10, intra_bandwidth_gbps: 96}
)";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `base` with one policy and runtime.replicas set.
experiments::ExperimentConfig with(const std::string& base, const std::string& policy, const char* replicas) {
  YAML::Node node = YAML::Load(base);
  node["policies"] = YAML::Load("[" + policy + "]");
  node["runtime"]["replicas"] = replicas;
  YAML::Emitter out;
  out << node;
  return experiments::parse_config(out.c_str(), "bench.yaml");
}

double run_seconds(const experiments::ExperimentConfig& config, const std::string& out_dir) {
  experiments::RunOptions options;
  options.quiet = true;
  options.out_dir = out_dir;
  const auto start = std::chrono::steady_clock::now();
  experiments::run_experiment(config, options);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One epoch of `workers` workers (MLP 784-hidden-10) under `plan`, replicas as `mode`.
double epoch_seconds(const std::shared_ptr<const env::DatasetPair>& data, int workers, int hidden, const env::RoundPlan& plan,
                     env::ReplicaMode mode) {
  env::EnvSpec spec;
  for (int i = 0; i < workers; ++i) {
    env::WorkerSpec w;
    w.name = "w" + std::to_string(i);
    w.time_model = std::make_shared<env::BatchTimeModel>(std::vector<double>{12.0, i < workers / 2 ? 0.25 : 0.525});
    spec.simulation.cluster.workers.push_back(w);
  }
  spec.simulation.cluster.server_names = {"s"};
  spec.simulation.global_batch = 32 * workers;
  spec.training.model.hidden = {hidden};
  spec.training.replicas = mode;
  env::LocalSgdEnv environment(spec, data, 1);
  const auto start = std::chrono::steady_clock::now();
  do environment.run_round(plan);
  while (!environment.epoch_finished());
  environment.finish_epoch();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 3, threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--repeat") repeat = std::stoi(argv[i + 1]);
    if (a == "--threads") threads = std::stoi(argv[i + 1]);
  }
  env::set_compute_threads(threads);
  const std::string small = read_file(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/a3c_env_small.yaml");
  struct Case {
    std::string name, base, policy;
  };
  const std::vector<Case> cases = {
      {"16 workers, local-sgd H=8, batch 32", kSixteen, "{name: local-sgd, H: 8, batch: 32}"},
      {"16 workers, orchestra-lcm, batch 32", kSixteen, "{name: orchestra-lcm, batch: 32}"},
      {"A3C env (4 workers), local-sgd H=8", small, "{name: local-sgd, H: 8}"},
      {"A3C env (4 workers), orchestra-lcm", small, "orchestra-lcm"},
  };
  const auto out = std::filesystem::temp_directory_path() / "orchestra-bench-batched";
  std::cout << std::fixed << std::setprecision(3) << "threads " << threads << ", median of " << repeat
            << " alternating runs\n\n| case | sequential s | batched s | speed-up |\n|---|---:|---:|---:|\n";
  for (const auto& c : cases) {
    const auto sequential = with(c.base, c.policy, "sequential"), batched = with(c.base, c.policy, "batched");
    std::vector<double> s, b;
    for (int r = 0; r < repeat; ++r) {
      s.push_back(run_seconds(sequential, (out / "s").string()));
      b.push_back(run_seconds(batched, (out / "b").string()));
    }
    std::cout << "| " << c.name << " | " << median(s) << " | " << median(b) << " | " << median(s) / median(b) << "x |\n" << std::flush;
  }
  std::filesystem::remove_all(out);

  const auto data = std::make_shared<const env::DatasetPair>(env::load_dataset(env::DataSpec{}, 1));
  std::cout << "\n| one epoch of training (Fashion-MNIST, 32 samples per step) | sequential s | batched s | speed-up |\n|---|---:|---:|---:|\n";
  for (const auto& [workers, hidden] : std::vector<std::pair<int, int>>{{16, 64}, {16, 32}, {4, 64}, {4, 32}})
    for (bool orchestra : {false, true}) {
      env::RoundPlan plan;
      plan.aggregation = env::Aggregation::ModelAverage;
      for (int i = 0; i < workers; ++i) plan.workers.push_back({32, orchestra ? (i < workers / 2 ? 8 : 4) : 8});
      std::vector<double> s, b;
      for (int r = 0; r < repeat; ++r) {
        s.push_back(epoch_seconds(data, workers, hidden, plan, env::ReplicaMode::Sequential));
        b.push_back(epoch_seconds(data, workers, hidden, plan, env::ReplicaMode::Batched));
      }
      std::cout << "| " << workers << " workers, MLP 784-" << hidden << "-10, " << (orchestra ? "unequal steps 8/4" : "local SGD H=8")
                << " | " << median(s) << " | " << median(b) << " | " << median(s) / median(b) << "x |\n" << std::flush;
    }
}
