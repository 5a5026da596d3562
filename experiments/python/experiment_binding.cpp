// `orchestra run` from Python, and where a results folder's files are: orchestra.run and
// orchestra.read_results (orchestra/_results.py reads the files with pandas).
//
// run() is run_experiment (or run_seeds for several seeds), the functions behind `orchestra run`:
// the same validation before anything is written, the same files, progress on stderr unless
// quiet. Several seeds run one after another in this process (`orchestra run --seeds` without
// --jobs): --jobs starts copies of the running executable, which here is the Python interpreter.
#include <algorithm>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/limits.hpp"
#include "experiments/config/config.hpp"
#include "experiments/python/bindings.hpp"
#include "experiments/python/torch_generator_guard.hpp"
#include "experiments/results/results_reader.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/seed_runs.hpp"

namespace experiments::python {

namespace py = pybind11;

namespace {

std::uint64_t checked_seed(std::int64_t seed, const char* what) {
  if (seed < 0) throw py::value_error(std::string("run: ") + what + " must be >= 0, got " + std::to_string(seed));
  return static_cast<std::uint64_t>(seed);
}

std::string run(const std::string& config_path, const std::string& out, std::optional<std::int64_t> seed,
                std::optional<std::vector<std::int64_t>> seeds, std::optional<int> threads, bool quiet) {
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
  py::gil_scoped_release release;
  return keeping_torch_generator([&] {
    ExperimentConfig config = load_config(config_path);
    if (!options.overrides.seed && (!options.seeds.empty() || !config.seeds.empty())) return run_seeds(std::move(config), options).out_dir;
    return run_experiment(std::move(config), options).out_dir;
  });
}

// The runs of a results folder, as read_results finds them (a policy folder, an experiment's, or a
// folder of experiments such as a multi-seed run's seed-<N>/), each policy in the order it ran.
py::list results_index(const std::string& dir) {
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
        py::arg("threads") = py::none(), py::arg("quiet") = false);
  m.def("results_index", &results_index, py::arg("dir"));
}

}  // namespace experiments::python
