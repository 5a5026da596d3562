#include "experiments/surrogate/round_log.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/yaml_reader.hpp"
#include "common/json_file.hpp"
#include "common/json_diff.hpp"
#include "env/sim/round_rules.hpp"
#include "env/train/compute_threads.hpp"
#include "env/train/local_sgd_env.hpp"
#include "experiments/runner/progress_reporter.hpp"
#include "env/train/workload_task.hpp"
#include "orchestra/barrier_controller.hpp"
#include "orchestra/cluster_distribution.hpp"

namespace experiments {
namespace {

enum class Schedule { Static, Walk };

const char* schedule_name(Schedule s) { return s == Schedule::Static ? "static" : "walk"; }

// printf into a std::string (the rows are numbers; %.7g keeps a float32 loss exactly enough).
template <class... A>
std::string format(const char* pattern, A... values) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, pattern, values...);
  return buffer;
}

struct EpisodeRecord {
  std::string rounds_csv;  // rows, without the header
  std::string episode_row;
  std::int64_t rounds = 0;
};

double uniform(std::mt19937_64& rng, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
double log_uniform(std::mt19937_64& rng, double lo, double hi) { return std::exp(uniform(rng, std::log(lo), std::log(hi))); }

EpisodeRecord run_episode(const orchestra::LocalSgdBarrierEnvConfig& base, const std::shared_ptr<const env::DatasetPair>& data,
                          std::int64_t episode, std::uint64_t seed, const RoundLogOptions& options) {
  // The cluster, as LocalSgdBarrierEnv::reset draws it.
  env::ClusterSpec cluster = base.cluster;
  env::NetworkSpec network = base.network;
  if (base.distribution) {
    const orchestra::DrawnCluster drawn =
        orchestra::draw_cluster(*base.distribution, env::derive_seed(seed, 23), base.global_batch, data->train.size());
    cluster = drawn.cluster;
    network = drawn.network;
  }
  env::EnvSpec spec;
  spec.simulation.cluster = cluster;
  spec.simulation.network = network;
  spec.simulation.global_batch = base.global_batch;
  spec.simulation.message_bytes = network.message_bytes;
  spec.training = base.training;
  spec.training.planned_epochs = base.budget.max_epochs;
  env::LocalSgdEnv env(spec, data, seed, env::input_shape_of(base.data));

  std::mt19937_64 rng(env::derive_seed(seed, 31));
  const Schedule schedule = uniform(rng, 0, 1) < options.static_share ? Schedule::Static : Schedule::Walk;
  orchestra::BarrierControllerOptions controller_options = base.controller;
  if (schedule == Schedule::Static) {
    // A fixed T, like the sweep's fixed-t: the heuristic never takes T back, and no bound relative
    // to T* cuts the sweep's range.
    controller_options.rerun_lcm_each_epoch = false;
    controller_options.min_barrier_x_start = 0;
    controller_options.max_barrier_x_start = 0;
  }
  orchestra::BarrierController controller(controller_options);
  controller.start(env.view());
  const double t_star = controller.start_barrier_ms();
  const auto& batch_ms = controller.batch_times_ms();
  const double t_min = *std::min_element(batch_ms.begin(), batch_ms.end());
  const double t_max = *std::max_element(batch_ms.begin(), batch_ms.end());
  double move_probability = 0;
  if (schedule == Schedule::Static) {
    controller.place_barrier(log_uniform(rng, std::min(t_star / 8, t_max), std::max(32 * t_star, 64 * t_max)));
  } else {
    move_probability = uniform(rng, 0.02, 0.3);
    controller.place_barrier(t_star * log_uniform(rng, 0.25, 16.0));
  }
  const double start_barrier = controller.barrier_ms();

  EpisodeRecord record;
  const int workers = cluster.num_workers();
  const int max_epochs = base.budget.max_epochs;
  const double target = base.budget.target_accuracy;
  env::EvalResult before = env.evaluate();
  double reached_at = -1, reached_clock_s = -1;
  std::int64_t reached_round = -1;
  double progress_before = 0;
  while (env.epoch() < max_epochs) {
    if (schedule == Schedule::Walk) {
      int action = 0;
      if (uniform(rng, 0, 1) < move_probability) action = uniform(rng, 0, 1) < 0.5 ? -1 : 1;
      controller.move_barrier(action);  // every round, as the RL environment's agent does
    }
    env::PlanContext context;
    context.round = env.rounds();
    context.epoch = env.epoch();
    context.epoch_start = !env.in_epoch();
    context.clock_ms = env.clock_ms();
    const env::RoundPlan plan = controller.plan(context);
    const env::RoundReport report = env.run_round(plan);
    controller.observe_round(report);
    env::EvalResult after;
    if (report.epoch_end) {
      const env::EpochReport epoch = env.finish_epoch();
      controller.observe_epoch(epoch);
      after = {epoch.accuracy, epoch.loss};
    } else {
      after = env.evaluate();
    }
    controller.observe_evaluation(after);
    const double progress_after = env.in_epoch() ? env.epoch() + env.epoch_progress() : static_cast<double>(env.epoch());

    int members = 0, tau_min = 0, tau_max = 0, batch_min = 0, batch_max = 0;
    std::int64_t steps = 0, samples = 0;
    std::string plan_text;
    for (std::size_t i = 0; i < report.workers.size(); ++i) {
      const auto& w = report.workers[i];
      plan_text += (i ? ";" : "") + std::to_string(w.samples) + "/" + std::to_string(w.local_steps);
      if (w.local_steps <= 0) continue;
      tau_min = members == 0 ? w.local_steps : std::min(tau_min, w.local_steps);
      tau_max = std::max(tau_max, w.local_steps);
      batch_min = members == 0 ? w.batch_size : std::min(batch_min, w.batch_size);
      batch_max = std::max(batch_max, w.batch_size);
      steps += w.local_steps;
      samples += w.samples;
      ++members;
    }
    const double lr = base.training.lr_schedule == env::LrSchedule::Cosine
                          ? env::cosine_learning_rate(base.training.optimizer.lr, report.epoch, max_epochs)
                          : base.training.optimizer.lr;
    record.rounds_csv += std::to_string(episode) + "," + std::to_string(report.round) + "," + std::to_string(report.epoch) +
                         format(",%.6f,%.6f,%.4f,%.4f,%.4f,%.4f", progress_before, progress_after, report.clock_ms, report.round_ms,
                                report.comm_ms, report.barrier_ms) +
                         "," + std::to_string(workers) + "," + std::to_string(members) + "," + env::weighting_name(plan.weighting) +
                         format(",%.6g,%d", lr, base.global_batch) +
                         format(",%.6g,%d,%d,%lld,%lld,%d,%d", members ? static_cast<double>(steps) / members : 0.0, tau_min, tau_max,
                                static_cast<long long>(steps), static_cast<long long>(samples), batch_min, batch_max) +
                         "," + plan_text +
                         format(",%.7g,%.4f,%.7g,%.4f,%.7g,%d\n", before.loss, before.accuracy, after.loss, after.accuracy,
                                report.train_loss, report.epoch_end ? 1 : 0);
    ++record.rounds;
    before = after;
    progress_before = progress_after;
    if (reached_at < 0 && after.accuracy >= target) {
      reached_at = progress_after;
      reached_round = report.round;
      reached_clock_s = report.clock_ms / 1000.0;
    }
    if (reached_at >= 0 && progress_after - reached_at >= options.after_target_epochs) break;
  }
  record.episode_row = std::to_string(episode) + "," + std::to_string(seed) + "," + schedule_name(schedule) +
                       format(",%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f", start_barrier, t_star, controller.comm_ms(), t_min, t_max,
                              move_probability, network.message_bytes / 1e6) +
                       "," + std::to_string(workers) + "," + std::to_string(cluster.num_servers()) + "," +
                       std::to_string(cluster.perturbations.size()) + "," + std::to_string(record.rounds) +
                       format(",%.4f,%lld,%.4f,%.4f\n", env.epoch() + env.epoch_progress(), static_cast<long long>(reached_round),
                              reached_clock_s, before.accuracy);
  return record;
}

std::string chunk_name(const std::string& dir, const char* kind, std::int64_t first, std::int64_t last) {
  char name[64];
  std::snprintf(name, sizeof name, "%s-%06lld-%06lld.csv", kind, static_cast<long long>(first), static_cast<long long>(last));
  return (std::filesystem::path(dir) / name).string();
}

const char* kEpisodeHeader =
    "episode,seed,schedule,start_barrier_ms,lcm_barrier_ms,comm_ms,fastest_step_ms,slowest_step_ms,move_probability,message_mb,"
    "workers,servers,perturbations,rounds,epochs,target_round,target_clock_s,final_accuracy\n";

}  // namespace

