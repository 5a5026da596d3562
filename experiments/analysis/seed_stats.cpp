#include "experiments/analysis/seed_stats.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/json_diff.hpp"
#include "experiments/analysis/comparison.hpp"
#include "experiments/analysis/speedup.hpp"
#include "experiments/analysis/table_cells.hpp"
#include "experiments/results/results_folder.hpp"

namespace experiments {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// "mean ± ci" ("mean" alone for one value, "-" for none).
std::string plus_minus(const Spread& s, int digits, const std::string& unit = "") {
  if (s.n == 0) return "-";
  if (s.n == 1) return fixed(s.mean, digits) + unit;
  return fixed(s.mean, digits) + unit + " ± " + fixed(s.ci95, digits) + unit;
}

// The experiment a policy folder ran, without its seed, and its policy keys; nullopt when its
// config.json cannot be read.
struct RecordedConfig {
  nlohmann::json experiment;
  nlohmann::json policy;
};
std::optional<RecordedConfig> seed_config(const std::string& policy_dir) {
  const std::optional<nlohmann::json> config = recorded_config(policy_dir);
  if (!config) return std::nullopt;
  RecordedConfig recorded{experiment_identity(*config), config->value("policy", nlohmann::json())};
  recorded.experiment.erase("seed");
  recorded.experiment.erase("seeds");
  // A policy's own seed that follows the run's (orchestra-random's, sampled orchestra-a3c's: their
  // default) differs from seed to seed as the run's does; pooled, every multi-seed folder with
  // one was refused ("seed (1, now 2)"). One the config gave (the same on every seed) still counts.
  if (recorded.policy.is_object() && recorded.policy.contains("seed") && config->contains("seed") &&
      recorded.policy["seed"] == (*config)["seed"])
    recorded.policy.erase("seed");
  return recorded;
}

}  // namespace

void check_one_experiment(const std::vector<RunResults>& seeds) {
  std::optional<RecordedConfig> first;
  std::string first_dir;
  std::map<std::string, std::pair<nlohmann::json, std::string>> policy_of_label;  // label -> keys, folder
  for (const auto& run : seeds) {
    for (const auto& policy : run.policies) {
      const std::optional<RecordedConfig> recorded = seed_config(policy.dir);
      if (!recorded) continue;
      if (!first) {
        first = recorded;
        first_dir = policy.dir;
      } else if (recorded->experiment != first->experiment) {
        throw common::DataError(policy.dir + ": not a seed of the experiment of " + first_dir + ": its config.json differs in " +
                                common::describe_differences(first->experiment, recorded->experiment, 3) +
                                "; the summary over seeds would pool two experiments, compare them apart");
      }
      const auto [at, fresh] = policy_of_label.emplace(policy.label, std::make_pair(recorded->policy, policy.dir));
      if (!fresh && at->second.first != recorded->policy)
        throw common::DataError(policy.dir + ": policy '" + policy.label + "' ran with other keys than in " + at->second.second + ": " +
                                common::describe_differences(at->second.first, recorded->policy, 3) +
                                "; the summary over seeds would pool two policies, compare them apart");
    }
  }
}

double t_critical_95(int df) {
  // Two-sided 95% (0.975 quantile) of Student's t, df = 1..30.
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                 2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return kNaN;
  if (df <= 30) return table[df - 1];
  // The tabulated values at 40, 60 and 120 used for every df up to them gave intervals up to 1%
  // narrower than 95% (df 31: 2.021 for 2.0395). Above 30 the expansion of t in powers of 1/df
  // (Abramowitz & Stegun 26.7.5, three terms) is within 1e-4.
  const double z = 1.959963984540054, n = df, z2 = z * z;
  return z + z * (z2 + 1) / (4 * n) + z * ((5 * z2 + 16) * z2 + 3) / (96 * n * n) +
         z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / (384 * n * n * n);
}

Spread spread_of(const std::vector<double>& values) {
  Spread s;
  s.n = static_cast<int>(values.size());
  if (s.n == 0) {
    s.mean = s.sd = s.ci95 = kNaN;
    return s;
  }
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / s.n;
  if (s.n < 2) {
    s.sd = s.ci95 = kNaN;
    return s;
  }
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.sd = std::sqrt(squares / (s.n - 1));
  s.ci95 = t_critical_95(s.n - 1) * s.sd / std::sqrt(static_cast<double>(s.n));
  return s;
}

