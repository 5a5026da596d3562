// The GPU against this machine's CPU (issue 17), both measured in one run of this process:
//  1. simulated training steps per second with batched replicas, 4, 16, 64 and 256 workers, the
//     MLP (784-256-128-10) and the CNN (LeNet-like), Fashion-MNIST: local SGD rounds (H = 8, 32
//     samples per worker step, every worker stepping). A step is one worker's local SGD step; the
//     clock runs over run_round only (the device synchronized after each round), so the per-epoch
//     evaluation is left out. Goal: at 64 workers and more the GPU at least 10x the CPU.
//  2. what the GPU settings give the CNN at 64 workers: the default (float32, cuDNN's deterministic
//     algorithms chosen by heuristics), runtime.tf32: true, cuDNN's benchmark mode (it times the
//     algorithms and keeps the fastest, so two runs may pick different ones and differ in their
//     last bits: not the toolkit's default), and both.
//  3. the A3C environment's steps per second (the environment configs/a3c_train.yaml trains on:
//     configs/a3c_env_small.yaml, 4 workers, MLP 784-64-10, T moved in 150 ms units, the time
//     reward; one step is one epoch, resets included): one episode at a time, and K episodes as one
//     vectorized environment (orchestra/rl/batched_barrier_envs.hpp: their local-SGD rounds merged
//     into one stacked computation), on the CPU and the GPU; ratios against one episode on the CPU.
// Each case runs one warm-up round (cuBLAS/cuDNN handles, the caching allocator, the data copy)
// and then at least --seconds of rounds, and no fewer than 2.
//
// usage: bench_device [--seconds S] [--threads T] [--device cuda|cuda:N] [--workers 4,16,...]
//                     [--episodes 4,16,64] [--data DIR]
//   S: least time per case (default 2); T: CPU threads (default: every core of the machine);
//   DIR: the Fashion-MNIST folder (default Debian's, /usr/share/datasets/fashion-mnist).
// Without a usable GPU the GPU columns say why, and only the CPU is measured.
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/yaml_reader.hpp"
#include "env/train/compute_threads.hpp"
#include "env/train/device.hpp"
#include "env/train/local_sgd_env.hpp"
#include "experiments/config/config.hpp"
#include "experiments/registry/orchestra_options.hpp"
#include "orchestra/rl/local_sgd_barrier_env.hpp"
#include "orchestra/rl/batched_barrier_envs.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Rate {
  double per_second = 0;  // steps per wall second
  std::int64_t steps = 0;
  double seconds = 0;
};

// How a GPU case runs (section 2): runtime.tf32, and cuDNN's benchmark mode.
struct GpuSettings {
  bool tf32 = false;
  bool cudnn_benchmark = false;
};

// Worker steps per second of local SGD rounds on `workers` batched replicas of `kind` on `device`.
Rate training_rate(const std::shared_ptr<const env::DatasetPair>& data, int workers, const std::string& arch, torch::Device device,
                   double least_seconds, GpuSettings settings = {}) {
  env::EnvSpec spec;
  for (int i = 0; i < workers; ++i) {
    env::WorkerSpec w;
    w.name = "w" + std::to_string(i);
    w.time_model = std::make_shared<env::BatchTimeModel>(std::vector<double>{12.0, i % 2 == 0 ? 0.25 : 0.525});
    spec.simulation.cluster.workers.push_back(w);
  }
  spec.simulation.cluster.server_names = {"s"};
  spec.simulation.global_batch = 32 * workers;
  spec.training.model.arch = arch;
  spec.training.replicas = env::ReplicaMode::Batched;
  spec.training.device = device.str();
  spec.training.tf32 = settings.tf32;
  env::LocalSgdEnv environment(spec, data, 1);
  // After the environment's prepare_device, which turns benchmarking off; back off at the end.
  if (device.is_cuda()) at::globalContext().setBenchmarkCuDNN(settings.cudnn_benchmark);
  env::RoundPlan plan;
  plan.aggregation = env::Aggregation::ModelAverage;
  for (int i = 0; i < workers; ++i) plan.workers.push_back({32, 8});
  Rate rate;
  int rounds = 0;
  for (bool warm_up = true;; warm_up = false) {
    if (environment.epoch_finished()) environment.finish_epoch();  // evaluation: off the clock
    const auto start = Clock::now();
    const env::RoundReport report = environment.run_round(plan);
    env::synchronize(device);
    if (warm_up) continue;
    rate.seconds += seconds_since(start);
    for (const auto& w : report.workers) rate.steps += w.local_steps;
    if (++rounds >= 2 && rate.seconds >= least_seconds) break;
  }
  if (device.is_cuda()) at::globalContext().setBenchmarkCuDNN(false);
  rate.per_second = static_cast<double>(rate.steps) / rate.seconds;
  return rate;
}

