#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "experiments/analysis/controller_evaluation.hpp"

using experiments::ControllerRole;
using experiments::ControllerRun;

namespace {

ControllerRun judged(const std::string& cluster, std::uint64_t seed, const std::string& controller, std::optional<double> time, double run) {
  ControllerRun r;
  r.cluster = cluster;
  r.seed = seed;
  r.controller = controller;
  r.time_to_target_s = time;
  r.run_time_s = run;
  return r;
}

ControllerRun sweep(const std::string& cluster, std::uint64_t seed, double barrier_ms, std::optional<double> time, double run) {
  ControllerRun r = judged(cluster, seed, "fixed-t-T_ms=" + std::to_string(static_cast<int>(barrier_ms)), time, run);
  r.role = ControllerRole::Sweep;
  r.barrier_ms = barrier_ms;
  return r;
}

// Cluster a, seeds 1 and 2: the sweep's best is T = 200 (8 s) on seed 1 and T = 400 (9 s) on
// seed 2. Cluster b: seed 1's best is T = 50 (4 s); on seed 2 no static T reached the target.
std::vector<ControllerRun> worked_example() {
  return {
      sweep("a", 1, 100, 10.0, 10.0), sweep("a", 1, 200, 8.0, 8.0), sweep("a", 1, 400, std::nullopt, 30.0),
      sweep("a", 2, 100, 12.0, 12.0), sweep("a", 2, 200, std::nullopt, 30.0), sweep("a", 2, 400, 9.0, 9.0),
      judged("a", 1, "a3c", 8.8, 8.8), judged("a", 1, "lcm", 16.0, 16.0),
      judged("a", 2, "a3c", 9.0, 9.0), judged("a", 2, "lcm", std::nullopt, 27.0),  // a miss: 27 s without the target
      sweep("b", 1, 50, 4.0, 4.0), judged("b", 1, "a3c", 2.0, 2.0), judged("b", 1, "lcm", 4.0, 4.0),
      sweep("b", 2, 50, std::nullopt, 20.0), judged("b", 2, "a3c", 5.0, 5.0), judged("b", 2, "lcm", 6.0, 6.0),
  };
}

}  // namespace

TEST_CASE("evaluation: the oracle is the best static T per cluster and seed, ratios and misses by hand") {
  const auto summary = experiments::summarize_evaluation(worked_example());
  REQUIRE(summary.clusters.size() == 2);
  const auto& a = summary.clusters[0];
  CHECK(a.cluster == "a");
  CHECK(a.oracle_s.at(1) == 8.0);
  CHECK(a.oracle_barrier_ms.at(1) == 200.0);
  CHECK(a.oracle_s.at(2) == 9.0);
  CHECK(a.oracle_barrier_ms.at(2) == 400.0);
  REQUIRE(a.controllers.size() == 3);  // and the reference, fixed-t-other-seeds, last
  CHECK(a.controllers[0].controller == "a3c");
  CHECK(a.controllers[0].ratios == std::vector<double>{8.8 / 8.0, 1.0});
  CHECK(a.controllers[0].geomean_ratio == doctest::Approx(std::sqrt(1.1)));
  CHECK(a.controllers[0].misses == 0);
  CHECK(a.controllers[1].controller == "lcm");
  CHECK(a.controllers[1].ratios == std::vector<double>{2.0, 3.0});  // the miss at its 27 s
  CHECK(a.controllers[1].geomean_ratio == doctest::Approx(std::sqrt(6.0)));
  CHECK(a.controllers[1].misses == 1);

  const auto& b = summary.clusters[1];
  CHECK(b.seeds_without_oracle == std::vector<std::uint64_t>{2});
  CHECK(b.controllers[0].ratios == std::vector<double>{0.5});  // seed 2 has no oracle: not a ratio
  CHECK(b.controllers[0].runs == 2);
  CHECK(b.controllers[1].geomean_ratio == doctest::Approx(1.0));

  REQUIRE(summary.overall.size() == 3);
  CHECK(summary.overall[0].geomean_ratio == doctest::Approx(std::sqrt(std::sqrt(1.1) * 0.5)));
  CHECK(summary.overall[0].misses == 0);
  CHECK(summary.overall[0].runs == 4);
  CHECK(summary.overall[1].geomean_ratio == doctest::Approx(std::sqrt(std::sqrt(6.0) * 1.0)));
  CHECK(summary.overall[1].misses == 1);
}

