#include "experiments/surrogate/surrogate_fidelity.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "common/errors.hpp"
#include "experiments/surrogate/surrogate_pick.hpp"

namespace experiments {
namespace {

using Key = std::tuple<std::string, std::uint64_t, std::string>;  // cluster, seed, controller

std::map<Key, const ControllerRun*> index_of(const std::vector<ControllerRun>& runs) {
  std::map<Key, const ControllerRun*> out;
  for (const auto& r : runs) out[{r.cluster, r.seed, r.controller}] = &r;
  return out;
}

// `orchestra evaluate`'s reading of a run: its time to target, or its run time when it missed.
double time_of(const ControllerRun& r) { return r.time_to_target_s ? *r.time_to_target_s : r.run_time_s; }

std::string fixed_digits(double x, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, x);
  return buffer;
}

std::string percent(double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%+.1f%%", 100 * x);
  return buffer;
}

std::string missed(int misses, int seeds) {
  return misses > 0 ? " (" + std::to_string(misses) + " of " + std::to_string(seeds) + " missed)" : "";
}

std::string with_misses(double s, int misses, int seeds) { return fixed_digits(s, 2) + missed(misses, seeds); }

}  // namespace

double ClusterFidelity::sweep_mean_abs_error() const {
  double sum = 0;
  for (const auto& p : sweep) sum += std::fabs(p.error());
  return sweep.empty() ? 0.0 : sum / static_cast<double>(sweep.size());
}

SurrogateFidelity compare_surrogate(const std::vector<ControllerRun>& real, const std::vector<ControllerRun>& surrogate) {
  const auto real_index = index_of(real), surrogate_index = index_of(surrogate);
  std::map<std::string, std::map<std::string, std::vector<std::pair<const ControllerRun*, const ControllerRun*>>>> pairs;
  std::set<std::uint64_t> seeds;
  for (const auto& [key, r] : real_index) {
    const auto it = surrogate_index.find(key);
    if (it == surrogate_index.end()) continue;
    pairs[std::get<0>(key)][std::get<2>(key)].push_back({r, it->second});
    seeds.insert(std::get<1>(key));
  }
  if (pairs.empty()) throw common::DataError("the real and the surrogate evaluations share no cluster, seed and controller");
  SurrogateFidelity out;
  out.seeds.assign(seeds.begin(), seeds.end());
  double error_sweep = 0;
  int sweep_points = 0;
  for (const auto& [cluster, controllers] : pairs) {
    ClusterFidelity c;
    c.cluster = cluster;
    for (const auto& [controller, runs] : controllers) {
      ControllerTimes t;
      t.controller = controller;
      t.barrier_ms = runs.front().first->barrier_ms;
      double real_log = 0, surrogate_log = 0;
      for (const auto& [r, s] : runs) {
        real_log += std::log(time_of(*r));
        surrogate_log += std::log(time_of(*s));
        t.real_misses += r->time_to_target_s ? 0 : 1;
        t.surrogate_misses += s->time_to_target_s ? 0 : 1;
        t.real_accuracy += r->final_accuracy;
        t.surrogate_accuracy += s->final_accuracy;
      }
      t.seeds = static_cast<int>(runs.size());
      t.real_accuracy /= t.seeds;
      t.surrogate_accuracy /= t.seeds;
      t.real_s = std::exp(real_log / t.seeds);
      t.surrogate_s = std::exp(surrogate_log / t.seeds);
      (runs.front().first->role == ControllerRole::Sweep ? c.sweep : c.others).push_back(t);
    }
    std::sort(c.sweep.begin(), c.sweep.end(), [](const auto& a, const auto& b) { return a.barrier_ms < b.barrier_ms; });
    if (c.sweep.empty()) continue;
    // Each side's best static T by the one rule (the fewest misses, then the time or, among
    // points that missed, the accuracy).
    std::vector<SweepPointScore> real_keys, surrogate_keys;
    for (const auto& t : c.sweep) {
      real_keys.push_back({t.real_misses, t.real_s, t.real_accuracy});
      surrogate_keys.push_back({t.surrogate_misses, t.surrogate_s, t.surrogate_accuracy});
    }
    c.real_best = static_cast<int>(best_sweep_point(real_keys));
    c.surrogate_best = static_cast<int>(best_sweep_point(surrogate_keys));
    out.best_same_or_adjacent += c.best_same_or_adjacent() ? 1 : 0;
    out.within_10_percent += std::fabs(c.error_at_real_best()) <= 0.10 ? 1 : 0;
    out.mean_abs_error_at_best += std::fabs(c.error_at_real_best());
    for (const auto& p : c.sweep) {
      error_sweep += std::fabs(p.error());
      ++sweep_points;
    }
    out.clusters.push_back(std::move(c));
  }
  if (!out.clusters.empty()) out.mean_abs_error_at_best /= static_cast<double>(out.clusters.size());
  double pick_log = 0;
  std::map<std::string, std::pair<double, int>> others_log;  // controller: sum of logs, clusters
  for (const auto& c : out.clusters) {
    const double pick = c.pick_over_real_best();
    pick_log += std::log(pick);
    out.pick_real_misses += c.sweep[static_cast<std::size_t>(c.surrogate_best)].real_misses;
    out.pick_real_runs += c.sweep[static_cast<std::size_t>(c.surrogate_best)].seeds;
    if (pick > out.pick_worst || out.pick_worst_cluster.empty()) {
      out.pick_worst = pick;
      out.pick_worst_cluster = c.cluster;
    }
    for (const auto& t : c.others) {
      if (!others_log.count(t.controller)) out.others_over_real_best.push_back({t.controller, 1, 0});
      auto& [sum, n] = others_log[t.controller];
      sum += std::log(t.real_s / c.real_oracle_s());
      ++n;
    }
  }
  if (!out.clusters.empty()) out.pick_over_real_best = std::exp(pick_log / static_cast<double>(out.clusters.size()));
  for (auto& o : out.others_over_real_best) {
    const auto& [sum, n] = others_log[o.controller];
    o.clusters = n;
    o.geomean = std::exp(sum / n);
  }
  out.mean_abs_error_sweep = sweep_points > 0 ? error_sweep / sweep_points : 0.0;
  return out;
}

