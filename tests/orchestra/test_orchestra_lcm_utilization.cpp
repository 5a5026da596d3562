// The LCM heuristic's Utilization objective (orchestra/lcm_heuristic.hpp): T* minimizes
// (t_W + C) / (T + C), the least busy worker's non-computing share of a round, instead of t_W.
#include <doctest/doctest.h>

#include <limits>
#include <stdexcept>
#include <vector>

#include "orchestra/barrier_controller.hpp"
#include "orchestra/lcm_heuristic.hpp"
#include "controller_fixture.hpp"

using orchestra::lcm_barrier;
using orchestra::LcmObjective;
using orchestra::LcmOptions;
using testing::two_speed_cluster;

namespace {

LcmOptions utilization(int m, double comm_ms, int max_local_steps = 64) {
  return LcmOptions{m, max_local_steps, LcmObjective::Utilization, comm_ms};
}

}  // namespace

TEST_CASE("LCM utilization, batch times 2, 3, 4 ms, M = 2, C = 0: T* = 9, not the literal rule's 4") {
  // Candidates before the spread passes 2 at T = 10: 4 (tau 2,1,1, idle 1: 1/4), 6 (3,2,1, idle 2:
  // 2/6), 8 (4,2,2, idle 2: 2/8), 9 (4,3,2, idle 1: 1/9). The literal rule ties 4 and 9 on 1 ms
  // and takes 4; relative to the barrier, 1 ms of 9 wastes less than 1 ms of 4.
  const auto r = lcm_barrier({2, 3, 4}, utilization(2, 0));
  CHECK(r.barrier_ms == doctest::Approx(9));
  CHECK(r.local_steps == std::vector<int>{4, 3, 2});
  CHECK(r.max_idle_ms == doctest::Approx(1));
  CHECK(r.round_waste == doctest::Approx(1.0 / 9));
  CHECK(r.candidates == 4);
  CHECK(lcm_barrier({2, 3, 4}, LcmOptions{2, 64}).barrier_ms == doctest::Approx(4));
}

TEST_CASE("LCM utilization, 2, 3, 4 ms with C = 3 ms: (1 + 3) / (9 + 3) at T* = 9") {
  // 4: 4/7, 6: 5/9, 8: 5/11, 9: 4/12 = 1/3.
  const auto r = lcm_barrier({2, 3, 4}, utilization(2, 3));
  CHECK(r.barrier_ms == doctest::Approx(9));
  CHECK(r.round_waste == doctest::Approx(1.0 / 3));
}

TEST_CASE("LCM utilization, 2, 3, 4 ms, M = 3, C = 0: zero idle at T = 12 ends the search as before") {
  const auto r = lcm_barrier({2, 3, 4}, utilization(3, 0));
  CHECK(r.barrier_ms == doctest::Approx(12));
  CHECK(r.round_waste == 0);
  CHECK(r.candidates == 6);
}

TEST_CASE("LCM utilization, a 2080 Ti at 10 ms and three T4s at 21 ms, C = 5 ms, M = 8: T* = 150") {
  // The literal rule keeps T = 21 (tau 2, 1: 1 ms idle, then 5 ms of all-reduce after 21 ms of work).
  // Counting C, larger T amortizes it: the search runs to T = 160 (tau 16, 7: spread 9 > M) and the
  // best candidate before it is 150 = 15 * 10, where the T4s end at 147: (3 + 5) / (150 + 5).
  const auto r = lcm_barrier({10, 21, 21, 21}, utilization(8, 5));
  CHECK(r.barrier_ms == doctest::Approx(150));
  CHECK(r.local_steps == std::vector<int>{15, 7, 7, 7});
  CHECK(r.max_idle_ms == doctest::Approx(3));
  CHECK(r.round_waste == doctest::Approx(8.0 / 155));
  CHECK(r.step_spread == 8);
  CHECK(r.candidates == 20);
}

TEST_CASE("LCM utilization on equal workers: with communication T goes to the step cap") {
  // The spread never grows; only max_local_steps stops the search. (0 + 5) / (160 + 5).
  const auto r = lcm_barrier({10, 10}, utilization(8, 5, 16));
  CHECK(r.barrier_ms == doctest::Approx(160));
  CHECK(r.local_steps == std::vector<int>{16, 16});
  CHECK(r.round_waste == doctest::Approx(5.0 / 165));
  // Without communication there is nothing to amortize: T = t_b, no idle, one candidate.
  const auto free = lcm_barrier({10, 10}, utilization(8, 0, 16));
  CHECK(free.barrier_ms == doctest::Approx(10));
  CHECK(free.candidates == 1);
}

TEST_CASE("LCM utilization rejects a negative or non-finite communication time") {
  CHECK_THROWS_WITH_AS(lcm_barrier({2, 3}, utilization(2, -1)), doctest::Contains("comm_ms"), std::invalid_argument);
  CHECK_THROWS_AS(lcm_barrier({2, 3}, utilization(2, std::numeric_limits<double>::infinity())), std::invalid_argument);
}

TEST_CASE("the controller passes the cost model's all-reduce time as C, then the measured one") {
  const env::ClusterView view = two_speed_cluster();
  orchestra::BarrierControllerOptions options;
  options.lcm_objective = LcmObjective::Utilization;
  orchestra::BarrierController c(options);
  c.start(view);
  CHECK(c.comm_ms() == doctest::Approx(5));
  CHECK(c.barrier_ms() == doctest::Approx(150));
  CHECK(c.local_steps() == std::vector<int>{15, 7, 7, 7});

  // An epoch of two rounds whose all-reduce took 3 ms each (and the same batch times): C = 3 and
  // the heuristic re-runs on it. T* stays 150, now scored (3 + 3) / (150 + 3).
  env::EpochReport epoch;
  epoch.accuracy = 0.5;
  epoch.worker_steps = {30, 14, 14, 14};
  epoch.worker_busy_ms = {300, 294, 294, 294};
  for (int round = 0; round < 2; ++round) {
    env::RoundReport report;
    report.round = round;
    report.comm_ms = 3;
    for (std::size_t n = 0; n < 4; ++n) {
      env::WorkerRoundStats w;
      w.batch_size = 64;
      w.local_steps = c.local_steps()[n];
      w.samples = w.local_steps * 64;
      w.compute_ms = w.local_steps * (n == 0 ? 10.0 : 21.0);
      report.workers.push_back(w);
    }
    c.observe_round(report);
  }
  c.observe_epoch(epoch);
  CHECK(c.comm_ms() == doctest::Approx(3));
  CHECK(c.lcm().round_waste == doctest::Approx(6.0 / 153));
  CHECK(c.barrier_ms() == doctest::Approx(150));
}