bool is_seed_folder(const std::vector<RunResults>& runs) {
  if (runs.size() < 2) return false;
  static const std::regex seed_name("seed-[0-9]+");
  for (const auto& r : runs)
    if (!std::regex_match(r.name, seed_name)) return false;
  return true;
}

std::vector<SeedRow> seed_rows(const std::vector<RunResults>& runs) {
  std::vector<SeedRow> rows;
  std::map<std::string, std::size_t> index;
  struct Samples {
    std::vector<double> ttt, accuracy, epoch_time, speedup;
  };
  std::vector<Samples> samples;
  for (const auto& run : runs) {
    std::vector<std::string> kinds;
    for (const auto& p : run.policies) kinds.push_back(p.policy);
    if (run.policies.empty()) continue;
    const PolicyResults& reference = run.policies[speedup_reference_index(kinds)];
    const auto basis = [](const PolicyResults& r) { return SpeedupBasis{r.time_to_target_s, r.timing_only, whole_epochs_time_s(r), r.epochs}; };
    for (const auto& p : run.policies) {
      auto [at, fresh] = index.emplace(p.label, rows.size());
      if (fresh) {
        SeedRow row;
        row.label = p.label;
        row.policy = p.policy;
        row.target_accuracy = p.target_accuracy;
        row.reference = reference.label;
        row.clock = p.clock;
        rows.push_back(row);
        samples.emplace_back();
      }
      SeedRow& row = rows[at->second];
      Samples& s = samples[at->second];
      ++row.seeds;
      if (p.time_to_target_s) {
        ++row.reached;
        s.ttt.push_back(*p.time_to_target_s);
      }
      if (std::isfinite(p.final_accuracy)) s.accuracy.push_back(p.final_accuracy);
      if (p.epochs > 0) s.epoch_time.push_back(whole_epochs_time_s(p) / static_cast<double>(p.epochs));
      if (const auto up = speedup_over(basis(reference), basis(p))) s.speedup.push_back(*up);
    }
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].time_to_target_s = spread_of(samples[i].ttt);
    rows[i].final_accuracy = spread_of(samples[i].accuracy);
    rows[i].epoch_time_s = spread_of(samples[i].epoch_time);
    rows[i].speedup = spread_of(samples[i].speedup);
  }
  return rows;
}

std::string seed_markdown(const std::vector<SeedRow>& rows) {
  if (rows.empty()) return "";
  const SeedRow& first = rows.front();
  const std::string clock = env::clock_name(first.clock);
  std::ostringstream s;
  s << "| policy | seeds reached | time to " << fixed(100 * first.target_accuracy, 1) << "% (s), mean ± 95% CI | sd | paired speedup vs "
    << first.reference << " | final acc | " << clock << " time per epoch (s) |\n";
  s << "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& r : rows)
    s << "| " << md_cell(r.label) << " | " << r.reached << "/" << r.seeds << " | " << plus_minus(r.time_to_target_s, 2) << " | "
      << fixed(r.time_to_target_s.sd, 2) << " | " << plus_minus(r.speedup, 2, "x") << " | " << plus_minus(r.final_accuracy, 4) << " | "
      << plus_minus(r.epoch_time_s, 2) << " |\n";
  return s.str();
}

std::string seed_csv(const std::vector<SeedRow>& rows) {
  std::string csv =
      "label,policy,seeds,reached,target_accuracy,time_to_target_mean_s,time_to_target_sd_s,time_to_target_ci95_s,"
      "final_accuracy_mean,final_accuracy_sd,final_accuracy_ci95,epoch_time_mean_s,epoch_time_sd_s,epoch_time_ci95_s,"
      "speedup_mean,speedup_sd,speedup_ci95,speedup_seeds,speedup_reference,clock\n";
  const auto cells = [](const Spread& s) { return exact(s.mean) + ',' + exact(s.sd) + ',' + exact(s.ci95); };
  for (const auto& r : rows)
    csv += csv_cell(r.label) + ',' + csv_cell(r.policy) + ',' + std::to_string(r.seeds) + ',' + std::to_string(r.reached) + ',' + exact(r.target_accuracy) + ',' +
           cells(r.time_to_target_s) + ',' + cells(r.final_accuracy) + ',' + cells(r.epoch_time_s) + ',' + cells(r.speedup) + ',' +
           std::to_string(r.speedup.n) + ',' + csv_cell(r.reference) + ',' + env::clock_name(r.clock) + '\n';
  return csv;
}

}  // namespace experiments