std::string surrogate_fidelity_markdown(const SurrogateFidelity& f) {
  std::string seeds;
  for (std::uint64_t s : f.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(s);
  std::string md = "Time to target (s), geometric mean over seeds " + seeds +
                   " (a miss at its run time); best static T of the sweep on each side.\n\n"
                   "| cluster | best T real (ms) | best T surrogate (ms) | same or adjacent | time at real best T: real | surrogate | error | "
                   "oracle time: real | surrogate | error | sweep mean abs error | surrogate's T in real training |\n"
                   "|---|---:|---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& c : f.clusters) {
    const auto& rb = c.sweep[static_cast<std::size_t>(c.real_best)];
    const auto& sb = c.sweep[static_cast<std::size_t>(c.surrogate_best)];
    md += "| " + c.cluster + " | " + fixed_digits(rb.barrier_ms, 0) + " | " + fixed_digits(sb.barrier_ms, 0) + " | " +
          (c.best_same_or_adjacent() ? (c.real_best == c.surrogate_best ? "same" : "adjacent") : "**no**") + " | " +
          with_misses(rb.real_s, rb.real_misses, rb.seeds) + " | " + with_misses(rb.surrogate_s, rb.surrogate_misses, rb.seeds) + " | " +
          percent(c.error_at_real_best()) + " | " + fixed_digits(c.real_oracle_s(), 2) + " | " + fixed_digits(c.surrogate_oracle_s(), 2) + " | " +
          percent(c.oracle_error()) + " | " + fixed_digits(100 * c.sweep_mean_abs_error(), 1) + "% | " +
          fixed_digits(c.pick_over_real_best(), 3) + "x" + missed(sb.real_misses, sb.seeds) + " |\n";
  }
  md += "\nBest static T the same or adjacent on " + std::to_string(f.best_same_or_adjacent) + " of " + std::to_string(f.clusters.size()) +
        " clusters; time at the real best T within 10% on " + std::to_string(f.within_10_percent) + " of " +
        std::to_string(f.clusters.size()) + " (mean |error| " + fixed_digits(100 * f.mean_abs_error_at_best, 1) + "%); over every sweep point " +
        fixed_digits(100 * f.mean_abs_error_sweep, 1) + "% mean |error|.\n\n";
  // The surrogate's pick as a baseline: what it costs in real training, beside every controller.
  md += "In real training, over the real best static T (geometric mean over clusters): the static T chosen on the surrogate " +
        fixed_digits(f.pick_over_real_best, 3) + "x (at most " + fixed_digits(f.pick_worst, 2) + "x, " + f.pick_worst_cluster + "; " +
        std::to_string(f.pick_real_misses) + " of its " + std::to_string(f.pick_real_runs) + " real runs missed the target)";
  for (const auto& o : f.others_over_real_best) {
    md += "; " + o.controller + " " + fixed_digits(o.geomean, 3) + "x";
    if (o.clusters != static_cast<int>(f.clusters.size()))
      md += " (" + std::to_string(o.clusters) + " of " + std::to_string(f.clusters.size()) + " clusters)";
  }
  md += ".\n\n";
  md += "Per cluster and controller (real / surrogate, s):\n\n| cluster | controller | real | surrogate | error |\n|---|---|---:|---:|---:|\n";
  for (const auto& c : f.clusters) {
    for (const auto& t : c.others)
      md += "| " + c.cluster + " | " + t.controller + " | " + with_misses(t.real_s, t.real_misses, t.seeds) + " | " +
            with_misses(t.surrogate_s, t.surrogate_misses, t.seeds) + " | " + percent(t.error()) + " |\n";
    for (const auto& t : c.sweep)
      md += "| " + c.cluster + " | " + t.controller + " | " + with_misses(t.real_s, t.real_misses, t.seeds) + " | " +
            with_misses(t.surrogate_s, t.surrogate_misses, t.seeds) + " | " + percent(t.error()) + " |\n";
  }
  return md;
}

std::string surrogate_fidelity_csv(const SurrogateFidelity& f) {
  std::string csv = "cluster,controller,barrier_ms,seeds,real_s,real_misses,surrogate_s,surrogate_misses,error,real_best,surrogate_best\n";
  for (const auto& c : f.clusters) {
    const auto row = [&](const ControllerTimes& t, bool sweep, std::size_t k) {
      csv += c.cluster + "," + t.controller + "," + fixed_digits(t.barrier_ms, 3) + "," + std::to_string(t.seeds) + "," + fixed_digits(t.real_s, 4) + "," +
             std::to_string(t.real_misses) + "," + fixed_digits(t.surrogate_s, 4) + "," + std::to_string(t.surrogate_misses) + "," +
             fixed_digits(t.error(), 5) + "," + (sweep && static_cast<int>(k) == c.real_best ? "1" : "0") + "," +
             (sweep && static_cast<int>(k) == c.surrogate_best ? "1" : "0") + "\n";
    };
    for (std::size_t k = 0; k < c.others.size(); ++k) row(c.others[k], false, k);
    for (std::size_t k = 0; k < c.sweep.size(); ++k) row(c.sweep[k], true, k);
  }
  return csv;
}

}  // namespace experiments
