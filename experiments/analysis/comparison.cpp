#include "experiments/analysis/comparison.hpp"

#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>
#include <sstream>

#include "experiments/analysis/speedup.hpp"
#include "experiments/analysis/table_cells.hpp"

namespace experiments {
namespace {

double mean(const std::vector<double>& values) {
  if (values.empty()) return std::nan("");
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

}  // namespace

double whole_epochs_time_s(const PolicyOutcome& outcome) { return outcome.epochs.empty() ? 0.0 : outcome.epochs.back().clock_ms / 1000.0; }

// A folder without its epochs.csv (the reader takes one without it) has only the clock at the end.
double whole_epochs_time_s(const PolicyResults& results) {
  return results.epoch_rows.empty() ? results.sim_time_s : results.epoch_rows.back().sim_time_s;
}

std::optional<double> speedup(const PolicyOutcome& reference, const PolicyOutcome& outcome) {
  const auto basis = [](const PolicyOutcome& o) {
    return SpeedupBasis{o.time_to_target_s, o.timing_only, whole_epochs_time_s(o), static_cast<std::int64_t>(o.epochs.size())};
  };
  return speedup_over(basis(reference), basis(outcome));
}

std::vector<ComparisonRow> comparison_rows(const std::string& run, const std::vector<PolicyOutcome>& outcomes, double target) {
  std::vector<std::string> kinds;
  for (const auto& o : outcomes) kinds.push_back(o.kind);
  std::vector<ComparisonRow> rows;
  if (outcomes.empty()) return rows;
  const PolicyOutcome& reference = outcomes[speedup_reference_index(kinds)];
  for (const auto& o : outcomes) {
    ComparisonRow row;
    row.run = run;
    row.label = o.label;
    row.policy = o.kind;
    row.target_accuracy = target;
    row.time_to_target_s = o.time_to_target_s;
    row.timing_only = o.timing_only;
    row.reference = reference.label;
    row.speedup = speedup(reference, o);
    row.final_accuracy = o.final_accuracy;
    row.final_loss = o.final_loss;
    row.mean_straggler_effect = o.mean_straggler_effect;
    row.mean_utilization = o.mean_utilization;
    row.mean_idle_s_per_worker = mean(o.idle_s_per_worker);
    row.epochs = static_cast<std::int64_t>(o.epochs.size());
    row.sim_time_s = o.sim_time_s;
    row.epochs_time_s = whole_epochs_time_s(o);
    row.clock = o.clock;
    rows.push_back(row);
  }
  return rows;
}

std::vector<ComparisonRow> comparison_rows(const std::vector<RunResults>& runs) {
  std::vector<ComparisonRow> rows;
  for (const auto& run : runs) {
    std::vector<std::string> kinds;
    for (const auto& p : run.policies) kinds.push_back(p.policy);
    const PolicyResults* reference = run.policies.empty() ? nullptr : &run.policies[speedup_reference_index(kinds)];
    for (const auto& p : run.policies) {
      ComparisonRow row;
      row.run = run.name;
      row.label = p.label;
      row.policy = p.policy;
      row.target_accuracy = p.target_accuracy;
      row.time_to_target_s = p.time_to_target_s;
      row.timing_only = p.timing_only;
      row.reference = reference ? reference->label : std::string();
      const auto basis = [](const PolicyResults& r) { return SpeedupBasis{r.time_to_target_s, r.timing_only, whole_epochs_time_s(r), r.epochs}; };
      if (reference) row.speedup = speedup_over(basis(*reference), basis(p));
      row.final_accuracy = p.final_accuracy;
      row.final_loss = p.final_loss;
      row.mean_straggler_effect = p.mean_straggler_effect;
      row.mean_utilization = p.mean_utilization;
      row.mean_idle_s_per_worker = mean(p.idle_s_per_worker);
      row.epochs = p.epochs;
      row.sim_time_s = p.sim_time_s;
      row.epochs_time_s = whole_epochs_time_s(p);
      row.clock = p.clock;
      rows.push_back(row);
    }
  }
  return rows;
}

std::string comparison_markdown(const std::vector<ComparisonRow>& rows) {
  std::set<std::string> runs, references;
  std::set<double> targets;
  std::set<env::ClockKind> clocks;
  for (const auto& r : rows) {
    runs.insert(r.run);
    references.insert(r.reference);
    targets.insert(r.target_accuracy);
    clocks.insert(r.clock);
  }
  const bool one_clock = clocks.size() <= 1;
  const std::string clock = one_clock && !clocks.empty() ? std::string(env::clock_name(*clocks.begin())) + " time (s)" : "time (s)";
  const bool several_runs = runs.size() > 1;
  // One target and one reference for all rows go in the header; otherwise each row says its own.
  const bool one_target = targets.size() == 1 && std::isfinite(*targets.begin());
  const bool one_reference = references.size() == 1;
  std::ostringstream s;
  s << "| " << (several_runs ? "run | " : "") << "policy | "
    << (one_target ? "time to " + fixed(100 * *targets.begin(), 1) + "% (s)" : std::string("time to target (s)")) << " | "
    << (one_reference ? "speedup vs " + md_cell(*references.begin()) : std::string("speedup")) << " | final acc | final loss | mean SE | utilization | idle/worker (s) | epochs | " << clock << " |\n";
  s << "|" << (several_runs ? "---|" : "") << "---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& r : rows) {
    std::string time = r.timing_only ? "timing only" : r.time_to_target_s ? fixed(*r.time_to_target_s, 2) : "not reached";
    if (!one_target && !r.timing_only) time += " (" + fixed(100 * r.target_accuracy, 1) + "%)";
    std::string up = r.speedup ? fixed(*r.speedup, 2) + "x" : std::string("-");
    if (!one_reference && r.speedup) up += " vs " + md_cell(r.reference);
    s << "| " << (several_runs ? md_cell(r.run) + " | " : "") << md_cell(r.label) << " | " << time << " | " << up << " | "
      << fixed(r.final_accuracy, 4) << " | " << fixed(r.final_loss, 4) << " | " << fixed(r.mean_straggler_effect, 3) << " | "
      << fixed(r.mean_utilization, 3) << " | " << fixed(r.mean_idle_s_per_worker, 2) << " | " << r.epochs << " | "
      << fixed(r.sim_time_s, 2) << (one_clock ? "" : std::string(" (") + env::clock_name(r.clock) + ")") << " |\n";
  }
  return s.str();
}

std::string comparison_csv(const std::vector<ComparisonRow>& rows) {
  std::string csv =
      "run,label,policy,target_accuracy,time_to_target_s,speedup,speedup_reference,final_accuracy,final_loss,"
      "mean_straggler_effect,mean_utilization,mean_idle_s_per_worker,epochs,time_s,clock,timing_only\n";
  for (const auto& r : rows)
    csv += csv_cell(r.run) + ',' + csv_cell(r.label) + ',' + csv_cell(r.policy) + ',' + exact(r.target_accuracy) + ',' +
           exact(r.time_to_target_s) + ',' + exact(r.speedup) + ',' + csv_cell(r.reference) + ',' + exact(r.final_accuracy) + ',' +
           exact(r.final_loss) + ',' + exact(r.mean_straggler_effect) + ',' + exact(r.mean_utilization) + ',' +
           exact(r.mean_idle_s_per_worker) + ',' + std::to_string(r.epochs) + ',' + exact(r.sim_time_s) + ',' + env::clock_name(r.clock) + ',' + (r.timing_only ? "1" : "0") + '\n';
  return csv;
}

}  // namespace experiments
