// A static T per cluster picked on the surrogate (experiments/surrogate/surrogate_pick.hpp): the
// rule by hand (the fewest misses before the shortest time, the accuracy among points that missed),
// its tables; the command end to end is
// in test_surrogate_cli.cpp, beside fidelity's, which must read the same pick.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <stdexcept>

#include "common/errors.hpp"
#include "experiments/surrogate/surrogate_pick.hpp"
#include "sweep_run.hpp"

using experiments::ControllerRole;
using experiments::ControllerRun;

using testing::sweep_run;

TEST_CASE("surrogate pick: the fewest misses before the shortest time, geometric means over seeds, other controllers ignored") {
  // {misses, time, accuracy}
  CHECK(experiments::best_sweep_point({{0, 5.0, 0.9}, {0, 4.0, 0.5}, {1, 1.0, 0.99}}) == 1);  // no miss: the time alone
  CHECK(experiments::best_sweep_point({{1, 3.0, 0.7}, {2, 1.0, 0.9}, {1, 2.0, 0.6}}) == 0);  // missed as often: the accuracy
  CHECK(experiments::best_sweep_point({{1, 3.0, 0.7}, {1, 2.0, 0.7}}) == 1);                 // then the time
  CHECK(experiments::best_sweep_point({{0, 2.0, 0.8}, {0, 2.0, 0.8}}) == 0);                 // the first of equals
  CHECK_THROWS_AS(experiments::best_sweep_point({}), std::invalid_argument);

  // Cluster b (listed first, picked second): 400 ms is the fastest on average (sqrt(5 x 7) s, its
  // miss at its 5 s run time) but missed once, so 200 ms (8 s twice) is the pick over 100 ms
  // (sqrt(10 x 12) s). Cluster a: every point missed once; 50 ms stopped sooner (sqrt(30 x 20) s)
  // but 25 ms ended nearer the target (mean accuracy 0.83 against 0.81): the pick is 25 ms.
  std::vector<ControllerRun> runs = {sweep_run("b", 1, 100, 10), sweep_run("b", 2, 100, 12),
                                     sweep_run("b", 1, 200, 8),  sweep_run("b", 2, 200, 8),
                                     sweep_run("b", 1, 400, std::nullopt, 5), sweep_run("b", 2, 400, 7),
                                     sweep_run("a", 1, 50, std::nullopt, 30, 0.80), sweep_run("a", 2, 50, 20, 100, 0.82),
                                     sweep_run("a", 1, 25, std::nullopt, 40, 0.82), sweep_run("a", 2, 25, 20, 100, 0.84)};
  ControllerRun lcm = sweep_run("b", 1, 0, 1);  // faster than every point, but not a sweep point
  lcm.controller = "orchestra-lcm";
  lcm.role = ControllerRole::Judged;
  runs.push_back(lcm);
  const auto picks = experiments::pick_static_barriers(runs);
  REQUIRE(picks.size() == 2);
  CHECK(picks[0].cluster == "a");
  CHECK(picks[0].pick().barrier_ms == 25);
  CHECK(picks[0].pick().time_s == doctest::Approx(std::sqrt(800.0)));
  CHECK(picks[0].pick().accuracy == doctest::Approx(0.83));
  CHECK(picks[0].pick().misses == 1);
  const auto& b = picks[1];
  REQUIRE(b.sweep.size() == 3);
  CHECK(b.sweep[0].barrier_ms == 100);  // by T
  CHECK(b.sweep[0].time_s == doctest::Approx(std::sqrt(120.0)));
  CHECK(b.sweep[2].time_s == doctest::Approx(std::sqrt(35.0)));
  CHECK(b.sweep[2].misses == 1);
  CHECK(b.pick().barrier_ms == 200);
  CHECK(b.pick().controller == "fixed-t-T_ms=200");
  CHECK(b.pick().seeds == 2);

  const std::string csv = experiments::static_picks_csv(picks);
  CHECK(csv == "cluster,barrier_ms,surrogate_s,misses,seeds\na,25.000,28.2843,1,2\nb,200.000,8.0000,0,2\n");
  const std::string md = experiments::static_picks_markdown(picks);
  CHECK(md.find("| b | 200 | 8.00 | 0 of 2 | 100: 10.95, 200: 8.00, 400: 5.92* |") != std::string::npos);
  CHECK(md.find("{name: fixed-t, T_ms: T}") != std::string::npos);
  CHECK(md.find("No T reached the target on every seed of the surrogate on a: ") != std::string::npos);  // not on b

  CHECK_THROWS_AS(experiments::pick_static_barriers({lcm}), common::DataError);
}

TEST_CASE("surrogate pick judged in real training: the real sweep's run at the picked T, per seed, as a judged controller") {
  // Picked on the surrogate: 200 ms on cluster b. The real evaluation ran 100 and 200 ms on seeds 1
  // and 2 beside the shipped controller.
  const auto picks = experiments::pick_static_barriers({sweep_run("b", 7, 100, 10), sweep_run("b", 7, 200, 8)});
  REQUIRE(picks.at(0).pick().barrier_ms == 200);
  std::vector<ControllerRun> real = {sweep_run("b", 1, 100, 5), sweep_run("b", 1, 200, 6), sweep_run("b", 2, 100, 7),
                                     sweep_run("b", 2, 200, std::nullopt, 9)};
  ControllerRun shipped = sweep_run("b", 1, 0, 4);
  shipped.controller = "orchestra-a3c";
  shipped.role = ControllerRole::Judged;
  real.push_back(shipped);
  const auto judged = experiments::picked_runs(picks, real);
  REQUIRE(judged.size() == 2);
  for (const auto& r : judged) {
    CHECK(r.controller == experiments::kSurrogatePick);
    CHECK(r.role == ControllerRole::Judged);
    CHECK(r.barrier_ms == 200);
  }
  CHECK(judged[0].seed == 1);
  CHECK(judged[0].time_to_target_s == 6.0);
  CHECK(judged[1].seed == 2);
  CHECK_FALSE(judged[1].time_to_target_s);
  CHECK(judged[1].run_time_s == 9.0);
  // Judged with the rest: seed 1 6/5, seed 2 9/7 (a miss at its run time), geometric mean.
  std::vector<ControllerRun> all = real;
  all.insert(all.end(), judged.begin(), judged.end());
  const auto summary = experiments::summarize_evaluation(all);
  bool found = false;
  for (const auto& c : summary.overall)
    if (c.controller == experiments::kSurrogatePick) {
      found = true;
      CHECK(c.misses == 1);
      CHECK(c.geomean_ratio == doctest::Approx(std::sqrt(6.0 / 5.0 * 9.0 / 7.0)));
    }
  CHECK(found);

  // A real evaluation of another cluster, or one that never ran the picked T on a seed: refused.
  CHECK_THROWS_AS(experiments::picked_runs(picks, {sweep_run("c", 1, 200, 6)}), common::DataError);
  CHECK_THROWS_AS(experiments::picked_runs(picks, {sweep_run("b", 1, 200, 6), sweep_run("b", 2, 100, 7)}), common::DataError);
  CHECK(experiments::default_planning_seeds().front() == 101);
  CHECK(experiments::default_planning_seeds().size() == 10);
}