// The A3C training environment's config (section 3) on `device`, reading Fashion-MNIST from `data_dir`.
orchestra::LocalSgdBarrierEnvConfig a3c_env_config(const std::string& experiment_path, torch::Device device, const std::string& data_dir) {
  experiments::ExperimentConfig experiment = experiments::load_config(experiment_path);
  experiment.training.device = device.str();
  if (experiment.data.dataset == "fashion-mnist") experiment.data.path = data_dir;
  common::YamlReader reader(YAML::Load("{unit_ms: 150}"), experiment_path, "controller");
  orchestra::LocalSgdBarrierEnvConfig c =
      experiments::barrier_env_config(experiment, experiments::read_barrier_options(reader, orchestra::BarrierSource::Lcm, experiment));
  c.reward = orchestra::LocalSgdBarrierEnvConfig::Reward::Time;
  return c;
}

// Environment steps per second of `episodes` episodes at once (one: a plain LocalSgdBarrierEnv;
// more: a BatchedBarrierEnvs) of "keep T", an episode that ends reset with the next seed.
Rate a3c_env_rate(const orchestra::LocalSgdBarrierEnvConfig& config, const std::shared_ptr<const env::DatasetPair>& data, int episodes,
                  torch::Device device, double least_seconds) {
  std::uint64_t seed = 1;
  Rate rate;
  if (episodes == 1) {
    orchestra::LocalSgdBarrierEnv environment(config, data);
    environment.reset(seed++);  // warm-up: the data set placed, the handles made
    environment.step(orchestra::BarrierAction::Keep);
    const auto start = Clock::now();
    while (rate.steps < 2 || seconds_since(start) < least_seconds) {
      if (environment.episode_over()) environment.reset(seed++);
      environment.step(orchestra::BarrierAction::Keep);
      ++rate.steps;
    }
    env::synchronize(device);
    rate.seconds = seconds_since(start);
  } else {
    orchestra::BatchedBarrierEnvs environments(config, episodes, data);
    for (int k = 0; k < episodes; ++k) environments.reset(k, seed++);
    const std::vector<int> keep(static_cast<std::size_t>(episodes), static_cast<int>(orchestra::BarrierAction::Keep));
    environments.step(keep);  // warm-up
    const auto start = Clock::now();
    while (rate.steps < 2 * episodes || seconds_since(start) < least_seconds) {
      for (int k = 0; k < episodes; ++k)
        if (environments.episode_over(k)) environments.reset(k, seed++);
      environments.step(keep);
      rate.steps += episodes;
    }
    env::synchronize(device);
    rate.seconds = seconds_since(start);
  }
  rate.per_second = static_cast<double>(rate.steps) / rate.seconds;
  return rate;
}

std::vector<int> parse_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) out.push_back(std::stoi(item));
  return out;
}

std::string cell(double v, int precision = 1) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(precision) << v;
  return o.str();
}

}  // namespace

