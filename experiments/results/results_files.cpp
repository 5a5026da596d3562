#include "experiments/results/results_files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "experiments/results/round_csv.hpp"

namespace experiments {
namespace {

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// The clock column says what it measured: sim_time_s (the cost model) or wall_time_s (a real run).
std::string time_key(const PolicyOutcome& o) { return std::string(env::clock_name(o.clock)) + "_time_s"; }

}  // namespace

std::string epochs_csv(const PolicyOutcome& o) {
  std::string csv = "epoch," + time_key(o) + ",epoch_time_s,accuracy,loss,train_loss,straggler_effect,utilization,rounds\n";
  for (const auto& e : o.epochs)
    csv += std::to_string(e.epoch + 1) + ',' + csv_number(e.clock_ms / 1000.0) + ',' + csv_number(e.epoch_ms / 1000.0) + ',' + csv_number(e.accuracy) +
           ',' + csv_number(e.loss) + ',' + csv_number(e.train_loss) + ',' + csv_number(e.mean_straggler_effect) + ',' + csv_number(e.utilization) + ',' +
           std::to_string(e.rounds) + '\n';
  return csv;
}

std::string evals_csv(const PolicyOutcome& o) {
  std::string csv = "round,epoch," + time_key(o) + ",accuracy,loss\n";
  for (const auto& p : o.evals)
    csv += std::to_string(p.round) + ',' + std::to_string(p.epoch) + ',' + csv_number(p.clock_s) + ',' + csv_number(p.accuracy) + ',' + csv_number(p.loss) + '\n';
  return csv;
}

nlohmann::json summary_json(const PolicyOutcome& o, double target, const std::string& reference_label,
                            std::optional<double> speedup_vs_reference) {
  nlohmann::json s;
  s["policy"] = o.kind;
  s["label"] = o.label;
  s["target_accuracy"] = target;
  s["timing_only"] = o.timing_only;  // no accuracy: speedup_vs_first compares time per epoch (speedup.hpp)
  s["reached_target"] = o.time_to_target_s.has_value();
  s["time_to_target_s"] = o.time_to_target_s ? nlohmann::json(*o.time_to_target_s) : nlohmann::json(nullptr);
  s["final_accuracy"] = number_or_null(o.final_accuracy);
  s["final_loss"] = number_or_null(o.final_loss);
  s["epochs"] = o.epochs.size();
  s["rounds"] = o.rounds;
  s[time_key(o)] = o.sim_time_s;
  s["mean_straggler_effect"] = o.mean_straggler_effect;
  s["mean_utilization"] = o.mean_utilization;
  s["idle_s_per_worker"] = o.idle_s_per_worker;
  s["speedup_reference"] = reference_label;
  s["speedup_vs_first"] = speedup_vs_reference ? nlohmann::json(*speedup_vs_reference) : nlohmann::json(nullptr);
  s["wall_clock"] = {{"seconds", o.wall_seconds}};  // the one field that differs between identical runs
  return s;
}

void write_policy_folder(const std::string& out_dir, const PolicyOutcome& o, const nlohmann::json& summary,
                         const nlohmann::json& resolved_config) {
  namespace fs = std::filesystem;
  fs::create_directories(out_dir);
  const fs::path final_dir = fs::path(out_dir) / o.label;
  // A fresh staging folder of this process's own (mkdtemp): nothing of an earlier run is reused
  // or removed, and on any failure (a full disk included) it goes again, so that only a whole
  // folder ever appears.
  std::string name = (fs::path(out_dir) / ("." + o.label + ".staging-" + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (!::mkdtemp(name.data())) throw common::WriteError(out_dir + ": cannot create a staging folder (" + std::strerror(errno) + ")");
  const fs::path staging = name;
  try {
    // mkdtemp makes it 0700; the results folder gets what a plain mkdir would give it.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    fs::permissions(staging, fs::perms::all & ~static_cast<fs::perms>(mask));
    common::write_file_atomic((staging / "epochs.csv").string(), epochs_csv(o));
    common::write_file_atomic((staging / "evals.csv").string(), evals_csv(o));
    if (!o.rounds_csv.empty()) common::write_file_atomic((staging / "rounds.csv").string(), o.rounds_csv);
    if (!o.iterations_csv.empty()) common::write_file_atomic((staging / "iterations.csv").string(), o.iterations_csv);
    common::write_file_atomic((staging / "config.json").string(), resolved_config.dump(2) + "\n");
    common::write_file_atomic((staging / "summary.json").string(), summary.dump(2) + "\n");
    // What it replaces is this label's earlier results (the run's claim on the folder checked
    // whose they are, results_folder.hpp); anything else under that name is never removed.
    std::error_code ec;
    if (fs::exists(final_dir, ec) && !fs::is_regular_file(final_dir / "summary.json", ec) && !fs::is_empty(final_dir, ec))
      throw common::FolderError(common::ExitCode::BadInput, final_dir.string() + ": exists and holds no policy results: not replaced");
    common::replace_folder(staging.string(), final_dir.string());  // swapped in one step: never neither
  } catch (...) {
    std::error_code ec;
    fs::remove_all(staging, ec);
    throw;
  }
}

void write_summary(const std::string& out_dir, const PolicyOutcome& o, const nlohmann::json& summary) {
  common::write_file_atomic((std::filesystem::path(out_dir) / o.label / "summary.json").string(), summary.dump(2) + "\n");
}

}  // namespace experiments
