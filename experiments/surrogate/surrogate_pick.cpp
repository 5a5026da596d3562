#include "experiments/surrogate/surrogate_pick.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "experiments/analysis/table_cells.hpp"
#include "experiments/runner/evaluation.hpp"

namespace experiments {

std::size_t best_sweep_point(const std::vector<SweepPointScore>& points) {
  if (points.empty()) throw std::invalid_argument("best_sweep_point: an empty sweep");
  const auto better = [](const SweepPointScore& a, const SweepPointScore& b) {
    if (a.misses != b.misses) return a.misses < b.misses;
    if (a.misses > 0 && a.accuracy != b.accuracy) return a.accuracy > b.accuracy;
    return a.time_s < b.time_s;
  };
  std::size_t chosen = 0;
  for (std::size_t k = 1; k < points.size(); ++k)
    if (better(points[k], points[chosen])) chosen = k;
  return chosen;
}

std::vector<StaticPick> pick_static_barriers(const std::vector<ControllerRun>& runs) {
  // cluster -> controller -> (sum of log times, sum of accuracies, misses, seeds, T)
  struct Sum {
    double log_time = 0, accuracy = 0, barrier_ms = 0;
    int misses = 0, seeds = 0;
  };
  std::map<std::string, std::map<std::string, Sum>> sums;
  for (const auto& r : runs) {
    if (r.role != ControllerRole::Sweep) continue;
    Sum& s = sums[r.cluster][r.controller];
    s.log_time += std::log(r.time_to_target_s ? *r.time_to_target_s : r.run_time_s);
    s.accuracy += r.final_accuracy;
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
      p.sweep.push_back({s.barrier_ms, controller, std::exp(s.log_time / s.seeds), s.accuracy / s.seeds, s.misses, s.seeds});
    std::sort(p.sweep.begin(), p.sweep.end(), [](const auto& a, const auto& b) { return a.barrier_ms < b.barrier_ms; });
    std::vector<SweepPointScore> keys;
    for (const auto& point : p.sweep) keys.push_back({point.misses, point.time_s, point.accuracy});
    p.chosen = best_sweep_point(keys);
    picks.push_back(std::move(p));
  }
  return picks;
}

std::string static_picks_markdown(const std::vector<StaticPick>& picks) {
  std::string md =
      "Per cluster the sweep's T with the fewest misses on the surrogate, then the shortest time to target (geometric mean over "
      "seeds, a miss at its run time; among points that missed as often, the highest mean final accuracy first); in a config: "
      "`{name: fixed-t, T_ms: T}`; or name `planned-t`, which plans it at the start of each run (the same T given the sweep's "
      "decision interval, the policy's; orchestra-lcm where the pick is a guess, below).\n\n"
      "| cluster | T (ms) | time to target on the surrogate (s) | misses | the sweep (ms: s) |\n|---|---:|---:|---:|---|\n";
  for (const auto& p : picks) {
    std::string sweep;
    for (const auto& point : p.sweep)
      sweep += (sweep.empty() ? "" : ", ") + fixed(point.barrier_ms, 0) + ": " + fixed(point.time_s, 2) + (point.misses ? "*" : "");
    md += "| " + p.cluster + " | " + fixed(p.pick().barrier_ms, 0) + " | " + fixed(p.pick().time_s, 2) + " | " +
          std::to_string(p.pick().misses) + " of " + std::to_string(p.pick().seeds) + " | " + sweep + " |\n";
  }
  md += "\n(* a point that missed the target on some seed.)\n";
  // Where every point missed, the surrogate says little about this cluster (on drawn-90012 of the
  // seventeenth suite it ended below 77% at every T where real training reached 84%): say so.
  std::string unsure;
  for (const auto& p : picks)
    if (p.pick().misses > 0) unsure += (unsure.empty() ? "" : ", ") + p.cluster;
  if (!unsure.empty())
    md += "\nNo T reached the target on every seed of the surrogate on " + unsure +
          ": there the pick is the point nearest the target, a guess; a short real sweep is safer.\n";
  return md;
}

std::string static_picks_csv(const std::vector<StaticPick>& picks) {
  std::string csv = "cluster,barrier_ms,surrogate_s,misses,seeds\n";
  for (const auto& p : picks)
    csv += p.cluster + "," + fixed(p.pick().barrier_ms, 3) + "," + fixed(p.pick().time_s, 4) + "," + std::to_string(p.pick().misses) + "," +
           std::to_string(p.pick().seeds) + "\n";
  return csv;
}

std::vector<ControllerRun> picked_runs(const std::vector<StaticPick>& picks, const std::vector<ControllerRun>& real) {
  std::map<std::string, std::string> label_of;  // cluster -> the picked sweep point's label
  for (const auto& p : picks) label_of[p.cluster] = p.pick().controller;
  std::map<std::string, std::set<std::uint64_t>> seeds, picked_seeds;
  std::vector<ControllerRun> out;
  for (const auto& r : real) {
    seeds[r.cluster].insert(r.seed);
    const auto it = label_of.find(r.cluster);
    if (it == label_of.end()) throw common::DataError("the real evaluation ran " + r.cluster + ", which has no pick");
    if (r.role != ControllerRole::Sweep || r.controller != it->second) continue;
    ControllerRun copy = r;
    copy.controller = kSurrogatePick;
    copy.role = ControllerRole::Judged;
    out.push_back(copy);
    picked_seeds[r.cluster].insert(r.seed);
  }
  for (const auto& [cluster, ran] : seeds)
    if (picked_seeds[cluster] != ran)
      throw common::DataError(cluster + ": the real evaluation has no run of the picked " + label_of[cluster] + " on every seed (another config or workload?)");
  return out;
}

namespace {

// "101-110" for consecutive seeds, else "1, 5, 9".
std::string seed_list_text(const std::vector<std::uint64_t>& seeds) {
  bool consecutive = seeds.size() > 1;
  for (std::size_t k = 1; k < seeds.size(); ++k) consecutive = consecutive && seeds[k] == seeds[k - 1] + 1;
  if (consecutive) return std::to_string(seeds.front()) + "-" + std::to_string(seeds.back());
  std::string text;
  for (auto s : seeds) text += (text.empty() ? "" : ", ") + std::to_string(s);
  return text;
}

// A planning seed the real runs were scored on: the pick would have seen their draws.
void refuse_shared_seeds(const std::vector<std::uint64_t>& planning, const std::vector<ControllerRun>& real) {
  for (const auto& r : real)
    if (std::find(planning.begin(), planning.end(), r.seed) != planning.end())
      throw common::UsageError("pick: planning seed " + std::to_string(r.seed) +
                               " is one the real evaluation ran, so the pick would see the draws it is judged on: plan on other --seeds "
                               "(default 101-110)");
}

}  // namespace

PickRunResult run_surrogate_pick(const FidelityRunOptions& options) {
  const std::vector<ControllerRun> real = read_evaluations(options.real_from);
  refuse_shared_seeds(options.seeds, real);
  PickRunResult result;
  result.surrogate_dir = evaluate_on_surrogate(options, write_surrogate_variants(options));
  result.picks = pick_static_barriers(read_evaluation_runs(result.surrogate_dir));
  const std::filesystem::path out(options.out_dir);
  const std::string md = (out / "pick.md").string(), csv = (out / "pick.csv").string();
  common::write_file_atomic(md, "# Static barriers picked on the surrogate of training\n\nSurrogate: " + options.surrogate +
                                    "; its runs: " + result.surrogate_dir + ".\n\n" + static_picks_markdown(result.picks));
  common::write_file_atomic(csv, static_picks_csv(result.picks));
  result.files = {md, csv};
  if (real.empty()) return result;
  std::vector<ControllerRun> runs = real;
  const std::vector<ControllerRun> pick = picked_runs(result.picks, real);
  runs.insert(runs.end(), pick.begin(), pick.end());
  result.judged = summarize_evaluation(runs);
  std::string real_names;
  for (const auto& dir : options.real_from) real_names += (real_names.empty() ? "" : ", ") + dir;
  const std::string judged_md = (out / "judged.md").string(), judged_csv = (out / "judged.csv").string();
  common::write_file_atomic(judged_md, "# The surrogate's static T judged in real training\n\nPicked on the surrogate (seeds " +
                                           seed_list_text(options.seeds) + "); judged on the real runs of " + real_names +
                                           ", whose sweep ran each picked T (`" + kSurrogatePick + "`).\n\n" +
                                           evaluation_markdown(*result.judged));
  common::write_file_atomic(judged_csv, evaluation_overall_csv(*result.judged));
  result.files.push_back(judged_md);
  result.files.push_back(judged_csv);
  return result;
}

}  // namespace experiments
