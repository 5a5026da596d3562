#include "experiments/analysis/controller_evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "experiments/analysis/seed_stats.hpp"
#include "experiments/analysis/table_cells.hpp"

namespace experiments {
namespace {

double geomean(const std::vector<double>& values) {
  if (values.empty()) return NAN;
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

template <typename T>
void add_unique(std::vector<T>& list, const T& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

// The runs and the reference judged with them.
std::vector<ControllerRun> with_reference(const std::vector<ControllerRun>& runs) {
  std::vector<ControllerRun> all = runs;
  for (auto& r : static_tuned_on_other_seeds(runs)) all.push_back(std::move(r));
  return all;
}

const ControllerScore* find_score(const std::vector<ControllerScore>& scores, const std::string& controller) {
  const auto it = std::find_if(scores.begin(), scores.end(), [&](const ControllerScore& s) { return s.controller == controller; });
  return it == scores.end() ? nullptr : &*it;
}

// The pairing of `score` with `reference`, or nullptr (none judged, or the reference itself).
const RatioInterval* find_pairing(const ControllerScore& score, const std::string& reference) {
  const auto it = std::find_if(score.paired.begin(), score.paired.end(), [&](const PairedRatio& p) { return p.reference == reference; });
  return it == score.paired.end() ? nullptr : &it->ratio;
}

// EvaluationSummary::static_in_hindsight's per-cluster value: the best of the sweep's T, each
// scored over every seed with an oracle (a T not run on one of them is not a candidate), chosen
// as static_tuned_on_other_seeds chooses: fewest misses, then the geometric mean (a miss enters
// at its run time, which can be shorter than the oracle's where the budget ran out first).
std::optional<double> best_static_in_hindsight(const std::vector<ControllerRun>& runs, const ClusterScore& cluster) {
  struct Candidate {
    int misses = 0;
    std::vector<double> ratios;  // on each seed with an oracle
  };
  std::map<double, Candidate> by_barrier;
  for (const auto& r : runs) {
    if (r.role != ControllerRole::Sweep || r.cluster != cluster.cluster) continue;
    const auto oracle = cluster.oracle_s.find(r.seed);
    if (oracle == cluster.oracle_s.end()) continue;
    Candidate& c = by_barrier[r.barrier_ms];
    if (!r.time_to_target_s) ++c.misses;
    c.ratios.push_back((r.time_to_target_s ? *r.time_to_target_s : r.run_time_s) / oracle->second);
  }
  std::optional<std::pair<int, double>> best;  // misses, geometric mean
  for (const auto& [barrier_ms, c] : by_barrier) {
    if (c.ratios.size() != cluster.oracle_s.size()) continue;
    const std::pair<int, double> score{c.misses, geomean(c.ratios)};
    if (!best || score < *best) best = score;
  }
  if (!best) return std::nullopt;
  return best->second;
}

}  // namespace

RatioInterval ratio_interval(const std::vector<double>& ratios) {
  std::vector<double> logs;
  for (double r : ratios)
    if (std::isfinite(r) && r > 0) logs.push_back(std::log(r));
  RatioInterval out;
  out.clusters = static_cast<int>(logs.size());
  if (logs.empty()) return out;
  const Spread s = spread_of(logs);
  out.geomean = std::exp(s.mean);
  if (logs.size() >= 2) {
    out.low = std::exp(s.mean - s.ci95);
    out.high = std::exp(s.mean + s.ci95);
  }
  return out;
}

std::vector<ControllerRun> static_tuned_on_other_seeds(const std::vector<ControllerRun>& runs) {
  std::vector<std::string> clusters;
  std::map<std::string, std::map<std::uint64_t, std::map<double, const ControllerRun*>>> sweeps;  // cluster, seed, T
  for (const auto& r : runs) {
    if (r.role != ControllerRole::Sweep) continue;
    add_unique(clusters, r.cluster);
    sweeps[r.cluster][r.seed][r.barrier_ms] = &r;
  }
  std::vector<ControllerRun> out;
  for (const auto& name : clusters) {
    const auto& seeds = sweeps.at(name);
    if (seeds.size() < 2) continue;
    for (const auto& [seed, points] : seeds) {
      struct Choice {
        int misses = 0;
        double log_time_sum = 0;
        double barrier_ms = 0;
      };
      std::optional<Choice> best;
      for (const auto& [barrier_ms, unused] : points) {  // ascending T: a tie keeps the smaller
        Choice choice;
        choice.barrier_ms = barrier_ms;
        bool run_everywhere = true;
        for (const auto& [other, other_points] : seeds) {
          if (other == seed) continue;
          const auto there = other_points.find(barrier_ms);
          if (there == other_points.end()) {
            run_everywhere = false;
            break;
          }
          const ControllerRun& r = *there->second;
          if (!r.time_to_target_s) ++choice.misses;
          choice.log_time_sum += std::log(r.time_to_target_s ? *r.time_to_target_s : r.run_time_s);
        }
        if (!run_everywhere) continue;
        if (!best || choice.misses < best->misses || (choice.misses == best->misses && choice.log_time_sum < best->log_time_sum))
          best = choice;
      }
      if (!best) continue;
      ControllerRun chosen = *points.at(best->barrier_ms);
      chosen.controller = kStaticTunedOnOtherSeeds;
      chosen.role = ControllerRole::Judged;
      out.push_back(std::move(chosen));
    }
  }
  return out;
}

EvaluationSummary summarize_evaluation(const std::vector<ControllerRun>& judged_runs) {
  const std::vector<ControllerRun> runs = with_reference(judged_runs);
  std::vector<std::string> clusters, judged;
  for (const auto& r : runs) {
    add_unique(clusters, r.cluster);
    if (r.role == ControllerRole::Judged) add_unique(judged, r.controller);
  }
  EvaluationSummary out;
  for (const auto& name : clusters) {
    ClusterScore cluster;
    cluster.cluster = name;
    std::vector<std::uint64_t> seeds;
    for (const auto& r : runs) {
      if (r.cluster != name) continue;
      add_unique(seeds, r.seed);
      if (r.role != ControllerRole::Sweep || !r.time_to_target_s) continue;
      const auto best = cluster.oracle_s.find(r.seed);
      if (best == cluster.oracle_s.end() || *r.time_to_target_s < best->second) {
        cluster.oracle_s[r.seed] = *r.time_to_target_s;
        cluster.oracle_barrier_ms[r.seed] = r.barrier_ms;
      }
    }
    for (std::uint64_t s : seeds)
      if (!cluster.oracle_s.count(s)) cluster.seeds_without_oracle.push_back(s);
    for (const auto& controller : judged) {
      ControllerScore score;
      score.controller = controller;
      for (std::uint64_t s : seeds)
        for (const auto& r : runs) {
          if (r.cluster != name || r.seed != s || r.controller != controller) continue;
          ++score.runs;
          if (!r.time_to_target_s) ++score.misses;
          const auto oracle = cluster.oracle_s.find(s);
          if (oracle == cluster.oracle_s.end()) continue;
          const double time = r.time_to_target_s ? *r.time_to_target_s : r.run_time_s;
          score.ratios.push_back(time / oracle->second);
        }
      if (score.runs == 0) continue;
      score.geomean_ratio = geomean(score.ratios);
      cluster.controllers.push_back(score);
    }
    out.clusters.push_back(cluster);
  }
  for (const std::string& reference : paired_references())
    if (std::find(judged.begin(), judged.end(), reference) != judged.end()) out.references.push_back(reference);
  // Candidates: what this evaluation judges beyond the references and evaluate's random moves.
  // Where there are several (snapshots, or a policy and its --also variants), each is also paired
  // with the first, so that a change is read cluster by cluster against what it changes.
  std::vector<std::string> candidates;
  std::vector<std::string> not_candidates = paired_references();
  not_candidates.push_back("orchestra-random");
  for (const auto& controller : judged)
    if (std::find(not_candidates.begin(), not_candidates.end(), controller) == not_candidates.end()) candidates.push_back(controller);
  if (candidates.size() >= 2) out.references.push_back(candidates.front());
  for (const auto& controller : judged) {
    ControllerScore total;
    total.controller = controller;
    for (const auto& cluster : out.clusters)
      for (const auto& score : cluster.controllers) {
        if (score.controller != controller) continue;
        total.runs += score.runs;
        total.misses += score.misses;
        if (std::isfinite(score.geomean_ratio)) total.ratios.push_back(score.geomean_ratio);
      }
    total.geomean_ratio = geomean(total.ratios);
    total.over_clusters = ratio_interval(total.ratios);
    // Paired with each reference cluster by cluster: both geomeans are over the same seeds' oracle,
    // so their quotient is the geomean over seeds of this controller's time over the reference's.
    for (const std::string& reference : out.references) {
      if (reference == controller) continue;
      std::vector<double> quotients;
      for (const auto& cluster : out.clusters) {
        const ControllerScore* mine = find_score(cluster.controllers, controller);
        const ControllerScore* theirs = find_score(cluster.controllers, reference);
        if (mine && theirs && std::isfinite(mine->geomean_ratio) && std::isfinite(theirs->geomean_ratio))
          quotients.push_back(mine->geomean_ratio / theirs->geomean_ratio);
      }
      total.paired.push_back({reference, ratio_interval(quotients)});
    }
    out.overall.push_back(total);
  }
  std::vector<double> ceilings;
  for (const auto& cluster : out.clusters)
    if (const auto best = best_static_in_hindsight(runs, cluster)) ceilings.push_back(*best);
  out.static_in_hindsight = ratio_interval(ceilings);
  return out;
}

std::string evaluation_markdown(const EvaluationSummary& summary) {
  std::ostringstream md;
  md << kEvaluationMarkdownMarker << " (the best static T of the sweep, per cluster and seed): geometric mean over seeds, "
        "misses in brackets.\n\n| cluster |";
  for (const auto& c : summary.overall) md << ' ' << md_cell(c.controller) << " |";
  md << " oracle T (ms) | oracle time (s) |\n|---|";
  for (std::size_t i = 0; i < summary.overall.size(); ++i) md << "---:|";
  md << "---:|---:|\n";
  const auto cell = [](const ControllerScore& s) {
    // A cluster where no sweep point reached the target on any seed has no ratio to show.
    std::string text = std::isfinite(s.geomean_ratio) ? fixed(s.geomean_ratio, 2) + "x" : "-";
    if (s.misses > 0) text += " (" + std::to_string(s.misses) + " of " + std::to_string(s.runs) + " missed)";
    return text;
  };
  for (const auto& cluster : summary.clusters) {
    md << "| " << md_cell(cluster.cluster) << " |";
    for (const auto& total : summary.overall) {
      const ControllerScore* score = find_score(cluster.controllers, total.controller);
      md << ' ' << (score ? cell(*score) : std::string("-")) << " |";
    }
    std::string barriers, times;
    for (const auto& [seed, ms] : cluster.oracle_barrier_ms) barriers += (barriers.empty() ? "" : ", ") + fixed(ms, 0);
    for (const auto& [seed, s] : cluster.oracle_s) times += (times.empty() ? "" : ", ") + fixed(s, 1);
    if (!cluster.seeds_without_oracle.empty()) times += " (" + std::to_string(cluster.seeds_without_oracle.size()) + " seeds: no sweep point reached the target)";
    md << ' ' << barriers << " | " << times << " |\n";
  }
  md << "| **geometric mean** |";
  for (const auto& total : summary.overall) md << " **" << cell(total) << "** |";
  md << " | |\n";
  const bool has_reference = std::any_of(summary.overall.begin(), summary.overall.end(),
                                         [](const ControllerScore& s) { return s.controller == kStaticTunedOnOtherSeeds; });
  if (has_reference)
    md << "\n" << kStaticTunedOnOtherSeeds
       << ": on each seed, the sweep's T that did best on the cluster's other seeds; the gap between it and 1.00x is "
          "the oracle's hindsight on the seed it is scored on.\n";
  if (summary.static_in_hindsight.clusters > 0)
    md << "\nThe best single static T of each cluster, chosen with every seed's hindsight: " << fixed(summary.static_in_hindsight.geomean, 2)
       << "x the oracle (geometric mean over " << summary.static_in_hindsight.clusters
       << " clusters): no static T of the sweep does better here; a controller below it gained by moving T within the run.\n";
  // The order to choose by (several snapshots on validation clusters): a miss costs more than
  // any ratio, so fewest misses first, then the geometric mean; ties in label order.
  std::vector<ControllerScore> ranked = summary.overall;
  std::stable_sort(ranked.begin(), ranked.end(), [](const ControllerScore& a, const ControllerScore& b) {
    if (a.misses != b.misses) return a.misses < b.misses;
    if (a.geomean_ratio != b.geomean_ratio) return a.geomean_ratio < b.geomean_ratio;
    return a.controller < b.controller;
  });
  md << "\nRanked (fewest misses, then the geometric mean):";
  for (std::size_t i = 0; i < ranked.size(); ++i) md << (i ? "," : "") << ' ' << ranked[i].controller << ' ' << cell(ranked[i]);
  md << "\n";

  // How far each geometric mean is from a goal or from another controller's, in the units of the
  // clusters' spread: a few hundredths between two controllers on 8 clusters is rarely evidence.
  const auto interval = [](const RatioInterval& r) {
    return r.clusters < 2 ? std::string("-") : fixed(r.low, 2) + "-" + fixed(r.high, 2) + "x";
  };
  const std::vector<std::string>& references = summary.references;
  md << "\n95% confidence intervals over the clusters: Student's t on their log ratios, each cluster one value (the "
        "geometric mean over its seeds), so an interval says where the mean may fall on other clusters like these";
  if (!references.empty()) md << "; and each controller's time over a reference's, paired cluster by cluster on the same seeds";
  // Misses stand beside the ratio: a miss enters it at its run time, a lower bound, so a controller
  // that misses often can show a small ratio.
  md << ":\n\n| controller | clusters | misses | time / oracle | 95% CI |";
  for (const auto& reference : references) md << " time / " << md_cell(reference) << " | 95% CI |";
  md << "\n|---|---:|---:|---:|---:|";
  for (std::size_t i = 0; i < references.size(); ++i) md << "---:|---:|";
  md << "\n";
  for (const auto& total : summary.overall) {
    md << "| " << md_cell(total.controller) << " | " << total.over_clusters.clusters << " | " << total.misses << " of " << total.runs
       << " | " << fixed(total.geomean_ratio, 2) << "x | " << interval(total.over_clusters) << " |";
    for (const auto& reference : references) {
      const RatioInterval* pairing = find_pairing(total, reference);
      if (!pairing || pairing->clusters == 0)
        md << " - | - |";
      else
        md << ' ' << fixed(pairing->geomean, 2) << "x | " << interval(*pairing) << " |";
    }
    md << "\n";
  }
  return md.str();
}

std::string evaluation_overall_csv(const EvaluationSummary& summary) {
  std::ostringstream csv;
  csv << kEvaluationOverallCsvMarker << "misses,ratio,ratio_ci95_low,ratio_ci95_high";
  std::vector<std::string> columns = paired_references();
  for (const std::string& reference : summary.references)
    if (std::find(columns.begin(), columns.end(), reference) == columns.end()) columns.push_back(reference);
  for (const std::string& reference : columns) {
    std::string name = reference;
    std::replace(name.begin(), name.end(), '-', '_');
    for (const char* suffix : {"", "_ci95_low", "_ci95_high"}) csv << ',' << csv_cell("vs_" + name + suffix);
  }
  csv << '\n';
  for (const auto& total : summary.overall) {
    csv << csv_cell(total.controller) << ',' << total.over_clusters.clusters << ',' << total.runs << ',' << total.misses << ','
        << exact(total.geomean_ratio) << ',' << exact(total.over_clusters.low) << ',' << exact(total.over_clusters.high);
    for (const std::string& reference : columns) {
      const RatioInterval none;
      const RatioInterval* pairing = find_pairing(total, reference);
      const RatioInterval& r = pairing ? *pairing : none;
      csv << ',' << exact(r.geomean) << ',' << exact(r.low) << ',' << exact(r.high);
    }
    csv << '\n';
  }
  return csv.str();
}

std::string evaluation_csv(const EvaluationSummary& summary, const std::vector<ControllerRun>& judged_runs) {
  const std::vector<ControllerRun> runs = with_reference(judged_runs);
  std::ostringstream csv;
  csv << kEvaluationCsvMarker << "reached,time_to_target_s,run_time_s,oracle_time_s,oracle_T_ms,ratio\n";
  for (const auto& cluster : summary.clusters)
    for (const auto& r : runs) {
      if (r.cluster != cluster.cluster || r.role != ControllerRole::Judged) continue;
      const auto oracle = cluster.oracle_s.find(r.seed);
      const bool known = oracle != cluster.oracle_s.end();
      const double time = r.time_to_target_s ? *r.time_to_target_s : r.run_time_s;
      csv << csv_cell(r.cluster) << ',' << r.seed << ',' << csv_cell(r.controller) << ',' << (r.time_to_target_s ? 1 : 0) << ','
          << exact(r.time_to_target_s) << ',' << exact(r.run_time_s) << ',' << (known ? exact(oracle->second) : "") << ','
          << (known ? exact(cluster.oracle_barrier_ms.at(r.seed)) : "") << ',' << (known ? exact(time / oracle->second) : "") << '\n';
    }
  return csv.str();
}

}  // namespace experiments