TEST_CASE("evaluation: a cluster with no oracle on any seed shows no ratio, and its misses") {
  // Cluster c: no sweep point reached the target on either seed; a3c reached it once.
  auto runs = worked_example();
  for (const std::uint64_t seed : {1, 2}) runs.push_back(sweep("c", seed, 70, std::nullopt, 40.0));
  runs.push_back(judged("c", 1, "a3c", 30.0, 30.0));
  runs.push_back(judged("c", 2, "a3c", std::nullopt, 40.0));
  runs.push_back(judged("c", 1, "lcm", 35.0, 35.0));
  runs.push_back(judged("c", 2, "lcm", 36.0, 36.0));
  const auto summary = experiments::summarize_evaluation(runs);
  const std::string md = experiments::evaluation_markdown(summary);
  CAPTURE(md);
  CHECK(md.find("| c | - (1 of 2 missed) | - |") != std::string::npos);
  CHECK(md.find("(2 seeds: no sweep point reached the target) |\n") != std::string::npos);
  CHECK(md.find("-x") == std::string::npos);
  CHECK(md.find("nan") == std::string::npos);
  // The geometric means are over the clusters with an oracle, as without c; c's misses count.
  CHECK(md.find("| **geometric mean** | **0.72x (1 of 6 missed)** | **1.57x (1 of 6 missed)** |") != std::string::npos);
}

