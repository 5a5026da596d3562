#include "study/analysis/fidelity.hpp"

#include <algorithm>
#include <cmath>

#include "common/errors.hpp"
#include "study/analysis/table_cells.hpp"

namespace experiments {
namespace {

std::vector<double> epoch_lengths(const PolicyResults& p) {
  std::vector<double> out;
  double previous = 0;
  for (const auto& e : p.epoch_rows) {
    out.push_back(e.sim_time_s - previous);
    previous = e.sim_time_s;
  }
  return out;
}

const PolicyResults* find_label(const RunResults& run, const std::string& label) {
  for (const auto& p : run.policies)
    if (p.label == label) return &p;
  return nullptr;
}

// Fastest first; ties and missing values (a missed target) last, in label order, so the order is
// deterministic.
std::vector<std::string> ranked(std::vector<std::pair<std::string, std::optional<double>>> items) {
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    if (a.second.has_value() != b.second.has_value()) return a.second.has_value();
    if (a.second && *a.second != *b.second) return *a.second < *b.second;
    return a.first < b.first;
  });
  std::vector<std::string> out;
  for (const auto& i : items) out.push_back(i.first);
  return out;
}

std::string percent(const std::optional<double>& v) { return v ? fixed(100.0 * *v, 1) + "%" : "-"; }
std::string seconds(const std::optional<double>& v) { return v ? fixed(*v, 2) : "not reached"; }

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? " < " : "") + v[i];
  return out;
}

}  // namespace

FidelityReport compare_fidelity(const RunResults& real, const RunResults& sim, FidelityReference reference) {
  for (const auto& p : real.policies)
    if (p.clock != env::ClockKind::Wall) throw common::DataError(p.dir + ": not a real run (its clock is simulated): give the real run first");
  const bool repeat = reference == FidelityReference::RepeatRun;
  for (const auto& p : sim.policies) {
    if (!repeat && p.clock != env::ClockKind::Simulated) throw common::DataError(p.dir + ": not a simulated run (its clock is wall time)");
    if (repeat && p.clock != env::ClockKind::Wall) throw common::DataError(p.dir + ": not a real run (its clock is simulated): --repeat takes a second real run");
  }
  FidelityReport report;
  report.reference = reference;
  std::size_t epochs = 0;
  double sum = 0;
  std::vector<std::pair<std::string, std::optional<double>>> real_epoch, sim_epoch, real_target, sim_target;
  for (const auto& r : real.policies) {
    const PolicyResults* s = find_label(sim, r.label);
    if (!s) {
      report.unmatched.push_back(r.label);
      continue;
    }
    FidelityRow row;
    row.label = r.label;
    const auto re = epoch_lengths(r), se = epoch_lengths(*s);
    const std::size_t n = std::min(re.size(), se.size());
    row.real_epoch_s.assign(re.begin(), re.begin() + static_cast<std::ptrdiff_t>(n));
    row.sim_epoch_s.assign(se.begin(), se.begin() + static_cast<std::ptrdiff_t>(n));
    for (std::size_t e = 0; e < n; ++e) {
      const double err = std::abs(se[e] - re[e]) / re[e];
      row.mean_abs_error += err / static_cast<double>(n);
      row.worst_epoch_error = std::max(row.worst_epoch_error, err);
      row.mean_real_epoch_s += re[e] / static_cast<double>(n);
      row.mean_sim_epoch_s += se[e] / static_cast<double>(n);
      sum += err;
      ++epochs;
    }
    row.real_time_to_target_s = r.time_to_target_s;
    row.sim_time_to_target_s = s->time_to_target_s;
    if (r.time_to_target_s && s->time_to_target_s && *r.time_to_target_s > 0)
      row.time_to_target_error = (*s->time_to_target_s - *r.time_to_target_s) / *r.time_to_target_s;
    report.worst_policy_error = std::max(report.worst_policy_error, row.mean_abs_error);
    real_epoch.emplace_back(row.label, row.mean_real_epoch_s);
    sim_epoch.emplace_back(row.label, row.mean_sim_epoch_s);
    real_target.emplace_back(row.label, row.real_time_to_target_s);
    sim_target.emplace_back(row.label, row.sim_time_to_target_s);
    report.rows.push_back(std::move(row));
  }
  for (const auto& s : sim.policies)
    if (!find_label(real, s.label)) report.unmatched.push_back(s.label);
  if (report.rows.empty()) throw common::DataError(real.dir + " and " + sim.dir + " share no policy label: nothing to compare");
  report.mean_abs_error = epochs ? sum / static_cast<double>(epochs) : 0.0;
  report.real_by_epoch_time = ranked(real_epoch);
  report.sim_by_epoch_time = ranked(sim_epoch);
  report.real_by_time_to_target = ranked(real_target);
  report.sim_by_time_to_target = ranked(sim_target);
  report.epoch_ranking_agrees = report.real_by_epoch_time == report.sim_by_epoch_time;
  report.target_ranking_agrees = report.real_by_time_to_target == report.sim_by_time_to_target;
  return report;
}

std::string fidelity_markdown(const FidelityReport& r) {
  const bool repeat = r.reference == FidelityReference::RepeatRun;
  const std::string other = repeat ? "repeat" : "sim";
  const std::string error = repeat ? "difference" : "error";
  std::string t = "| policy | real epoch (s) | " + other + " epoch (s) | epoch " + error + " (mean abs) | worst epoch | real time to target (s) | " + other +
                  " time to target (s) | time to target " + error + " |\n";
  t += "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& row : r.rows)
    t += "| " + md_cell(row.label) + " | " + fixed(row.mean_real_epoch_s, 3) + " | " + fixed(row.mean_sim_epoch_s, 3) + " | " +
         percent(row.mean_abs_error) + " | " + percent(row.worst_epoch_error) + " | " + seconds(row.real_time_to_target_s) + " | " +
         seconds(row.sim_time_to_target_s) + " | " + percent(row.time_to_target_error) + " |\n";
  t += "\nepoch time: mean absolute " + error + " " + percent(r.mean_abs_error) + " over policies and epochs, worst policy " + percent(r.worst_policy_error) + "\n";
  t += "ranking by epoch time: " + std::string(r.epoch_ranking_agrees ? "same" : "DIFFERENT") + " (real: " + joined(r.real_by_epoch_time) +
       "; " + other + ": " + joined(r.sim_by_epoch_time) + ")\n";
  t += "ranking by time to target: " + std::string(r.target_ranking_agrees ? "same" : "DIFFERENT") + " (real: " + joined(r.real_by_time_to_target) +
       "; " + other + ": " + joined(r.sim_by_time_to_target) + ")\n";
  if (!r.unmatched.empty()) {
    t += "in one run only:";
    for (const auto& l : r.unmatched) t += " " + l;
    t += "\n";
  }
  return t;
}

}  // namespace experiments
