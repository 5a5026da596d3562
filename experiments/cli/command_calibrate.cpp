// `orchestra calibrate`: a real run's results -> a calibrated `cluster.mode: simulated` config
// (experiments/calibration/), with the fit's residuals printed.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/json_file.hpp"
#include "common/folder_lock.hpp"
#include "env/train/local_sgd_env.hpp"
#include "env/train/models.hpp"
#include "experiments/calibration/calibrate.hpp"
#include "experiments/calibration/calibrated_config.hpp"
#include "experiments/cli/cli_args.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/registry/policy_registry.hpp"
#include "experiments/results/results_folder.hpp"

namespace experiments {
namespace {

const char* kCalibrateHelp = R"(usage: orchestra calibrate REAL_RESULTS_DIR [--out CONFIG.yaml] [--profile WORKER=FILE.json]...
                           [--traces DIR] [--quiet]

Fits a simulated cluster to a real run of `orchestra launch` (its config.json and rounds.csv for
every policy) and writes a `cluster.mode: simulated` config with the same data, model, training,
runtime, perturbations and policies:
  - each worker's time model, LBB Eq. 1, linear or cubic by the lower BIC (the cubic only from
    4 or more distinct batch sizes, and only if it never decreases up to max_batch), fitted to
    its measured (local batch, compute ms per step) points with the perturbations divided out;
    its noise is the log-normal sigma of the residuals;
  - the network's alpha-beta (ring all-reduce) fitted to the measured all-reduce times;
  - cluster.round_overhead: what each real round pays besides compute and the all-reduce (plan
    broadcast, gathering the times, optimizer step, data loading, the loop between rounds).
Comments in the config say where each number came from; the residuals are printed. Evaluation is
not on either clock, so it is not modelled.

A worker needs steps of at least 2 batch sizes spanning 20% of the largest: a run of dsgd or
local-sgd alone gives each worker one size. Add a policy that moves batches (lbb), or measure
the worker's curve with `orchestra profile` and give it here.

  --out FILE           where to write the config (default: REAL_RESULTS_DIR/calibrated.yaml)
  --profile W=FILE     take worker W's time model from FILE, the JSON of `orchestra profile`
                       (its "samples"), instead of the run's rounds; repeat for several workers
  --traces DIR         also write each policy's measured steps as DIR/<policy>.csv (columns
                       worker, clock_ms, batch, ms), for time_model: {trace: FILE}
  --quiet              print only errors

example:
  orchestra launch --nproc 2 configs/fidelity/straggler_2x.yaml --out results/fidelity/real
  orchestra calibrate results/fidelity/real --out results/fidelity/calibrated.yaml
  orchestra run results/fidelity/calibrated.yaml --out results/fidelity/sim
  orchestra compare results/fidelity/real --sim results/fidelity/sim
)";

bool starts_with(const std::string& path, const std::string& marker) {
  std::ifstream in(path, std::ios::binary);
  std::string head(marker.size(), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  return in.gcount() == static_cast<std::streamsize>(head.size()) && head == marker;
}

// A worker's points from the JSON of `orchestra profile` (or any balance file): the entry named
// `worker`, or the file's only entry.
std::vector<calibration::MeasuredStep> profile_points(const std::string& path, const std::string& worker) {
  const nlohmann::json doc = common::read_json_file(path);
  if (!doc.is_object() || !doc.contains("workers") || !doc["workers"].is_array() || doc["workers"].empty())
    throw common::DataError(path + ": expected the JSON of orchestra profile ({\"workers\": [{\"name\", \"samples\": [[batch, ms], ...]}]})");
  const nlohmann::json* entry = doc["workers"].size() == 1 ? &doc["workers"][0] : nullptr;
  for (const auto& w : doc["workers"])
    if (w.is_object() && w.value("name", "") == worker) entry = &w;
  if (!entry) throw common::DataError(path + ": no worker named '" + worker + "' among its " + std::to_string(doc["workers"].size()));
  if (!entry->contains("samples") || !(*entry)["samples"].is_array()) throw common::DataError(path + ": the worker has no \"samples\": [[batch, ms], ...]");
  std::vector<calibration::MeasuredStep> out;
  for (const auto& s : (*entry)["samples"]) {
    if (!s.is_array() || s.size() != 2 || !s[0].is_number() || !s[1].is_number()) throw common::DataError(path + ": a sample is not a [batch, ms] pair");
    out.push_back({s[0].get<double>(), s[1].get<double>(), 1});
  }
  return out;
}

}  // namespace

