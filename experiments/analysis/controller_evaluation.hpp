// Judging a barrier controller (`orchestra evaluate`): on each cluster and seed, its time to target
// against the hindsight oracle, the best of a log-spaced sweep of static barriers (fixed-t) on the
// same cluster and seed, which is what a researcher gets by paying one run per T; misses counted;
// geometric means of the time ratios over seeds and over clusters, the latter with a 95% confidence
// interval over the clusters and paired cluster by cluster with orchestra-lcm and with a static T
// tuned on other seeds.
//
// A run that missed the target has no time to target; its ratio uses the time it ran without
// reaching it (its whole budget), a lower bound on what it would have needed, and it is counted
// as a miss. The oracle of a cluster and seed is the best sweep point that reached the target; a
// cluster and seed where none did has no oracle and is left out of the ratios (and reported).
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace experiments {

// How a controller is judged: what role its runs play.
enum class ControllerRole { Judged, Sweep };

// One run of one controller on one cluster and seed.
struct ControllerRun {
  std::string cluster;
  std::uint64_t seed = 0;
  std::string controller;  // label: "orchestra-a3c", "orchestra-lcm", "fixed-t-T_ms=400", ...
  ControllerRole role = ControllerRole::Judged;
  double barrier_ms = 0;                  // Sweep: its T
  std::optional<double> time_to_target_s;
  double run_time_s = 0;                  // the run's clock at its end
  double final_accuracy = 0;              // test accuracy at the run's end
};

// A geometric mean of per-cluster ratios with its 95% confidence interval: Student's t over the
// clusters' log ratios, exponentiated. The clusters are the sample (seeds enter through each
// cluster's geomean), so the interval says where the mean may fall on other clusters like these;
// low and high are NaN for fewer than two clusters.
struct RatioInterval {
  int clusters = 0;
  double geomean = NAN, low = NAN, high = NAN;
};
RatioInterval ratio_interval(const std::vector<double>& ratios);

// A controller's time over a reference's, paired cluster by cluster on the same seeds (each
// cluster's geomean ratio over the reference's), with its interval over clusters.
struct PairedRatio {
  std::string reference;
  RatioInterval ratio;
};

struct ControllerScore {
  std::string controller;
  int runs = 0;
  int misses = 0;
  double geomean_ratio = 0;  // of time / oracle over the runs that have an oracle (misses at run time)
  // Per cluster: one per seed with an oracle, in seed order. Overall: each cluster's geomean_ratio.
  std::vector<double> ratios;
  // Overall only: geomean_ratio with its interval over clusters, and the pairing with each of
  // paired_references() judged in the same evaluation (not with itself), in that order.
  RatioInterval over_clusters;
  std::vector<PairedRatio> paired;
};

struct ClusterScore {
  std::string cluster;
  std::map<std::uint64_t, double> oracle_s;          // per seed: the best sweep time to target
  std::map<std::uint64_t, double> oracle_barrier_ms; // its T
  std::vector<std::uint64_t> seeds_without_oracle;
  std::vector<ControllerScore> controllers;          // the judged controllers, in first-seen order
};

struct EvaluationSummary {
  std::vector<ClusterScore> clusters;  // in first-seen order
  // Over clusters: the geometric mean of each cluster's geomean ratio, and the misses summed.
  std::vector<ControllerScore> overall;
  // The ceiling of any static T: per cluster, the one sweep T with the fewest misses, then the
  // lowest geomean ratio (a miss at its run time), over every seed that has an oracle, chosen in
  // hindsight; over clusters, those ratios' geometric mean and interval. Above 1.00x because the
  // oracle picks the best of the sweep on each seed; a controller below it gained by moving T
  // within the run.
  RatioInterval static_in_hindsight;
  // What every controller is paired with, in column order: paired_references() judged here, then,
  // where two or more other controllers are judged (orchestra-random aside), the first of them:
  // `orchestra evaluate`'s first policy, so that a snapshot or an --also variant is read cluster by
  // cluster against the policy given first.
  std::vector<std::string> references;
};

// The label of the reference below, judged like any controller.
inline constexpr const char* kStaticTunedOnOtherSeeds = "fixed-t-other-seeds";

// What every controller is paired with: the heuristic the learned controller starts from (evaluate
// always runs it), and the static T tuned on other seeds, the best static barrier without hindsight.
inline std::vector<std::string> paired_references() { return {"orchestra-lcm", kStaticTunedOnOtherSeeds}; }

// Per cluster and seed, the sweep's T that did best on the cluster's *other* seeds (fewest misses
// there, then the smallest geometric mean of time to target, a miss at its run time; ties: the
// smaller T), with the time that T had on this seed: what a researcher gets by tuning a static T
// on other seeds. Time to target moves from seed to seed, and the oracle picks the best of the
// sweep on the very seed it is scored on, so this reference shows how much of any controller's
// ratio is that hindsight (1.0 where the same T wins on every seed). One Judged run per cluster
// and seed; none for a cluster with fewer than two seeds.
std::vector<ControllerRun> static_tuned_on_other_seeds(const std::vector<ControllerRun>& runs);

// Judges `runs` together with static_tuned_on_other_seeds(runs), which comes last.
EvaluationSummary summarize_evaluation(const std::vector<ControllerRun>& runs);

// Markdown: one table, a row per cluster with each judged controller's geomean ratio and misses,
// then the geometric mean over clusters; and the oracle's T and time per cluster.
std::string evaluation_markdown(const EvaluationSummary& summary);
// CSV: one row per judged controller, the overall figures with their 95% intervals (above); the
// pairings in columns vs_<reference>[_ci95_low|_ci95_high], '-' in the name written as '_', empty
// where there is nothing to pair: paired_references()' columns always, the first controller's
// (EvaluationSummary::references) after them where it is one.
std::string evaluation_overall_csv(const EvaluationSummary& summary);
// CSV: one row per cluster, seed and judged controller, the reference above included (ratio,
// reached, times, the oracle's T).
std::string evaluation_csv(const EvaluationSummary& summary, const std::vector<ControllerRun>& runs);
// How each of the three begins: a file of that name that does not is not evaluate's to replace.
inline constexpr const char* kEvaluationMarkdownMarker = "Time to target over the oracle's";
inline constexpr const char* kEvaluationCsvMarker = "cluster,seed,controller,";
inline constexpr const char* kEvaluationOverallCsvMarker = "controller,clusters,runs,";

}  // namespace experiments