TEST_CASE("evaluation: the tables hold every cluster, controller and seed") {
  const auto runs = worked_example();
  const auto summary = experiments::summarize_evaluation(runs);
  const std::string md = experiments::evaluation_markdown(summary);
  // fixed-t-other-seeds on a: seed 1 takes seed 2's best (T = 400), which missed on seed 1 (30 s
  // over 8), and seed 2 takes seed 1's (T = 200), which missed on seed 2 (30 s over 9); on b, the
  // one T reached on seed 1 (1.00x) and missed on seed 2, which has no oracle.
  CHECK(md.find("| cluster | a3c | lcm | fixed-t-other-seeds | oracle T (ms) | oracle time (s) |") != std::string::npos);
  CHECK(md.find("| a | 1.05x | 2.45x (1 of 2 missed) | 3.54x (2 of 2 missed) | 200, 400 | 8.0, 9.0 |") != std::string::npos);
  CHECK(md.find("1 seeds: no sweep point reached the target") != std::string::npos);
  CHECK(md.find("| **geometric mean** | **0.72x** | **1.57x (1 of 4 missed)** | **1.88x (3 of 4 missed)** |") != std::string::npos);
  CHECK(md.find("\nRanked (fewest misses, then the geometric mean): a3c 0.72x, lcm 1.57x (1 of 4 missed), "
                "fixed-t-other-seeds 1.88x (3 of 4 missed)\n") != std::string::npos);
  CHECK(md.find("fixed-t-other-seeds: on each seed, the sweep's T that did best on the cluster's other seeds") != std::string::npos);
  // The ceiling of a static T: on a, T = 100 (10 / 8 and 12 / 9) beats T = 200 (1 and its miss at
  // 30 / 9) and T = 400 (a miss at 30 / 8, and 1); on b, T = 50 on the one seed with an oracle.
  CHECK(summary.static_in_hindsight.clusters == 2);
  CHECK(summary.static_in_hindsight.geomean == doctest::Approx(std::sqrt(std::sqrt(10.0 / 8.0 * 12.0 / 9.0))));
  CHECK(md.find("The best single static T of each cluster, chosen with every seed's hindsight: 1.14x the oracle (geometric mean over 2 clusters)") !=
        std::string::npos);
  // Intervals over the two clusters. No orchestra-lcm here ("lcm" is not it), so the pairings are
  // with fixed-t-other-seeds (a3c's 1.05x and 0.5x over its 3.54x, sqrt(3.75 x 30 / 9), and 1.00x)
  // and, two candidates being judged, with the first of them, a3c.
  CHECK(md.find("| controller | clusters | misses | time / oracle | 95% CI | time / fixed-t-other-seeds | 95% CI | time / a3c | 95% CI |\n") !=
        std::string::npos);
  CHECK(summary.references == std::vector<std::string>{"fixed-t-other-seeds", "a3c"});
  // Misses beside the ratio, as in the ranking: lcm's one of its four runs.
  CHECK(md.find("\n| lcm | 2 | 1 of 4 | 1.57x |") != std::string::npos);
  CHECK(md.find("time / orchestra-lcm") == std::string::npos);
  const double a_paired = std::log(std::sqrt(1.1) / std::sqrt(12.5)), b_paired = std::log(0.5);
  const double paired_mean = (a_paired + b_paired) / 2, paired_sd = std::abs(a_paired - b_paired) / std::sqrt(2.0);
  REQUIRE(summary.overall[0].paired.size() == 1);
  const auto& vs_static = summary.overall[0].paired[0];
  CHECK(vs_static.reference == "fixed-t-other-seeds");
  CHECK(vs_static.ratio.clusters == 2);
  CHECK(vs_static.ratio.geomean == doctest::Approx(std::exp(paired_mean)));
  CHECK(vs_static.ratio.high == doctest::Approx(std::exp(paired_mean + 12.706 * paired_sd / std::sqrt(2.0))));
  CHECK(md.find("| a3c | 2 | 0 of 4 | 0.72x | ") != std::string::npos);
  CHECK(md.find("| 0.39x | ") != std::string::npos);
  // lcm over a3c, cluster by cluster: sqrt(6) / sqrt(1.1) on a, 1 / 0.5 on b.
  REQUIRE(summary.overall[1].paired.size() == 2);
  CHECK(summary.overall[1].paired[1].reference == "a3c");
  CHECK(summary.overall[1].paired[1].ratio.geomean == doctest::Approx(std::sqrt(std::sqrt(6.0 / 1.1) * 2.0)));
  const std::string overall_csv = experiments::evaluation_overall_csv(summary);
  CHECK(overall_csv.find(",vs_fixed_t_other_seeds_ci95_high,vs_a3c,vs_a3c_ci95_low,vs_a3c_ci95_high\n") != std::string::npos);
  CHECK(summary.overall[2].paired.size() == 1);  // the tuned reference: over a3c only, not over itself
  const std::string csv = experiments::evaluation_csv(summary, runs);
  CHECK(csv.find("cluster,seed,controller,reached,time_to_target_s,run_time_s,oracle_time_s,oracle_T_ms,ratio\n") == 0);
  CHECK(csv.find("a,2,lcm,0,,27,9,400,3\n") != std::string::npos);
  CHECK(csv.find("b,2,a3c,1,5,5,,,\n") != std::string::npos);
  CHECK(csv.find("a,1,fixed-t-other-seeds,0,,30,8,200,3.75\n") != std::string::npos);
  std::size_t lines = 0;
  for (char c : csv) lines += c == '\n';
  CHECK(lines == 1 + 12);  // header, then 2 clusters x 2 seeds x (2 judged controllers and the reference)
}