const std::string& round_log_header() {
  static const std::string header =
      "episode,round,epoch,progress_before,progress_after,clock_ms,round_ms,comm_ms,barrier_ms,workers,members,weighting,lr,"
      "global_batch,tau_mean,tau_min,tau_max,steps,samples,batch_min,batch_max,plan,loss_before,acc_before,loss_after,acc_after,"
      "train_loss,epoch_end";
  return header;
}

namespace {

// A folder that already holds a log is only continued by the same log: the same task, seed, target
// and episode rules (the config's path aside), and chunks that either are this run's or do not
// overlap them. Otherwise its skipped chunks would be another log's, and fit would mix the two.
void check_same_log(const RoundLogOptions& options, const nlohmann::json& task, const nlohmann::json& about) {
  namespace fs = std::filesystem;
  const fs::path dir = options.out_dir;
  const auto refuse = [&](const std::string& why) {
    throw common::FolderError(common::ExitCode::BadInput, options.out_dir + ": holds another round log (" + why +
                                                              "): log into another folder, or remove it first");
  };
  if (fs::exists(dir / "task.json") && common::read_json_file((dir / "task.json").string()) != task)
    refuse("its task.json: " + common::describe_differences(common::read_json_file((dir / "task.json").string()), task));
  if (fs::exists(dir / "log.json")) {
    nlohmann::json before = common::read_json_file((dir / "log.json").string()), now = about;
    if (before.is_object()) before.erase("config");
    now.erase("config");
    if (before != now) refuse("its log.json: " + common::describe_differences(before, now));
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> planned;
  const std::int64_t end = options.first_episode + options.episodes;
  for (std::int64_t first = options.first_episode; first < end; first += options.chunk)
    planned.emplace_back(first, std::min(end, first + options.chunk) - 1);
  for (const auto& entry : fs::directory_iterator(dir)) {
    long long a = 0, b = 0;
    char tail = 0;
    const std::string name = entry.path().filename().string();
    if (std::sscanf(name.c_str(), "rounds-%lld-%lld.cs%c", &a, &b, &tail) != 3 &&
        std::sscanf(name.c_str(), "episodes-%lld-%lld.cs%c", &a, &b, &tail) != 3)
      continue;
    for (const auto& [first, last] : planned)
      if (a <= last && first <= b && !(a == first && b == last))
        refuse(name + " overlaps this run's episodes " + std::to_string(first) + "-" + std::to_string(last) + ", logged with another --chunk");
  }
}

}  // namespace

RoundLogSummary log_real_rounds(const TrainConfig& config, const RoundLogOptions& options) {
  if (config.environment != TrainEnvironment::LocalSgd) {
    std::string at = config.file;  // file:line of the key, as every config error says
    try {
      const YAML::Node root = YAML::LoadFile(config.file);
      at = common::where(root["environment"], config.file);
    } catch (const YAML::Exception&) {
    }
    throw common::ConfigError(at + ": environment: the round log needs real training (environment: local-sgd)");
  }
  if (options.episodes < 1 || options.chunk < 1) throw std::invalid_argument("log_real_rounds: episodes and chunk must be >= 1");
  const auto wall_start = std::chrono::steady_clock::now();
  const orchestra::LocalSgdBarrierEnvConfig base = training_env_config(config, 0);
  env::set_compute_threads(1);
  auto data = std::make_shared<const env::DatasetPair>(env::load_dataset(base.data, base.data_seed));
  std::filesystem::create_directories(options.out_dir);
  const nlohmann::json task = env::task_to_json(env::task_of(base.data, base.training, base.global_batch, *data));
  const nlohmann::json about = {{"config", config.file},
                                {"seed", options.seed},
                                {"target_accuracy", base.budget.target_accuracy},
                                {"max_epochs", base.budget.max_epochs},
                                {"after_target_epochs", options.after_target_epochs},
                                {"static_share", options.static_share}};
  check_same_log(options, task, about);
  common::write_file_atomic((std::filesystem::path(options.out_dir) / "task.json").string(), task.dump(2) + "\n");
  common::write_file_atomic((std::filesystem::path(options.out_dir) / "log.json").string(), about.dump(2) + "\n");

  RoundLogSummary summary;
  ProgressReporter progress(ProgressReporter::style_for(stderr, options.quiet), stderr,
                            options.quiet ? ProgressTiming{} : ProgressTiming::from_environment());
  progress.start("surrogate log", "episodes", static_cast<double>(options.episodes));
  const std::int64_t end = options.first_episode + options.episodes;
  for (std::int64_t first = options.first_episode; first < end; first += options.chunk) {
    const std::int64_t last = std::min(end, first + options.chunk) - 1;
    const std::string rounds_path = chunk_name(options.out_dir, "rounds", first, last);
    const std::string episodes_path = chunk_name(options.out_dir, "episodes", first, last);
    if (std::filesystem::exists(rounds_path) && std::filesystem::exists(episodes_path)) {
      summary.episodes_skipped += last - first + 1;
      continue;
    }
    std::string rounds = round_log_header() + "\n", episodes = kEpisodeHeader;
    for (std::int64_t k = first; k <= last; ++k) {
      const EpisodeRecord r = run_episode(base, data, k, env::derive_seed(options.seed, static_cast<std::uint64_t>(k)), options);
      rounds += r.rounds_csv;
      episodes += r.episode_row;
      summary.rounds += r.rounds;
      ++summary.episodes_run;
      progress.update(static_cast<double>(summary.episodes_run + summary.episodes_skipped),
                      {{"rounds", std::to_string(summary.rounds)}, {"chunk", std::to_string(first) + "-" + std::to_string(last)}});
    }
    common::write_file_atomic(rounds_path, rounds);
    common::write_file_atomic(episodes_path, episodes);
  }
  progress.finish();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return summary;
}

}  // namespace experiments