int main(int argc, char** argv) {
  double least_seconds = 2.0;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string gpu_spec = "cuda";
  std::vector<int> worker_counts{4, 16, 64, 256};
  std::vector<int> episode_counts{4, 16, 64};
  env::DataSpec data_spec;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--seconds") least_seconds = std::stod(argv[i + 1]);
    if (a == "--threads") threads = std::stoi(argv[i + 1]);
    if (a == "--device") gpu_spec = argv[i + 1];
    if (a == "--workers") worker_counts = parse_list(argv[i + 1]);
    if (a == "--episodes") episode_counts = parse_list(argv[i + 1]);
    if (a == "--data") data_spec.path = argv[i + 1];
  }
  env::set_compute_threads(threads);
  const std::string no_gpu = env::cuda_unavailable_reason();
  std::optional<torch::Device> gpu;
  if (no_gpu.empty()) gpu = env::resolve_device(gpu_spec);
  std::cout << "CPU: " << threads << " threads; GPU: " << (gpu ? gpu->str() : "none (" + no_gpu + ")") << "; at least " << least_seconds
            << " s per case\n\n";

  const auto data = std::make_shared<const env::DatasetPair>(env::load_dataset(data_spec, 1));
  std::cout << "| workers | model | CPU steps/s | GPU steps/s | GPU / CPU |\n|---:|---|---:|---:|---:|\n" << std::flush;
  bool goal_met = true, goal_measured = false;
  for (const std::string arch : {"mlp", "cnn"})
    for (const int workers : worker_counts) {
      const Rate cpu = training_rate(data, workers, arch, torch::kCPU, least_seconds);
      std::cout << "| " << workers << " | " << arch << " | " << cell(cpu.per_second) << " | ";
      if (!gpu) {
        std::cout << "- | - |\n" << std::flush;
        continue;
      }
      const Rate on_gpu = training_rate(data, workers, arch, *gpu, least_seconds);
      const double ratio = on_gpu.per_second / cpu.per_second;
      std::cout << cell(on_gpu.per_second) << " | " << cell(ratio, 2) << "x |\n" << std::flush;
      if (workers >= 64) {
        goal_measured = true;
        goal_met = goal_met && ratio >= 10.0;
      }
    }

  if (gpu) {
    std::cout << "\n| CNN, 64 workers, on the GPU | steps/s | against the default |\n|---|---:|---:|\n" << std::flush;
    const Rate base = training_rate(data, 64, "cnn", *gpu, least_seconds);
    std::cout << "| default (float32, deterministic cuDNN algorithms by heuristics) | " << cell(base.per_second) << " | 1.00x |\n" << std::flush;
    const std::vector<std::pair<const char*, GpuSettings>> variants{
        {"runtime.tf32: true", {true, false}}, {"cuDNN benchmark mode (not reproducible)", {false, true}}, {"both", {true, true}}};
    for (const auto& [name, settings] : variants) {
      const Rate r = training_rate(data, 64, "cnn", *gpu, least_seconds, settings);
      std::cout << "| " << name << " | " << cell(r.per_second) << " | " << cell(r.per_second / base.per_second, 2) << "x |\n" << std::flush;
    }
  }

  const std::string a3c_env = std::string(ORCHESTRA_SOURCE_DIR) + "/configs/a3c_env_small.yaml";
  std::cout << "\n| A3C environment (a3c_env_small.yaml; a step = an epoch) | device | env steps/s | against 1 episode on the CPU |\n"
               "|---|---|---:|---:|\n" << std::flush;
  const auto cpu_config = a3c_env_config(a3c_env, torch::kCPU, data_spec.path);
  const auto env_data = std::make_shared<const env::DatasetPair>(env::load_dataset(cpu_config.data, cpu_config.data_seed));
  const Rate cpu = a3c_env_rate(cpu_config, env_data, 1, torch::kCPU, least_seconds);
  std::cout << "| 1 episode | CPU | " << cell(cpu.per_second, 2) << " | 1.00x |\n" << std::flush;
  const int cpu_vector = episode_counts.empty() ? 0 : std::min(16, episode_counts.back());
  if (cpu_vector > 1) {
    const Rate r = a3c_env_rate(cpu_config, env_data, cpu_vector, torch::kCPU, least_seconds);
    std::cout << "| " << cpu_vector << " episodes, one vector env | CPU | " << cell(r.per_second, 2) << " | " << cell(r.per_second / cpu.per_second, 2)
              << "x |\n" << std::flush;
  }
  bool env_goal_met = false;
  if (gpu) {
    const auto gpu_config = a3c_env_config(a3c_env, *gpu, data_spec.path);
    std::vector<int> counts{1};
    counts.insert(counts.end(), episode_counts.begin(), episode_counts.end());
    for (const int episodes : counts) {
      const Rate r = a3c_env_rate(gpu_config, env_data, episodes, *gpu, least_seconds);
      env_goal_met = env_goal_met || r.per_second >= cpu.per_second;
      std::cout << "| " << episodes << (episodes == 1 ? " episode" : " episodes, one vector env") << " | GPU | " << cell(r.per_second, 2) << " | "
                << cell(r.per_second / cpu.per_second, 2) << "x |\n" << std::flush;
    }
  }
  if (goal_measured) std::cout << "\ngoal (GPU >= 10x CPU at 64 workers and more): " << (goal_met ? "met" : "NOT met") << "\n";
  if (gpu) std::cout << "goal (the RL environment at least as fast on the GPU as on the CPU): " << (env_goal_met ? "met" : "NOT met") << "\n";
  return 0;
}
