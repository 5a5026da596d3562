#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "study/analysis/controller_evaluation.hpp"

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

TEST_CASE("evaluation: the oracle is the best static T per cluster and seed; ratios and misses by hand") {
  const auto summary = experiments::summarize_evaluation(worked_example());
  REQUIRE(summary.clusters.size() == 2);
  const auto& a = summary.clusters[0];
  CHECK(a.cluster == "a");
  CHECK(a.oracle_s.at(1) == 8.0);
  CHECK(a.oracle_barrier_ms.at(1) == 200.0);
  CHECK(a.oracle_s.at(2) == 9.0);
  CHECK(a.oracle_barrier_ms.at(2) == 400.0);
  REQUIRE(a.controllers.size() == 2);
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

  REQUIRE(summary.overall.size() == 2);
  CHECK(summary.overall[0].geomean_ratio == doctest::Approx(std::sqrt(std::sqrt(1.1) * 0.5)));
  CHECK(summary.overall[0].misses == 0);
  CHECK(summary.overall[0].runs == 4);
  CHECK(summary.overall[1].geomean_ratio == doctest::Approx(std::sqrt(std::sqrt(6.0) * 1.0)));
  CHECK(summary.overall[1].misses == 1);
}

TEST_CASE("evaluation: the tables hold every cluster, controller and seed") {
  const auto runs = worked_example();
  const auto summary = experiments::summarize_evaluation(runs);
  const std::string md = experiments::evaluation_markdown(summary);
  CHECK(md.find("| cluster | a3c | lcm | oracle T (ms) | oracle time (s) |") != std::string::npos);
  CHECK(md.find("| a | 1.05x | 2.45x (1 of 2 missed) | 200, 400 | 8.0, 9.0 |") != std::string::npos);
  CHECK(md.find("1 seeds: no sweep point reached the target") != std::string::npos);
  CHECK(md.find("| **geometric mean** | **0.72x** | **1.57x (1 of 4 missed)** |") != std::string::npos);
  CHECK(md.find("\nRanked (fewest misses, then the geometric mean): a3c 0.72x, lcm 1.57x (1 of 4 missed)\n") != std::string::npos);
  const std::string csv = experiments::evaluation_csv(summary, runs);
  CHECK(csv.find("cluster,seed,controller,reached,time_to_target_s,run_time_s,oracle_time_s,oracle_T_ms,ratio\n") == 0);
  CHECK(csv.find("a,2,lcm,0,,27,9,400,3\n") != std::string::npos);
  CHECK(csv.find("b,2,a3c,1,5,5,,,\n") != std::string::npos);
  std::size_t lines = 0;
  for (char c : csv) lines += c == '\n';
  CHECK(lines == 1 + 8);  // header, then 2 clusters x 2 seeds x 2 judged controllers
}
