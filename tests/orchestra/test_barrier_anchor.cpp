// The barrier's anchor and its bounds relative to it: LCM's T* scaled (lcm_multiple), capped
// (lcm_cap_steps, lcm_cap_x_comm, lcm_cap_above_steps), and the relative floor capped in steps
// (floor_cap_steps), and the floor in the slowest worker's steps (min_barrier_steps).
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "orchestra/barrier_controller.hpp"
#include "cluster_a_fixture.hpp"

using orchestra::BarrierController;
using orchestra::BarrierControllerOptions;
using testing::at;
using testing::cluster_a;
using testing::feed_epoch;

TEST_CASE("floor_cap_steps lowers a relative floor to that many of the slowest worker's steps, and only where it is higher") {
  auto fake = cluster_a();  // steps of 10 ms (2080 Ti) and 21 ms (T4s)
  BarrierControllerOptions options = BarrierControllerOptions::fixed_t(840);  // 40 T4 steps, as a T* at a step cap
  options.move = orchestra::BarrierMove::Multiplicative;
  options.move_factor = 2;
  options.min_barrier_x_start = 0.125;  // T / 8 = 105 ms, five T4 steps
  {
    BarrierController uncapped(options);
    uncapped.start(fake->view);
    CHECK(uncapped.min_barrier_ms() == doctest::Approx(105));
  }
  options.floor_cap_steps = 2;  // at most two T4 steps: 42 ms
  BarrierController capped(options);
  capped.start(fake->view);
  CHECK(capped.min_barrier_ms() == doctest::Approx(42));
  for (int i = 0; i < 6; ++i) capped.move_barrier(-1);  // 420, 210, 105, 52.5, then kept at 42
  CHECK(capped.barrier_ms() == doctest::Approx(42));
  CHECK(capped.local_steps() == std::vector<int>{4, 2, 2, 2});
  CHECK(capped.start_barrier_ms() == doctest::Approx(840));  // the state's anchor is unchanged

  options.floor_cap_steps = 8;  // 168 ms is above T / 8: the floor stays 105 ms
  BarrierController loose(options);
  loose.start(fake->view);
  CHECK(loose.min_barrier_ms() == doctest::Approx(105));
  options.floor_cap_steps = 0.1;  // never below the fastest step, the default floor
  BarrierController tiny(options);
  tiny.start(fake->view);
  CHECK(tiny.min_barrier_ms() == doctest::Approx(10));

  options.floor_cap_steps = -1;
  CHECK_THROWS_WITH_AS(BarrierController{options}, doctest::Contains("floor_cap_steps"), std::invalid_argument);
  options.floor_cap_steps = 2;
  options.min_barrier_x_start = 0;  // nothing to cap
  CHECK_THROWS_WITH_AS(BarrierController{options}, doctest::Contains("floor_cap_steps"), std::invalid_argument);
}

TEST_CASE("min_barrier_steps keeps T at least that many of the slowest worker's steps, after every other floor") {
  auto fake = cluster_a();  // steps of 10 ms (2080 Ti) and 21 ms (T4s)
  BarrierControllerOptions options = BarrierControllerOptions::fixed_t(84);  // four T4 steps
  options.move = orchestra::BarrierMove::Multiplicative;
  options.move_factor = 4;
  {
    BarrierController free(options);  // the default floor: the fastest step
    free.start(fake->view);
    free.move_barrier(-1);
    CHECK(free.barrier_ms() == doctest::Approx(21));
    free.move_barrier(-1);
    CHECK(free.barrier_ms() == doctest::Approx(10));  // below the T4s' step: they still take one
    CHECK(free.local_steps() == std::vector<int>{1, 1, 1, 1});
  }
  options.min_barrier_steps = 1;
  BarrierController floored(options);
  floored.start(fake->view);
  CHECK(floored.min_barrier_ms() == doctest::Approx(21));
  for (int i = 0; i < 3; ++i) floored.move_barrier(-1);
  CHECK(floored.barrier_ms() == doctest::Approx(21));
  CHECK(floored.local_steps() == std::vector<int>{2, 1, 1, 1});  // the 2080 Ti keeps its two steps
  floored.move_barrier(1);
  CHECK(floored.barrier_ms() == doctest::Approx(84));

  options.min_barrier_x_start = 0.125;  // T / 8 = 10.5 ms, capped lower still in steps:
  options.floor_cap_steps = 0.25;       // the step floor acts last
  options.min_barrier_steps = 2;
  BarrierController last(options);
  last.start(fake->view);
  CHECK(last.min_barrier_ms() == doctest::Approx(42));

  options.min_barrier_steps = -1;
  CHECK_THROWS_WITH_AS(BarrierController{options}, doctest::Contains("min_barrier_steps"), std::invalid_argument);
}

