// A static T per cluster picked on the surrogate (experiments/surrogate/surrogate_pick.hpp): the
// rule by hand (the fewest misses before the shortest time), its tables; the command end to end is
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
  CHECK(experiments::best_sweep_point({{0, 5.0}, {0, 4.0}, {1, 1.0}}) == 1);
  CHECK(experiments::best_sweep_point({{1, 3.0}, {2, 1.0}, {1, 2.0}}) == 2);
  CHECK(experiments::best_sweep_point({{0, 2.0}, {0, 2.0}}) == 0);  // the first of equals
  CHECK_THROWS_AS(experiments::best_sweep_point({}), std::invalid_argument);

  // Cluster b (listed first, picked second): 400 ms is the fastest on average (sqrt(5 x 7) s, its
  // miss at its 5 s run time) but missed once, so 200 ms (8 s twice) is the pick over 100 ms
  // (sqrt(10 x 12) s). Cluster a: every point missed once; the shortest of them, 50 ms.
  std::vector<ControllerRun> runs = {sweep_run("b", 1, 100, 10), sweep_run("b", 2, 100, 12),
                                     sweep_run("b", 1, 200, 8),  sweep_run("b", 2, 200, 8),
                                     sweep_run("b", 1, 400, std::nullopt, 5), sweep_run("b", 2, 400, 7),
                                     sweep_run("a", 1, 50, std::nullopt, 30), sweep_run("a", 2, 50, 20),
                                     sweep_run("a", 1, 25, std::nullopt, 40), sweep_run("a", 2, 25, 20)};
  ControllerRun lcm = sweep_run("b", 1, 0, 1);  // faster than every point, but not a sweep point
  lcm.controller = "orchestra-lcm";
  lcm.role = ControllerRole::Judged;
  runs.push_back(lcm);
  const auto picks = experiments::pick_static_barriers(runs);
  REQUIRE(picks.size() == 2);
  CHECK(picks[0].cluster == "a");
  CHECK(picks[0].pick().barrier_ms == 50);
  CHECK(picks[0].pick().time_s == doctest::Approx(std::sqrt(600.0)));
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
  CHECK(csv == "cluster,barrier_ms,surrogate_s,misses,seeds\na,50.000,24.4949,1,2\nb,200.000,8.0000,0,2\n");
  const std::string md = experiments::static_picks_markdown(picks);
  CHECK(md.find("| b | 200 | 8.00 | 0 of 2 | 100: 10.95, 200: 8.00, 400: 5.92* |") != std::string::npos);
  CHECK(md.find("{name: fixed-t, T_ms: T}") != std::string::npos);

  CHECK_THROWS_AS(experiments::pick_static_barriers({lcm}), common::DataError);
}
