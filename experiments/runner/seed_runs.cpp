#include "experiments/runner/seed_runs.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "experiments/registry/policy_registry.hpp"
#include "experiments/runner/progress_reporter.hpp"

namespace experiments {
namespace {

std::string seed_dir(const std::string& out_dir, std::uint64_t seed) { return out_dir + "/seed-" + std::to_string(seed); }

struct Child {
  std::uint64_t seed = 0;
  pid_t pid = -1;
};

// `orchestra run CONFIG --seed N --out DIR/seed-N --quiet [--threads T]`, output to DIR/seed-N.log.
Child start_seed(const std::string& config_file, std::uint64_t seed, const std::string& out_dir, const RunOptions& options) {
  // --claimed: this process holds DIR, which it checked for the seed's folder too (results_folder.hpp).
  std::vector<std::string> args = {"orchestra", "run", config_file, "--seed", std::to_string(seed), "--out", seed_dir(out_dir, seed), "--quiet", "--claimed"};
  if (options.overrides.threads) args.insert(args.end(), {"--threads", std::to_string(*options.overrides.threads)});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log = seed_dir(out_dir, seed) + ".log";
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw common::SystemError(log + ": cannot write (" + std::strerror(errno) + ")");
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    throw common::SystemError(std::string("cannot start the run of a seed: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  ::close(fd);
  return {seed, pid};
}

// Polls the children; a finished one is removed. Returns the first failure's message, if any.
std::string reap(std::vector<Child>& running, const std::string& out_dir, int& done, std::size_t total, ProgressReporter& progress) {
  for (auto it = running.begin(); it != running.end();) {
    int status = 0;
    if (::waitpid(it->pid, &status, WNOHANG) != it->pid) {
      ++it;
      continue;
    }
    const std::uint64_t seed = it->seed;
    it = running.erase(it);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return "the run of seed " + std::to_string(seed) + " failed (" +
             (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status)) : "signal " + std::to_string(WTERMSIG(status))) +
             "): see " + seed_dir(out_dir, seed) + ".log";
    ++done;
    progress.message("seed " + std::to_string(seed) + " done (" + std::to_string(done) + "/" + std::to_string(total) + ")");
  }
  return "";
}

// The labels of the policies every seed runs (their results folders), sweeps expanded.
std::vector<std::string> policy_labels(ExperimentConfig config) {
  expand_sweeps(config);
  std::vector<std::string> labels;
  for (const auto& p : config.policies) labels.push_back(p.label);
  return labels;
}

// How many policies of the running seeds have finished since `since`: their folders appear whole
// (results_files.hpp) when a policy is done; an older folder of an earlier run does not count.
int policies_finished(const std::vector<Child>& running, const std::vector<std::string>& labels, const std::string& out_dir,
                      std::filesystem::file_time_type since) {
  int finished = 0;
  std::error_code ec;
  for (const auto& c : running)
    for (const auto& label : labels) {
      const auto time = std::filesystem::last_write_time(seed_dir(out_dir, c.seed) + "/" + label + "/summary.json", ec);
      if (!ec && time >= since) ++finished;
    }
  return finished;
}

std::string seed_list(const std::vector<Child>& running) {
  std::string list;
  for (const auto& c : running) list += (list.empty() ? "" : ", ") + std::to_string(c.seed);
  return list.empty() ? "-" : list;
}

void run_in_processes(const ExperimentConfig& config, const std::vector<std::uint64_t>& seeds, const std::string& out_dir,
                      const RunOptions& options) {
  if (config.file.empty() || !std::filesystem::exists(config.file))
    throw common::UsageError("--jobs runs each seed as `orchestra run CONFIG`: the config must come from a file");
  // The children run --quiet into their logs; the progress is counted here in finished policies.
  ProgressReporter progress(ProgressReporter::style_for(stderr, options.quiet), stderr,
                            options.quiet ? ProgressTiming{} : ProgressTiming::from_environment());
  const std::vector<std::string> labels = policy_labels(config);
  const auto started = std::filesystem::file_time_type::clock::now() - std::chrono::seconds(1);  // coarse file times
  progress.start("seeds", "policies", static_cast<double>(seeds.size() * labels.size()), 0, false);
  std::vector<Child> running;
  std::size_t next = 0;
  int done = 0;
  std::string failure;
  while (failure.empty() && (next < seeds.size() || !running.empty())) {
    while (next < seeds.size() && static_cast<int>(running.size()) < options.jobs)
      running.push_back(start_seed(config.file, seeds[next++], out_dir, options));
    failure = reap(running, out_dir, done, seeds.size(), progress);
    const auto finished = static_cast<std::size_t>(done) * labels.size() + static_cast<std::size_t>(policies_finished(running, labels, out_dir, started));
    progress.update(static_cast<double>(finished), {{"seeds done", std::to_string(done) + "/" + std::to_string(seeds.size())},
                                                    {"running seeds", seed_list(running)}});
    if (failure.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (failure.empty()) progress.finish();
  if (failure.empty()) return;
  // The other seeds stop: SIGTERM, up to 5 s to end, then SIGKILL (which cannot be refused).
  for (const auto& c : running) ::kill(c.pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!running.empty() && std::chrono::steady_clock::now() < deadline) {
    for (auto it = running.begin(); it != running.end();) it = ::waitpid(it->pid, nullptr, WNOHANG) == it->pid ? running.erase(it) : it + 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (const auto& c : running) ::kill(c.pid, SIGKILL);
  for (const auto& c : running) ::waitpid(c.pid, nullptr, 0);
  throw common::RunError(failure);
}

}  // namespace

std::vector<SeedRow> write_seed_summary(const std::string& out_dir, const std::vector<std::uint64_t>& seeds) {
  std::vector<std::string> dirs;
  for (const auto seed : seeds) dirs.push_back(seed_dir(out_dir, seed));
  const std::vector<SeedRow> rows = seed_rows(read_results(dirs));
  common::write_file_atomic(out_dir + "/comparison.md", seed_markdown(rows));
  common::write_file_atomic(out_dir + "/comparison.csv", seed_csv(rows));
  return rows;
}

std::vector<std::uint64_t> seeds_to_run(const ExperimentConfig& config, const RunOptions& options) {
  return options.seeds.empty() ? config.seeds : options.seeds;
}

FolderPlan seeds_folder_plan(const ExperimentConfig& config, const RunOptions& options) {
  ExperimentConfig all = config;
  all.seeds = seeds_to_run(config, options);  // the sweep's size counts the seeds that run (expand_sweeps)
  FolderPlan plan;
  for (const auto seed : all.seeds) {
    Overrides overrides = options.overrides;
    overrides.seed = seed;
    plan.folders["seed-" + std::to_string(seed)] = run_folder_plan(resolve_experiment(all, overrides));
  }
  plan.files.push_back({"comparison.md", kComparisonMarkdownMarker});
  plan.files.push_back({"comparison.csv", kSeedComparisonCsvMarker});
  return plan;
}

SeedRunResult run_seeds(ExperimentConfig config, const RunOptions& options) {
  SeedRunResult result;
  result.seeds = seeds_to_run(config, options);
  if (result.seeds.empty()) throw common::UsageError("no seeds: give --seeds or seeds: in the config");
  result.out_dir = options.out_dir.empty() ? "results/" + config.name : options.out_dir;
  std::filesystem::create_directories(result.out_dir);
  if (options.jobs > 1) {
    run_in_processes(config, result.seeds, result.out_dir, options);
  } else {
    // One seed after the other in this process: each run's own progress, its labels prefixed with
    // the seed, and a line per seed with the time the others should take.
    ProgressReporter progress(ProgressReporter::style_for(stderr, options.quiet), stderr);
    const auto start = std::chrono::steady_clock::now();
    const std::size_t n = result.seeds.size();
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t seed = result.seeds[k];
      RunOptions one = options;
      one.overrides.seed = seed;
      one.out_dir = seed_dir(result.out_dir, seed);
      one.progress_prefix = "seed " + std::to_string(seed) + " (" + std::to_string(k + 1) + "/" + std::to_string(n) + ") ";
      run_experiment(config, one);
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      progress.message("seed " + std::to_string(seed) + " done (" + std::to_string(k + 1) + "/" + std::to_string(n) + ")  elapsed " +
                       format_duration(elapsed) + "  ETA " + format_duration(elapsed / static_cast<double>(k + 1) * static_cast<double>(n - k - 1)));
    }
  }
  result.rows = write_seed_summary(result.out_dir, result.seeds);
  return result;
}

}  // namespace experiments
