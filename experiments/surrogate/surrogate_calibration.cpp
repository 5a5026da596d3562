#include "experiments/surrogate/surrogate_calibration.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "common/errors.hpp"
#include "env/surrogate/surrogate_file.hpp"

namespace experiments {

namespace fs = std::filesystem;

env::SurrogateModel with_drift_scale(const env::SurrogateModel& model, double scale) {
  if (!(scale > 0) || !std::isfinite(scale)) throw std::invalid_argument("drift scale: expected a number > 0");
  env::SurrogateModel scaled = model;
  scaled.progress.drift_scale *= scale;
  scaled.noise.divergence_scale *= scale;
  return scaled;
}

env::SurrogateModel with_calibration(const env::SurrogateModel& model, double scale, double steps_gain, double steps_reference) {
  if (!std::isfinite(steps_gain)) throw std::invalid_argument("steps gain: expected a finite number");
  if (!(steps_reference >= 0) || !std::isfinite(steps_reference))
    throw std::invalid_argument("steps reference: expected a number >= 0");
  env::SurrogateModel calibrated = with_drift_scale(model, scale);
  calibrated.accuracy.steps_gain = steps_gain;
  calibrated.accuracy.steps_reference = steps_reference;
  return calibrated;
}

CalibrationPoint calibration_point(double scale, const SurrogateFidelity& fidelity) {
  CalibrationPoint p;
  p.scale = scale;
  p.clusters = static_cast<int>(fidelity.clusters.size());
  p.best_same_or_adjacent = fidelity.best_same_or_adjacent;
  p.mean_abs_error_sweep = fidelity.mean_abs_error_sweep;
  for (const auto& c : fidelity.clusters)
    for (const auto& t : c.sweep) {
      if (t.real_misses == 0) p.surrogate_only_misses += t.surrogate_misses;
      if (t.surrogate_misses == 0) p.real_only_misses += t.real_misses;
    }
  return p;
}

std::size_t choose_calibration(const std::vector<CalibrationPoint>& points) {
  if (points.empty()) throw std::invalid_argument("surrogate calibration: no scales");
  std::size_t best = 0;
  for (std::size_t i = 1; i < points.size(); ++i) {
    const auto& p = points[i];
    const auto& b = points[best];
    if (p.best_same_or_adjacent != b.best_same_or_adjacent) {
      if (p.best_same_or_adjacent > b.best_same_or_adjacent) best = i;
    } else if (p.mean_abs_error_sweep != b.mean_abs_error_sweep) {
      if (p.mean_abs_error_sweep < b.mean_abs_error_sweep) best = i;
    } else if (std::abs(std::log(p.scale)) != std::abs(std::log(b.scale))) {
      if (std::abs(std::log(p.scale)) < std::abs(std::log(b.scale))) best = i;
    } else if (std::abs(p.steps_gain) < std::abs(b.steps_gain)) {
      best = i;
    }
  }
  return best;
}

namespace {

std::string point_name(double scale, double steps_gain) {
  char buf[64];
  if (steps_gain == 0)
    std::snprintf(buf, sizeof buf, "scale-%g", scale);
  else
    std::snprintf(buf, sizeof buf, "scale-%g-steps-gain-%g", scale, steps_gain);
  return buf;
}

nlohmann::json read_fit_report(const std::string& path) {
  std::ifstream in(path);
  const auto json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return json.is_object() && json.contains("fit") ? json["fit"] : nlohmann::json::object();
}

}  // namespace

SurrogateCalibrationResult calibrate_surrogate(const SurrogateCalibrationOptions& options) {
  const FidelityRunOptions& given = options.fidelity;
  if (given.configs.empty()) throw common::UsageError("calibrate needs at least one CONFIG");
  if (options.scales.empty()) throw common::UsageError("calibrate: --scales needs at least one scale");
  for (double s : options.scales)
    if (!(s > 0) || !std::isfinite(s)) throw common::UsageError("calibrate: --scales: every scale must be a number > 0");
  if (options.steps_gains.empty()) throw common::UsageError("calibrate: --steps-gains needs at least one gain");
  for (double g : options.steps_gains)
    if (!std::isfinite(g)) throw common::UsageError("calibrate: --steps-gains: every gain must be a finite number");
  if (!(options.steps_reference >= 0) || !std::isfinite(options.steps_reference))
    throw common::UsageError("calibrate: --steps-reference: expected a number >= 0");
  for (const auto& dir : given.real_from)
    if (!fs::is_directory(dir)) throw common::DataError(dir + ": no such folder (--real: an orchestra evaluate --out folder)");
  const auto fitted = env::read_surrogate(given.surrogate);  // a bad file stops here
  const fs::path work(options.work_dir);

  // Without --real the first scale's fidelity run evaluates the configs on real training (in its
  // folder's real/), and every later scale reuses that evaluation.
  FidelityRunOptions fidelity = given;
  SurrogateCalibrationResult result;
  for (double scale : options.scales)
    for (double gain : options.steps_gains) {
      const fs::path dir = work / point_name(scale, gain);
      fs::create_directories(dir);
      fidelity.surrogate = (dir / "surrogate.json").string();
      fidelity.out_dir = dir.string();
      env::write_surrogate(fidelity.surrogate, with_calibration(*fitted, scale, gain, options.steps_reference));
      fidelity.quiet = given.quiet || !fidelity.real_from.empty();  // the real evaluation's progress, if it runs
      const FidelityRunResult run = run_surrogate_fidelity(fidelity);
      fidelity.real_from = run.real_dirs;
      result.points.push_back(calibration_point(scale, run.fidelity));
      result.points.back().steps_gain = gain;
      if (!given.quiet) {
        const auto& p = result.points.back();
        std::fprintf(stderr, "surrogate calibrate: drift scale %g, steps gain %g: best T same or adjacent on %d of %d, sweep mean |error| %.1f%%\n",
                     scale, gain, p.best_same_or_adjacent, p.clusters, 100 * p.mean_abs_error_sweep);
      }
    }
  result.chosen = choose_calibration(result.points);
  const CalibrationPoint& chosen = result.points[result.chosen];
  result.model = with_calibration(*fitted, chosen.scale, chosen.steps_gain, options.steps_reference);

  nlohmann::json report = read_fit_report(given.surrogate);
  nlohmann::json grid = nlohmann::json::array();
  for (const auto& p : result.points)
    grid.push_back({{"drift_scale", p.scale},
                    {"steps_gain", p.steps_gain},
                    {"clusters", p.clusters},
                    {"best_same_or_adjacent", p.best_same_or_adjacent},
                    {"sweep_mean_abs_error", p.mean_abs_error_sweep},
                    {"surrogate_only_misses", p.surrogate_only_misses},
                    {"real_only_misses", p.real_only_misses}});
  report["calibration"] = {{"fitted", given.surrogate},
                           {"drift_scale", chosen.scale},
                           {"steps_gain", chosen.steps_gain},
                           {"steps_reference", options.steps_reference},
                           {"configs", given.configs},
                           {"real_runs", fidelity.real_from},
                           {"grid", grid}};
  env::write_surrogate(options.out, result.model, report);
  return result;
}

std::string calibration_markdown(const SurrogateCalibrationResult& result) {
  std::string md =
      "| drift scale | steps gain | best static T same or adjacent | sweep mean abs. error | missed only on the surrogate (runs) | missed only "
      "in real training (runs) |\n|---:|---:|---:|---:|---:|---:|\n";
  for (std::size_t i = 0; i < result.points.size(); ++i) {
    const auto& p = result.points[i];
    char row[256];
    std::snprintf(row, sizeof row, "| %s%g%s | %g | %d of %d | %.1f%% | %d | %d |\n", i == result.chosen ? "**" : "", p.scale,
                  i == result.chosen ? "** (chosen)" : "", p.steps_gain, p.best_same_or_adjacent, p.clusters, 100 * p.mean_abs_error_sweep,
                  p.surrogate_only_misses, p.real_only_misses);
    md += row;
  }
  return md;
}

}  // namespace experiments