TEST_CASE("lcm_multiple: T is that multiple of T* at the start and at every re-run, and the relative bounds follow it") {
  auto fake = cluster_a();
  BarrierControllerOptions options;
  options.lcm_multiple = 2;
  options.move = orchestra::BarrierMove::Multiplicative;
  options.min_barrier_x_start = 0.5;
  options.max_barrier_x_start = 4;
  BarrierController c(options);
  c.start(fake->view);
  CHECK(c.lcm().barrier_ms == doctest::Approx(21));  // the heuristic's own T* is unchanged
  CHECK(c.barrier_ms() == doctest::Approx(42));
  CHECK(c.start_barrier_ms() == doctest::Approx(42));  // what the RL state's "T vs its start" reads
  CHECK(c.min_barrier_ms() == doctest::Approx(21));
  CHECK(c.max_barrier_ms() == doctest::Approx(168));
  CHECK(c.local_steps() == std::vector<int>{4, 2, 2, 2});
  CHECK(c.plan(at(0, 0, true)).barrier_ms == doctest::Approx(42));
  feed_epoch(c, {20, 21, 21, 21}, 10, 0, 0);  // the re-run's T* is 420 ms (the test above)
  CHECK(c.barrier_ms() == doctest::Approx(840));

  BarrierControllerOptions half;
  half.lcm_multiple = 0.5;
  BarrierController h(half);
  h.start(fake->view);
  CHECK(h.barrier_ms() == doctest::Approx(10.5));
  CHECK(h.local_steps() == std::vector<int>{1, 1, 1, 1});

  for (double bad : {0.0, -1.0, std::nan("")}) {
    BarrierControllerOptions o;
    o.lcm_multiple = bad;
    CHECK_THROWS_WITH_AS(BarrierController{o}, doctest::Contains("lcm_multiple: expected a positive factor"), std::invalid_argument);
  }
}

TEST_CASE("lcm_cap_steps and lcm_cap_x_comm: T* at most max(s slowest steps, k C), at the start and at every re-run") {
  auto equal = cluster_a();
  equal->view.probe_step_ms = [](int, int) { return 21.0; };  // four equal workers, C = 5 ms
  BarrierControllerOptions utilization;
  utilization.lcm_objective = orchestra::LcmObjective::Utilization;  // (experiment configs' default)
  {
    BarrierController uncapped{utilization};
    uncapped.start(equal->view);
    CHECK(uncapped.barrier_ms() == doctest::Approx(64 * 21));  // every T aligns them: the 64-step cap
  }
  const auto started = [&equal, &utilization](double steps, double x_comm, double multiple = 1) {
    BarrierControllerOptions o = utilization;
    o.lcm_cap_steps = steps;
    o.lcm_cap_x_comm = x_comm;
    o.lcm_multiple = multiple;
    o.move = orchestra::BarrierMove::Multiplicative;
    o.min_barrier_x_start = 0.125;
    auto c = std::make_unique<BarrierController>(o);
    c->start(equal->view);
    return c;
  };
  CHECK(started(4, 0)->barrier_ms() == doctest::Approx(84));
  CHECK(started(4, 0)->lcm().barrier_ms == doctest::Approx(64 * 21));  // the heuristic's own T* is kept
  CHECK(started(4, 0)->start_barrier_ms() == doctest::Approx(84));     // the anchor of the state and bounds
  CHECK(started(4, 0)->local_steps() == std::vector<int>{4, 4, 4, 4});
  CHECK(started(0, 40)->barrier_ms() == doctest::Approx(200));   // 40 C
  CHECK(started(4, 40)->barrier_ms() == doctest::Approx(200));   // the larger of the two
  CHECK(started(16, 8)->barrier_ms() == doctest::Approx(336));
  CHECK(started(0.5, 1)->barrier_ms() == doctest::Approx(21));   // never below the slowest step
  CHECK(started(4, 0, 2)->barrier_ms() == doctest::Approx(168)); // the cap comes before T_x_lcm

  // A heterogeneous T* below the cap is kept; a re-run's T* above it is capped.
  auto mixed = cluster_a();  // 10 / 21 / 21 / 21 ms: T* = 21 ms, then 420 ms after the epoch below
  BarrierControllerOptions o;
  o.lcm_cap_steps = 4;
  BarrierController c(o);
  c.start(mixed->view);
  CHECK(c.barrier_ms() == doctest::Approx(21));
  feed_epoch(c, {20, 21, 21, 21}, 10, 0, 0);
  CHECK(c.lcm().barrier_ms == doctest::Approx(420));
  CHECK(c.barrier_ms() == doctest::Approx(84));

  // lcm_cap_above_steps: the cap only where T* is at least that many slowest steps.
  BarrierControllerOptions above = o;
  above.lcm_cap_above_steps = 21;  // the re-run's T* of 420 ms is 20 steps of 21 ms: kept
  BarrierController kept(above);
  kept.start(mixed->view);
  feed_epoch(kept, {20, 21, 21, 21}, 10, 0, 0);
  CHECK(kept.barrier_ms() == doctest::Approx(420));
  above.lcm_cap_above_steps = 19.5;  // below its 20 steps: capped
  BarrierController cut(above);
  cut.start(mixed->view);
  feed_epoch(cut, {20, 21, 21, 21}, 10, 0, 0);
  CHECK(cut.barrier_ms() == doctest::Approx(84));
  BarrierControllerOptions alone;
  alone.lcm_cap_above_steps = 12;  // nothing to limit
  CHECK_THROWS_WITH_AS(BarrierController{alone}, doctest::Contains("lcm_cap_above_steps"), std::invalid_argument);

  for (double bad : {-1.0, std::nan("")}) {
    BarrierControllerOptions b;
    b.lcm_cap_steps = bad;
    CHECK_THROWS_WITH_AS(BarrierController{b}, doctest::Contains("lcm_cap_steps: expected a number of steps >= 0"), std::invalid_argument);
    b.lcm_cap_steps = 0;
    b.lcm_cap_x_comm = bad;
    CHECK_THROWS_WITH_AS(BarrierController{b}, doctest::Contains("lcm_cap_x_comm: expected a factor >= 0"), std::invalid_argument);
  }
}
