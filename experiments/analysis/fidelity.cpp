#include "experiments/analysis/fidelity.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/json_diff.hpp"
#include "experiments/analysis/table_cells.hpp"
#include "experiments/results/results_folder.hpp"

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

// "same", "same on every pair ...; in doubt: a/b", or "DIFFERENT: a/b reversed".
std::string verdict(const std::vector<std::string>& reversed, const std::vector<std::string>& in_doubt, int real_runs) {
  const auto list = [](const std::vector<std::string>& pairs) {
    std::string out;
    for (std::size_t i = 0; i < pairs.size(); ++i) out += (i ? ", " : "") + pairs[i];
    return out;
  };
  if (!reversed.empty()) return "DIFFERENT: " + list(reversed) + " reversed";
  if (in_doubt.empty()) return "same";
  return std::string("same on every pair the real run") + (real_runs > 1 ? "s order alike; they order " : " orders; it ties ") + list(in_doubt) +
         (real_runs > 1 ? " differently (within run-to-run noise)" : "");
}

int order(double a, double b) { return a < b ? -1 : (a > b ? 1 : 0); }

// Every pair "a/b" of rows, sorted into those the real runs all order the same strict way and the
// other run reverses, and those the real runs order differently or tie. values[k][i]: real run k's
// value of row i; other[i]: the simulation's (or repeat run's). A missed target is +infinity.
void judge_pairs(const std::vector<std::string>& labels, const std::vector<std::vector<double>>& values, const std::vector<double>& other,
                 std::vector<std::string>& reversed, std::vector<std::string>& in_doubt) {
  for (std::size_t i = 0; i < labels.size(); ++i)
    for (std::size_t j = i + 1; j < labels.size(); ++j) {
      const int first = order(values.front()[i], values.front()[j]);
      bool alike = first != 0;
      for (const auto& run : values) alike = alike && order(run[i], run[j]) == first;
      const std::string pair = labels[i] + "/" + labels[j];
      if (!alike)
        in_doubt.push_back(pair);
      else if (order(other[i], other[j]) != first)
        reversed.push_back(pair);
    }
}

// What a policy folder's config.json says was trained (data, model, training: its target among them)
// and the policy's keys: two runs whose times are compared must agree on them. A calibrated
// simulation does (`orchestra calibrate` copies them from the real run). nullopt when unreadable.
std::optional<nlohmann::json> what_was_trained(const std::string& policy_dir) {
  const std::optional<nlohmann::json> config = recorded_config(policy_dir);
  if (!config) return std::nullopt;
  nlohmann::json trained = nlohmann::json::object();
  for (const char* key : {"data", "model", "training", "policy"})
    if (config->contains(key)) trained[key] = (*config)[key];
  return trained;
}

// Two runs of other experiments were compared without a word (another target, model or data:
// their times are not the same task's).
void check_same_task(const PolicyResults& real, const PolicyResults& other) {
  const auto a = what_was_trained(real.dir), b = what_was_trained(other.dir);
  if (!a || !b || *a == *b) return;
  throw common::DataError(other.dir + ": not a run of the experiment of " + real.dir + ": its config.json differs in " +
                          common::describe_differences(*a, *b, 3) + "; its times are another task's");
}