int command_calibrate(const Args& args) {
  std::string real_dir, out_path, traces_dir;
  bool quiet = false;
  calibration::CalibrateOptions options;
  std::vector<std::pair<std::string, std::string>> profiles;
  for (ArgCursor arg(args); arg.next();) {
    const std::string& a = arg.arg();
    if (arg.is_help()) {
      std::cout << kCalibrateHelp;
      return 0;
    } else if (a == "--out") {
      out_path = arg.value();
    } else if (a == "--profile") {
      const std::string& v = arg.repeatable_value();
      const auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size()) throw UsageError("--profile expects WORKER=FILE.json, got '" + v + "'");
      for (const auto& [worker, file] : profiles)
        if (worker == v.substr(0, eq)) throw UsageError("--profile: worker " + worker + " is given twice (" + file + ", " + v.substr(eq + 1) + ")");
      profiles.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--traces") {
      traces_dir = arg.value();
    } else if (a == "--quiet") {
      quiet = true;
    } else if (arg.is_option()) {
      throw UsageError(std::string("unknown option ") + a);
    } else if (real_dir.empty()) {
      real_dir = a;
    } else {
      throw UsageError("calibrate takes one REAL_RESULTS_DIR, got a second: " + a);
    }
  }
  if (real_dir.empty()) throw UsageError("needs REAL_RESULTS_DIR");
  if (out_path.empty()) out_path = real_dir + "/calibrated.yaml";

  // A real run still being written is not one to fit: its folder's lock says so (and, held here,
  // keeps a launch from starting into it meanwhile).
  if (!std::filesystem::is_directory(real_dir)) throw common::DataError(real_dir + ": no such folder");
  const common::FolderLock real_lock(real_dir);
  // The config written replaces only one calibrate wrote; the traces likewise.
  if (std::filesystem::exists(out_path) && !starts_with(out_path, calibration::kCalibratedMarker))
    throw common::FolderError(common::ExitCode::BadInput, out_path + ": exists and was not written by orchestra calibrate: choose another --out");
  const calibration::RealRun run = calibration::read_real_run(real_dir);
  // The real run's config, validated and resolved as when it ran (cluster names, perturbations).
  const ExperimentConfig config = parse_config(calibration::real_config_text(run), run.policies.front().dir + "/config.json");
  for (const auto& [worker, file] : profiles) {
    options.profiles[worker] = profile_points(file, worker);
    options.profile_files[worker] = file;
  }
  // The all-reduce message: the configured size, else the model's parameters (as the run sent).
  options.message_bytes = config.network.message_bytes > 0
                              ? config.network.message_bytes
                              : env::parameter_bytes(*env::make_model(config.training.model, env::input_shape_of(config.data), 10));
  const calibration::Calibration c = calibration::calibrate(run, config, options);
  const std::string yaml = calibration::calibrated_config_yaml(c, run);
  // What was written must load, and its policies build: a calibrated config that the simulator
  // rejects is a bug here (or a real run whose config.json was damaged).
  ExperimentConfig written = parse_config(yaml, out_path);
  expand_sweeps(written);
  for (const auto& entry : written.policies) make_policy(entry, written);
  std::optional<ResultsFolder> traces;
  if (!traces_dir.empty()) {
    FolderPlan plan;
    for (const auto& p : run.policies) plan.files.push_back({p.label + ".csv", calibration::kTraceHeader});
    traces.emplace(traces_dir, plan, false);
  }
  const auto parent = std::filesystem::path(out_path).parent_path();
  if (!parent.empty()) common::create_folder(parent.string());
  common::write_file_atomic(out_path, yaml);
  if (traces) {
    for (const auto& [label, csv] : calibration::step_traces(run, config)) common::write_file_atomic(traces_dir + "/" + label + ".csv", csv);
  }
  if (!quiet) std::cout << calibration::calibration_report(c) << "written: " << out_path << "\n";
  return 0;
}

}  // namespace experiments