TEST_CASE("evaluation: fixed-t-other-seeds takes, on each seed, the T that did best on the other seeds, by hand") {
  const std::vector<ControllerRun> runs = {
      // c: T = 100 wins seeds 1 and 3, T = 200 wins seed 2 and missed seed 3.
      sweep("c", 1, 100, 10.0, 10.0), sweep("c", 1, 200, 12.0, 12.0),
      sweep("c", 2, 100, 40.0, 40.0), sweep("c", 2, 200, 11.0, 11.0),
      sweep("c", 3, 100, 9.0, 9.0), sweep("c", 3, 200, std::nullopt, 30.0),
      // d: on seed 2 both T tie, so seed 1 takes the smaller one.
      sweep("d", 1, 100, 5.0, 5.0), sweep("d", 1, 200, 4.0, 4.0),
      sweep("d", 2, 100, 6.0, 6.0), sweep("d", 2, 200, 6.0, 6.0),
      // e: one seed, nothing to tune on.
      sweep("e", 1, 100, 3.0, 3.0),
  };
  const auto reference = experiments::static_tuned_on_other_seeds(runs);
  REQUIRE(reference.size() == 5);
  std::vector<double> chosen;
  for (const auto& r : reference) {
    CHECK(r.controller == experiments::kStaticTunedOnOtherSeeds);
    CHECK(r.role == ControllerRole::Judged);
    chosen.push_back(r.barrier_ms);
  }
  // c, seed 1: on seeds 2 and 3, T = 100 took 40 x 9 and T = 200 11 x 30 (its miss, at its run
  // time), but T = 200 missed once, so T = 100. Seed 2: 10 x 9 against 12 x 30, T = 100. Seed 3:
  // 10 x 40 against 12 x 11, so T = 200, which missed here.
  // d, seed 1: 6 against 6, the smaller T; seed 2: seed 1's best, T = 200.
  CHECK(chosen == std::vector<double>{100, 100, 200, 100, 200});
  CHECK(reference[2].time_to_target_s == std::nullopt);
  CHECK(reference[2].run_time_s == 30.0);

  const auto summary = experiments::summarize_evaluation(runs);
  REQUIRE(summary.clusters.size() == 3);
  const auto& c = summary.clusters[0].controllers.at(0);
  CHECK(c.controller == "fixed-t-other-seeds");
  CHECK(c.ratios == std::vector<double>{1.0, 40.0 / 11.0, 30.0 / 9.0});
  CHECK(c.misses == 1);
  CHECK(c.geomean_ratio == doctest::Approx(std::cbrt(40.0 / 11.0 * 30.0 / 9.0)));
  CHECK(summary.clusters[1].controllers.at(0).ratios == std::vector<double>{5.0 / 4.0, 1.0});
  CHECK(summary.clusters[2].controllers.empty());
  REQUIRE(summary.overall.size() == 1);
  CHECK(summary.overall[0].runs == 5);
  CHECK(summary.overall[0].geomean_ratio == doctest::Approx(std::sqrt(std::cbrt(40.0 / 11.0 * 30.0 / 9.0) * std::sqrt(1.25))));
  // In hindsight over all seeds: c's T = 100 (1, 40 / 11, 1) beats T = 200 (1.2, 1, 30 / 9), d's T =
  // 200 (1, 1) is the oracle on both seeds, e's only T is its oracle.
  CHECK(summary.static_in_hindsight.clusters == 3);
  CHECK(summary.static_in_hindsight.geomean == doctest::Approx(std::cbrt(std::cbrt(40.0 / 11.0))));
}

