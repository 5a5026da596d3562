// `orchestra run` from Python, and where a results folder's files are: orchestra.run and
// orchestra.read_results (orchestra/_results.py reads the files with pandas).
//
// run() is run_experiment (or run_seeds for several seeds), the functions behind `orchestra run`:
// the same validation before anything is written, the same files, progress on stderr unless
// quiet. Several seeds run one after another in this process (`orchestra run --seeds` without
// --jobs): --jobs starts copies of the running executable, which here is the Python interpreter.
#include <algorithm>
#include <pybind11/stl.h>

#include <ATen/Parallel.h>

#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/errors.hpp"
#include "common/interrupt.hpp"
#include "common/limits.hpp"
#include "env/train/compute_threads.hpp"
#include "experiments/config/config.hpp"
#include "experiments/python/bindings.hpp"
#include "experiments/python/torch_generator_guard.hpp"
#include "experiments/results/results_folder.hpp"
#include "experiments/results/results_reader.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/seed_runs.hpp"
#include "experiments/runner/simulated_cluster.hpp"

namespace experiments::python {

namespace py = pybind11;

namespace {

std::uint64_t checked_seed(std::int64_t seed, const char* what) {
  if (seed < 0) throw py::value_error(std::string("run: ") + what + " must be >= 0, got " + std::to_string(seed));
  return static_cast<std::uint64_t>(seed);
}

// One run at a time in the process: a run seeds libtorch's default generator where it builds each
// policy's replicas, and two runs in two threads drew from each other's seeding (results unlike
// the command line's for the same seed). The lock of with_torch_generator is not taken, so that
// environments in other threads go on stepping while a run takes hours.
std::mutex& run_lock() {
  static std::mutex lock;
  return lock;
}

// libtorch's intra-op threads as they were when a run began, put back when it ends.
class ThreadsKept {
 public:
  ThreadsKept() : threads_(at::get_num_threads()) {}
  ~ThreadsKept() { env::set_compute_threads(threads_); }
  ThreadsKept(const ThreadsKept&) = delete;
  ThreadsKept& operator=(const ThreadsKept&) = delete;

 private:
  int threads_;
};

std::string run_in_this_thread(const std::string& config_path, const RunOptions& options, bool overwrite);

std::string run(const std::string& config_path, const std::string& out, std::optional<std::int64_t> seed,
                std::optional<std::vector<std::int64_t>> seeds, std::optional<int> threads, bool quiet, bool overwrite) {
  checked_path(config_path, "run: config");
  checked_path(out, "run: out");
  if (seed && seeds) throw py::value_error("run: give seed or seeds, not both");
  if (threads && (*threads < 1 || *threads > 256)) throw py::value_error("run: threads must be in 1..256, got " + std::to_string(*threads));
  RunOptions options;
  options.out_dir = out;
  options.quiet = quiet;
  options.overrides.threads = threads;
  if (seed) options.overrides.seed = checked_seed(*seed, "seed");
  if (seeds) {
    if (seeds->empty()) throw py::value_error("run: seeds is empty");
    for (const auto s : *seeds) {
      options.seeds.push_back(checked_seed(s, "every seed"));
      // As the command line's --seeds: one run counted twice would narrow the interval it reports.
      if (std::count(options.seeds.begin(), options.seeds.end(), options.seeds.back()) > 1)
        throw py::value_error("run: seed " + std::to_string(s) + " is listed twice");
    }
  }
  std::unique_lock<std::mutex> one_run(run_lock(), std::try_to_lock);
  if (!one_run.owns_lock())
    throw std::runtime_error("run: another orchestra.run is running in this process, and both would seed libtorch's one generator: "
                             "run them one after another, or in separate processes");
  // The run goes on a thread of its own while this one waits, the GIL released, and every 100 ms
  // asks the interpreter for a pending Ctrl-C (PyErr_CheckSignals; Python runs signal handlers in
  // its main thread only). On one the run is asked to stop at its next round, and KeyboardInterrupt
  // raised once it has: with the GIL released for hours the Ctrl-C was never seen.
  common::clear_run_stop();
  const ThreadsKept threads_kept;  // the config's runtime.threads is the run's, not the caller's after it
  std::promise<std::string> result;
  std::future<std::string> finished = result.get_future();
  std::thread worker([&] {
    try {
      result.set_value(keeping_torch_generator([&] { return run_in_this_thread(config_path, options, overwrite); }));
    } catch (...) {
      result.set_exception(std::current_exception());
    }
  });
  const auto join = [&] {
    py::gil_scoped_release release;
    worker.join();
  };
  for (;;) {
    bool done = false;
    {
      py::gil_scoped_release release;
      done = finished.wait_for(std::chrono::milliseconds(100)) == std::future_status::ready;
    }
    if (done) break;
    if (PyErr_CheckSignals() != 0) {  // KeyboardInterrupt (or what the user's handler raised) is set
      common::request_run_stop();
      join();
      common::clear_run_stop();
      throw py::error_already_set();
    }
  }
  join();
  return finished.get();  // the run's own exception, if it failed
}

std::string run_in_this_thread(const std::string& config_path, const RunOptions& options, bool overwrite) {
  ExperimentConfig config = load_config(config_path);
  check_simulated_config(config);
  // The folder is this run's, and holds nothing of another experiment, before any work: the
  // claim of `orchestra run` (a folder another run is writing, or one of other results, refused).
  if (!options.overrides.seed && (!options.seeds.empty() || !config.seeds.empty())) {
    const ResultsFolder folder(results_dir(config, options), seeds_folder_plan(config, options), overwrite);
    return run_seeds(std::move(config), options).out_dir;
  }
  Experiment experiment = resolve_experiment(std::move(config), options.overrides);
  const ResultsFolder folder(results_dir(experiment.config, options), run_folder_plan(experiment), overwrite);
  SimulatedCluster cluster;
  return run_experiment(experiment, cluster, options).out_dir;
}

// The runs of a results folder, as read_results finds them (a policy folder, an experiment's, or a
// folder of experiments such as a multi-seed run's seed-<N>/), each policy in the order it ran.
py::list results_index(const std::string& dir) {
  checked_path(dir, "read_results");
  std::vector<RunResults> runs;
  {
    py::gil_scoped_release release;
    runs = read_results({dir});
  }
  py::list out;
  for (const RunResults& r : runs) {
    py::list policies;
    for (const PolicyResults& p : r.policies) {
      py::dict policy;
      policy["dir"] = p.dir;
      policy["label"] = p.label;
      policy["policy"] = p.policy;
      policy["rounds_csv"] = p.rounds_csv;
      policy["iterations_csv"] = p.iterations_csv;
      policies.append(policy);
    }
    py::dict run;
    run["dir"] = r.dir;
    run["name"] = r.name;
    run["policies"] = policies;
    run["train_csv"] = r.train_csv;
    out.append(run);
  }
  return out;
}

}  // namespace

void bind_experiments(py::module_& m) {
  m.def("run", &run, py::arg("config"), py::arg("out") = "", py::arg("seed") = py::none(), py::arg("seeds") = py::none(),
        py::arg("threads") = py::none(), py::arg("quiet") = false, py::arg("overwrite") = false);
  m.def("results_index", &results_index, py::arg("dir"));
}

}  // namespace experiments::python
