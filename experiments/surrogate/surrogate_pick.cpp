#include "experiments/surrogate/surrogate_pick.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "experiments/analysis/table_cells.hpp"
#include "experiments/runner/evaluation.hpp"

namespace experiments {

std::size_t best_sweep_point(const std::vector<std::pair<int, double>>& misses_and_times) {
  if (misses_and_times.empty()) throw std::invalid_argument("best_sweep_point: an empty sweep");
  std::size_t chosen = 0;
  for (std::size_t k = 1; k < misses_and_times.size(); ++k)
    if (misses_and_times[k] < misses_and_times[chosen]) chosen = k;
  return chosen;
}

std::vector<StaticPick> pick_static_barriers(const std::vector<ControllerRun>& runs) {
  // cluster -> controller -> (sum of log times, misses, seeds, T)
  struct Sum {
    double log_time = 0, barrier_ms = 0;
    int misses = 0, seeds = 0;
  };
  std::map<std::string, std::map<std::string, Sum>> sums;
  for (const auto& r : runs) {
    if (r.role != ControllerRole::Sweep) continue;
    Sum& s = sums[r.cluster][r.controller];
    s.log_time += std::log(r.time_to_target_s ? *r.time_to_target_s : r.run_time_s);
    s.misses += r.time_to_target_s ? 0 : 1;
    s.seeds += 1;
    s.barrier_ms = r.barrier_ms;
  }
  if (sums.empty()) throw common::DataError("no static-T sweep among the runs: nothing to pick from");
  std::vector<StaticPick> picks;
  for (const auto& [cluster, points] : sums) {
    StaticPick p;
    p.cluster = cluster;
    for (const auto& [controller, s] : points)
      p.sweep.push_back({s.barrier_ms, controller, std::exp(s.log_time / s.seeds), s.misses, s.seeds});
    std::sort(p.sweep.begin(), p.sweep.end(), [](const auto& a, const auto& b) { return a.barrier_ms < b.barrier_ms; });
    std::vector<std::pair<int, double>> keys;
    for (const auto& point : p.sweep) keys.push_back({point.misses, point.time_s});
    p.chosen = best_sweep_point(keys);
    picks.push_back(std::move(p));
  }
  return picks;
}

std::string static_picks_markdown(const std::vector<StaticPick>& picks) {
  std::string md =
      "Per cluster the sweep's T with the fewest misses on the surrogate, then the shortest time to target (geometric mean over "
      "seeds, a miss at its run time); in a config: `{name: fixed-t, T_ms: T}`.\n\n"
      "| cluster | T (ms) | time to target on the surrogate (s) | misses | the sweep (ms: s) |\n|---|---:|---:|---:|---|\n";
  for (const auto& p : picks) {
    std::string sweep;
    for (const auto& point : p.sweep)
      sweep += (sweep.empty() ? "" : ", ") + fixed(point.barrier_ms, 0) + ": " + fixed(point.time_s, 2) + (point.misses ? "*" : "");
    md += "| " + p.cluster + " | " + fixed(p.pick().barrier_ms, 0) + " | " + fixed(p.pick().time_s, 2) + " | " +
          std::to_string(p.pick().misses) + " of " + std::to_string(p.pick().seeds) + " | " + sweep + " |\n";
  }
  return md + "\n(* a point that missed the target on some seed.)\n";
}

std::string static_picks_csv(const std::vector<StaticPick>& picks) {
  std::string csv = "cluster,barrier_ms,surrogate_s,misses,seeds\n";
  for (const auto& p : picks)
    csv += p.cluster + "," + fixed(p.pick().barrier_ms, 3) + "," + fixed(p.pick().time_s, 4) + "," + std::to_string(p.pick().misses) + "," +
           std::to_string(p.pick().seeds) + "\n";
  return csv;
}

PickRunResult run_surrogate_pick(const FidelityRunOptions& options) {
  if (!options.real_from.empty()) throw common::UsageError("pick runs on the surrogate alone: drop --real");
  PickRunResult result;
  result.surrogate_dir = evaluate_on_surrogate(options, write_surrogate_variants(options));
  result.picks = pick_static_barriers(read_evaluation_runs(result.surrogate_dir));
  const std::filesystem::path out(options.out_dir);
  const std::string md = (out / "pick.md").string(), csv = (out / "pick.csv").string();
  common::write_file_atomic(md, "# Static barriers picked on the surrogate of training\n\nSurrogate: " + options.surrogate +
                                    "; its runs: " + result.surrogate_dir + ".\n\n" + static_picks_markdown(result.picks));
  common::write_file_atomic(csv, static_picks_csv(result.picks));
  result.files = {md, csv};
  return result;
}

}  // namespace experiments