TEST_CASE("evaluation: 95% intervals over clusters and the pairing with orchestra-lcm, by hand") {
  // Three clusters, one seed each, the oracle 10 s everywhere. Over the oracle the policy takes
  // 1, 2 and 0.5 (log ratios 0, ln 2, -ln 2: mean 0, sd ln 2) and LCM 2, 2 and 1; paired, the
  // policy over LCM is 0.5, 1 and 0.5 (mean -2 ln 2 / 3, sd ln 2 / sqrt 3). t at 2 df is 4.303.
  const std::vector<ControllerRun> runs = {
      sweep("x", 1, 100, 10.0, 10.0), judged("x", 1, "orchestra-a3c", 10.0, 10.0), judged("x", 1, "orchestra-lcm", 20.0, 20.0),
      sweep("y", 1, 100, 10.0, 10.0), judged("y", 1, "orchestra-a3c", 20.0, 20.0), judged("y", 1, "orchestra-lcm", 20.0, 20.0),
      sweep("z", 1, 100, 10.0, 10.0), judged("z", 1, "orchestra-a3c", 5.0, 5.0), judged("z", 1, "orchestra-lcm", std::nullopt, 10.0),
  };
  const auto summary = experiments::summarize_evaluation(runs);
  REQUIRE(summary.overall.size() == 2);
  const double ln2 = std::log(2.0), t = 4.303;
  const auto& a3c = summary.overall[0];
  CHECK(a3c.over_clusters.clusters == 3);
  CHECK(a3c.over_clusters.geomean == doctest::Approx(1.0));
  CHECK(a3c.over_clusters.low == doctest::Approx(std::exp(-t * ln2 / std::sqrt(3.0))));
  CHECK(a3c.over_clusters.high == doctest::Approx(std::exp(t * ln2 / std::sqrt(3.0))));
  REQUIRE(a3c.paired.size() == 1);  // one seed per cluster: no fixed-t-other-seeds to pair with
  CHECK(a3c.paired[0].reference == "orchestra-lcm");
  CHECK(a3c.paired[0].ratio.clusters == 3);
  const double paired_mean = -2 * ln2 / 3, paired_half = t * (ln2 / std::sqrt(3.0)) / std::sqrt(3.0);
  CHECK(a3c.paired[0].ratio.geomean == doctest::Approx(std::exp(paired_mean)));
  CHECK(a3c.paired[0].ratio.low == doctest::Approx(std::exp(paired_mean - paired_half)));
  CHECK(a3c.paired[0].ratio.high == doctest::Approx(std::exp(paired_mean + paired_half)));
  const auto& lcm = summary.overall[1];
  CHECK(lcm.misses == 1);  // z: a miss, at its 10 s
  CHECK(lcm.over_clusters.geomean == doctest::Approx(std::exp(2 * ln2 / 3)));
  CHECK(lcm.paired.empty());  // not with itself: "-" in the table

  const std::string md = experiments::evaluation_markdown(summary);
  CHECK(md.find("| controller | clusters | misses | time / oracle | 95% CI | time / orchestra-lcm | 95% CI |\n") != std::string::npos);
  CHECK(md.find("| orchestra-a3c | 3 | 0 of 3 | 1.00x | 0.18-5.60x | 0.63x | 0.23-1.70x |\n") != std::string::npos);
  CHECK(md.find("| orchestra-lcm | 3 | 1 of 3 | 1.59x | 0.59-4.29x | - | - |\n") != std::string::npos);

  const std::string csv = experiments::evaluation_overall_csv(summary);
  CHECK(csv.rfind("controller,clusters,runs,misses,ratio,ratio_ci95_low,ratio_ci95_high,vs_orchestra_lcm,vs_orchestra_lcm_ci95_low,"
                  "vs_orchestra_lcm_ci95_high,vs_fixed_t_other_seeds,vs_fixed_t_other_seeds_ci95_low,vs_fixed_t_other_seeds_ci95_high\n",
                  0) == 0);
  CHECK(csv.find("\norchestra-a3c,3,3,0,1,0.178") != std::string::npos);
  CHECK(csv.find(",0.629960525,0.233") != std::string::npos);
  CHECK(csv.find("\norchestra-lcm,3,3,1,1.58740105,0.587") != std::string::npos);
  CHECK(csv.substr(csv.size() - 7) == ",,,,,,\n");  // LCM: nothing to pair with

  // One cluster: a geometric mean, no interval.
  const auto one = experiments::ratio_interval({1.5});
  CHECK(one.clusters == 1);
  CHECK(one.geomean == doctest::Approx(1.5));
  CHECK(std::isnan(one.low));
  CHECK(std::isnan(one.high));
  CHECK(std::isnan(experiments::ratio_interval({}).geomean));
}

TEST_CASE("evaluation: the best static T in hindsight ranks misses first, as the tuned one does") {
  // T = 800 misses on both seeds, its runs cut at 4 and 5 s by the budget, shorter than the
  // oracle's 10 and 12 s: by its ratios alone (0.4, 0.42) it would look better than the oracle.
  const std::vector<ControllerRun> runs = {
      sweep("f", 1, 100, 10.0, 10.0), sweep("f", 1, 800, std::nullopt, 4.0), judged("f", 1, "a3c", 11.0, 11.0),
      sweep("f", 2, 100, 12.0, 12.0), sweep("f", 2, 800, std::nullopt, 5.0), judged("f", 2, "a3c", 12.0, 12.0),
  };
  const auto summary = experiments::summarize_evaluation(runs);
  CHECK(summary.static_in_hindsight.clusters == 1);
  CHECK(summary.static_in_hindsight.geomean == doctest::Approx(1.0));
  CHECK(experiments::evaluation_markdown(summary).find("chosen with every seed's hindsight: 1.00x the oracle (geometric mean over 1 clusters)") !=
        std::string::npos);
}
