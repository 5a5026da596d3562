// `orchestra surrogate fidelity SURROGATE.json CONFIG...`: `orchestra evaluate` (its static-T sweep,
// orchestra-lcm, random moves and a learned policy) on the configs with real training and again on
// the surrogate (each config with runtime.training: surrogate), then the comparison of
// surrogate_fidelity.hpp, written as DIR/fidelity.md and DIR/fidelity.csv.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/config/workload_change.hpp"
#include "experiments/surrogate/surrogate_fidelity.hpp"

namespace experiments {

struct FidelityRunOptions {
  std::string surrogate;                 // the surrogate file
  std::vector<std::string> configs;      // cluster experiment configs (as for orchestra evaluate)
  std::vector<std::uint64_t> seeds{1, 2, 3};
  std::string policy = "pretrained/orchestra-a3c.pt";  // judged beside the sweep; sets its move and interval
  std::string out_dir = "results/surrogate-fidelity";
  // Earlier real evaluations of these configs (`orchestra evaluate --out` folders, e.g. one for
  // each set of configs): reused, not rerun; empty: the real evaluation runs here.
  std::vector<std::string> real_from;
  WorkloadChange workload;               // every config's epochs and target replaced, on both sides
  int jobs = 1;
  bool quiet = false;
  bool overwrite = false;  // its evaluations' folders hold other results: replace them (as evaluate --overwrite)
};

struct FidelityRunResult {
  SurrogateFidelity fidelity;
  std::vector<std::string> real_dirs;
  std::string surrogate_dir;
  std::vector<std::string> files;        // fidelity.md, fidelity.csv
  // Seeds asked for (--seeds) that no pair of runs has: a reused real evaluation (--real) of
  // fewer seeds. The comparison is on the others; the command warns.
  std::vector<std::uint64_t> seeds_not_compared;
};

// Throws common::ConfigError / DataError before anything runs for a bad surrogate or config, and
// for a reused real evaluation that ran a config's cluster on another workload (epochs or target)
// than the surrogate's runs would: times to two targets compared would pass for a fidelity.
FidelityRunResult run_surrogate_fidelity(const FidelityRunOptions& options);

// The parts `orchestra surrogate pick` shares: each config's surrogate variant written under
// DIR/surrogate-configs (each must load, and match the workload of any reused real evaluation,
// before anything runs), then orchestra evaluate on those variants into DIR/surrogate (returned).
std::vector<std::string> write_surrogate_variants(const FidelityRunOptions& options);
std::string evaluate_on_surrogate(const FidelityRunOptions& options, const std::vector<std::string>& variant_paths);

// The runs of several `orchestra evaluate` folders (e.g. one per set of configs), in order.
std::vector<ControllerRun> read_evaluations(const std::vector<std::string>& dirs);

// `config_path`'s YAML with runtime.training: surrogate and runtime.surrogate: the absolute
// `surrogate` path (a relative data folder made absolute, as evaluate does), for writing elsewhere.
std::string surrogate_variant(const std::string& config_path, const std::string& surrogate);

}  // namespace experiments