FidelityReport compare_runs(const std::vector<const RunResults*>& reals, const RunResults& sim, FidelityReference reference) {
  for (const RunResults* real : reals)
    for (const auto& p : real->policies)
      if (p.clock != env::ClockKind::Wall) throw common::DataError(p.dir + ": not a real run (its clock is simulated): give the real run first");
  const bool repeat = reference == FidelityReference::RepeatRun;
  for (const auto& p : sim.policies) {
    if (!repeat && p.clock != env::ClockKind::Simulated) throw common::DataError(p.dir + ": not a simulated run (its clock is wall time)");
    if (repeat && p.clock != env::ClockKind::Wall) throw common::DataError(p.dir + ": not a real run (its clock is simulated): --repeat takes a second real run");
  }
  const RunResults& real = *reals.front();
  FidelityReport report;
  report.reference = reference;
  report.real_runs = static_cast<int>(reals.size());
  std::size_t epochs = 0;
  double sum = 0;
  constexpr double kMissed = std::numeric_limits<double>::infinity();
  std::vector<std::pair<std::string, std::optional<double>>> real_epoch, sim_epoch, real_target, sim_target;
  std::vector<std::string> labels;
  std::vector<std::vector<double>> run_epoch(reals.size()), run_target(reals.size());  // per real run, per row
  std::vector<double> other_epoch, other_target;
  for (const auto& r : real.policies) {
    const PolicyResults* s = find_label(sim, r.label);
    std::vector<const PolicyResults*> runs;
    for (const RunResults* other : reals)
      if (const PolicyResults* p = find_label(*other, r.label)) runs.push_back(p);
    if (!s || runs.size() != reals.size()) {
      report.unmatched.push_back(r.label);
      continue;
    }
    for (const PolicyResults* p : runs) check_same_task(r, *p);
    check_same_task(r, *s);
    FidelityRow row;
    row.label = r.label;
    std::vector<std::vector<double>> re;
    for (const PolicyResults* p : runs) re.push_back(epoch_lengths(*p));
    const auto se = epoch_lengths(*s);
    std::size_t n = se.size();
    for (const auto& lengths : re) n = std::min(n, lengths.size());
    row.sim_epoch_s.assign(se.begin(), se.begin() + static_cast<std::ptrdiff_t>(n));
    for (std::size_t e = 0; e < n; ++e) {
      double mean = 0;
      for (const auto& lengths : re) mean += lengths[e] / static_cast<double>(re.size());
      row.real_epoch_s.push_back(mean);
      const double err = std::abs(se[e] - mean) / mean;
      row.mean_abs_error += err / static_cast<double>(n);
      row.worst_epoch_error = std::max(row.worst_epoch_error, err);
      row.mean_real_epoch_s += mean / static_cast<double>(n);
      row.mean_sim_epoch_s += se[e] / static_cast<double>(n);
      sum += err;
      ++epochs;
    }
    double reached_sum = 0;
    int reached = 0;
    for (std::size_t k = 0; k < runs.size(); ++k) {
      double mean_epoch = 0;
      for (std::size_t e = 0; e < n; ++e) mean_epoch += re[k][e] / static_cast<double>(std::max<std::size_t>(n, 1));
      run_epoch[k].push_back(mean_epoch);
      const auto& ttt = runs[k]->time_to_target_s;
      run_target[k].push_back(ttt ? *ttt : kMissed);
      if (ttt) {
        reached_sum += *ttt;
        ++reached;
      }
    }
    if (reached > 0) row.real_time_to_target_s = reached_sum / reached;
    row.sim_time_to_target_s = s->time_to_target_s;
    other_epoch.push_back(row.mean_sim_epoch_s);
    other_target.push_back(s->time_to_target_s ? *s->time_to_target_s : kMissed);
    if (row.real_time_to_target_s && row.sim_time_to_target_s && *row.real_time_to_target_s > 0)
      row.time_to_target_error = (*row.sim_time_to_target_s - *row.real_time_to_target_s) / *row.real_time_to_target_s;
    report.worst_policy_error = std::max(report.worst_policy_error, row.mean_abs_error);
    real_epoch.emplace_back(row.label, row.mean_real_epoch_s);
    sim_epoch.emplace_back(row.label, row.mean_sim_epoch_s);
    real_target.emplace_back(row.label, row.real_time_to_target_s);
    sim_target.emplace_back(row.label, row.sim_time_to_target_s);
    labels.push_back(row.label);
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
  judge_pairs(labels, run_epoch, other_epoch, report.epoch_pairs_reversed, report.epoch_pairs_in_doubt);
  judge_pairs(labels, run_target, other_target, report.target_pairs_reversed, report.target_pairs_in_doubt);
  report.epoch_ranking_agrees = report.epoch_pairs_reversed.empty();
  report.target_ranking_agrees = report.target_pairs_reversed.empty();
  return report;
}

}  // namespace

FidelityReport compare_fidelity(const RunResults& real, const RunResults& sim, FidelityReference reference) {
  return compare_runs({&real}, sim, reference);
}

FidelityReport compare_fidelity(const std::vector<RunResults>& reals, const RunResults& sim) {
  if (reals.empty()) throw common::DataError("compare: no real run to compare the simulation with");
  std::vector<const RunResults*> runs;
  for (const auto& r : reals) runs.push_back(&r);
  return compare_runs(runs, sim, FidelityReference::Simulation);
}

std::string fidelity_markdown(const FidelityReport& r) {
  const std::string real_epoch = r.real_runs > 1 ? "real epoch (s, mean of " + std::to_string(r.real_runs) + " runs)" : "real epoch (s)";
  const bool repeat = r.reference == FidelityReference::RepeatRun;
  const std::string other = repeat ? "repeat" : "sim";
  const std::string error = repeat ? "difference" : "error";
  std::string t = "| policy | " + real_epoch + " | " + other + " epoch (s) | epoch " + error + " (mean abs) | worst epoch | real time to target (s" +
                  (r.real_runs > 1 ? std::string(", mean") : std::string()) + ") | " + other +
                  " time to target (s) | time to target " + error + " |\n";
  t += "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& row : r.rows)
    t += "| " + md_cell(row.label) + " | " + fixed(row.mean_real_epoch_s, 3) + " | " + fixed(row.mean_sim_epoch_s, 3) + " | " +
         percent(row.mean_abs_error) + " | " + percent(row.worst_epoch_error) + " | " + seconds(row.real_time_to_target_s) + " | " +
         seconds(row.sim_time_to_target_s) + " | " + percent(row.time_to_target_error) + " |\n";
  t += "\nepoch time: mean absolute " + error + " " + percent(r.mean_abs_error) + " over policies and epochs, worst policy " + percent(r.worst_policy_error) + "\n";
  t += "ranking by epoch time: " + verdict(r.epoch_pairs_reversed, r.epoch_pairs_in_doubt, r.real_runs) + " (real: " +
       joined(r.real_by_epoch_time) + "; " + other + ": " + joined(r.sim_by_epoch_time) + ")\n";
  t += "ranking by time to target: " + verdict(r.target_pairs_reversed, r.target_pairs_in_doubt, r.real_runs) + " (real: " +
       joined(r.real_by_time_to_target) + "; " + other + ": " + joined(r.sim_by_time_to_target) + ")\n";
  if (!r.unmatched.empty()) {
    t += "in one run only:";
    for (const auto& l : r.unmatched) t += " " + l;
    t += "\n";
  }
  return t;
}

}  // namespace experiments
