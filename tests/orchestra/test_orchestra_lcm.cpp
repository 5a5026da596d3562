#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "orchestra/lcm_heuristic.hpp"

using orchestra::lcm_barrier;
using orchestra::LcmOptions;

namespace {

LcmOptions spread(int m, int max_local_steps = 64) { return LcmOptions{m, max_local_steps}; }

// The paper's steps read literally, on a 1 ms grid: correct for integer batch times, whose multiples
// all lie on the grid. idle = max_n mod(T, t_n); stop at the first T whose spread passes M.
struct Brute {
  double barrier = 0;
  double idle = 0;
};
Brute brute_force(const std::vector<int>& t, int m, int cap) {
  const int t_max = *std::max_element(t.begin(), t.end());
  Brute best{double(t_max), std::numeric_limits<double>::infinity()};
  for (int T = t_max;; ++T) {
    int lo = std::numeric_limits<int>::max(), hi = 0, idle = 0;
    for (int tn : t) {
      lo = std::min(lo, T / tn);
      hi = std::max(hi, T / tn);
      idle = std::max(idle, T % tn);
    }
    if (hi - lo > m || hi > cap) break;
    if (idle < best.idle) best = {double(T), double(idle)};
  }
  return best;
}

}  // namespace

TEST_CASE("LCM, batch times 2, 3, 4 ms with M = 3: T* = 12 where every worker ends exactly") {
  // Candidates (multiples of 2, 3, 4 from T = 4): 4 (tau 2,1,1, idle 1), 6 (3,2,1, idle 2),
  // 8 (4,2,2, idle 2), 9 (4,3,2, idle 1), 10 (5,3,2, idle 2), 12 (6,4,3, idle 0, spread 3 <= M).
  const auto r = lcm_barrier({2, 3, 4}, spread(3));
  CHECK(r.barrier_ms == doctest::Approx(12));
  CHECK(r.local_steps == std::vector<int>{6, 4, 3});
  CHECK(r.max_idle_ms == 0);
  CHECK(r.idle_ms == std::vector<double>{0, 0, 0});
  CHECK(r.step_spread == 3);
  CHECK(r.constraints_met);
  CHECK(r.candidates == 6);
}

TEST_CASE("LCM, batch times 2, 3, 4 ms with M = 2: the search stops at T = 10, T* = 4") {
  // Same candidates, but T = 10 gives tau 5,3,2 (spread 3 > 2) and ends the search: the smallest
  // idle among 4, 6, 8, 9 is 1 ms, at T = 4 and T = 9; ties go to the smaller T.
  const auto r = lcm_barrier({2, 3, 4}, spread(2));
  CHECK(r.barrier_ms == doctest::Approx(4));
  CHECK(r.local_steps == std::vector<int>{2, 1, 1});
  CHECK(r.idle_ms[0] == doctest::Approx(0));
  CHECK(r.idle_ms[1] == doctest::Approx(1));
  CHECK(r.idle_ms[2] == doctest::Approx(0));
  CHECK(r.max_idle_ms == doctest::Approx(1));
  CHECK(r.step_spread == 1);
  CHECK(r.candidates == 4);
}

TEST_CASE("LCM, M = 0 cannot be met at T = max t_b: T* = max t_b and the result says so") {
  const auto r = lcm_barrier({2, 3, 4}, spread(0));
  CHECK_FALSE(r.constraints_met);
  CHECK(r.barrier_ms == doctest::Approx(4));
  CHECK(r.local_steps == std::vector<int>{2, 1, 1});
  CHECK(r.step_spread == 1);
}

TEST_CASE("LCM, an RTX 2080 Ti 2.1x as fast as a T4 (10 ms vs 21 ms)") {
  SUBCASE("M = 8: T* = 21, two steps on the 2080 Ti, one on the T4, 1 ms idle") {
    const auto r = lcm_barrier({10, 21, 21, 21}, spread(8));
    CHECK(r.barrier_ms == doctest::Approx(21));
    CHECK(r.local_steps == std::vector<int>{2, 1, 1, 1});
    CHECK(r.max_idle_ms == doctest::Approx(1));
  }
  SUBCASE("M = 10: T = 190 (tau 19, 9) also leaves 1 ms idle; the tie goes to the smaller T") {
    const auto r = lcm_barrier({10, 21}, spread(10));
    CHECK(r.barrier_ms == doctest::Approx(21));
    CHECK(r.max_idle_ms == doctest::Approx(1));
  }
  SUBCASE("M = 11: the search reaches lcm(10, 21) = 210, tau 21 and 10, no idle") {
    const auto r = lcm_barrier({10, 21}, spread(11));
    CHECK(r.barrier_ms == doctest::Approx(210));
    CHECK(r.local_steps == std::vector<int>{21, 10});
    CHECK(r.max_idle_ms == 0);
  }
}

TEST_CASE("LCM, floating-point multiples count: 3 x 0.1 ms fits 0.3 ms exactly") {
  const auto r = lcm_barrier({0.1, 0.3}, spread(8));
  CHECK(r.barrier_ms == doctest::Approx(0.3));
  CHECK(r.local_steps == std::vector<int>{3, 1});
  CHECK(r.max_idle_ms == 0);
  CHECK(r.candidates == 1);
  CHECK(orchestra::steps_within(0.1 * 3, 0.1) == 3);
  CHECK(orchestra::steps_within(0.3, 0.1) == 3);
  CHECK(orchestra::steps_within(0.29, 0.1) == 2);
}

TEST_CASE("LCM, equal workers: T* = t_b, one step each, found at the first candidate") {
  const auto r = lcm_barrier({5, 5, 5}, spread(8));
  CHECK(r.barrier_ms == doctest::Approx(5));
  CHECK(r.local_steps == std::vector<int>{1, 1, 1});
  CHECK(r.candidates == 1);
}

TEST_CASE("LCM, almost equal workers: the step cap ends a search M alone would not") {
  // floor(T/10) - floor(T/10.001) stays <= 8 up to T ~ 90,000 ms; the cap of 64 steps ends it.
  const auto r = lcm_barrier({10, 10.001}, spread(8, 64));
  CHECK(r.constraints_met);
  CHECK(r.local_steps[0] <= 64);
  CHECK(r.candidates <= 2 * 64);
  CHECK(r.barrier_ms == doctest::Approx(10.001));  // idle 0.001 ms; later multiples drift apart
  CHECK(r.local_steps == std::vector<int>{1, 1});
}

TEST_CASE("LCM agrees with a literal 1 ms scan of the paper's steps on random integer clusters") {
  std::mt19937 rng(20240601);
  std::uniform_int_distribution<int> time(5, 40), workers(2, 6), m(0, 10);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<int> t(static_cast<std::size_t>(workers(rng)));
    for (int& tn : t) tn = time(rng);
    const int max_spread = m(rng);
    const int cap = 200;
    const auto expected = brute_force(t, max_spread, cap);
    const auto r = lcm_barrier(std::vector<double>(t.begin(), t.end()), spread(max_spread, cap));
    CAPTURE(trial);
    if (!r.constraints_met) {  // the scan found no candidate either
      CHECK(std::isinf(expected.idle));
      continue;
    }
    CHECK(r.barrier_ms == doctest::Approx(expected.barrier));
    CHECK(r.max_idle_ms == doctest::Approx(expected.idle));
  }
}

TEST_CASE("LCM examines O(M N) candidates on a 200-worker cluster with a 2.1x speed range") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> time(10.0, 21.0);
  std::vector<double> t(200);
  for (double& tn : t) tn = time(rng);
  t[0] = 10.0;
  t[1] = 21.0;
  const int m = 8;
  const auto r = lcm_barrier(t, spread(m, 1000));
  // The fastest worker stops within (M + 1) / (1 - t_min / t_max) + 1 steps, so no worker passes it.
  const double per_worker = (m + 1) / (1 - 10.0 / 21.0) + 1;
  CHECK(r.candidates <= static_cast<std::int64_t>(std::ceil(per_worker * 200)));
  CHECK(r.step_spread <= m);
}

TEST_CASE("LCM rejects unusable input with a reason") {
  CHECK_THROWS_WITH_AS(lcm_barrier({}), doctest::Contains("no batch times"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(lcm_barrier({2, 0}), doctest::Contains("worker 1"), std::invalid_argument);
  CHECK_THROWS_AS(lcm_barrier({2, -1}), std::invalid_argument);
  CHECK_THROWS_AS(lcm_barrier({2, std::nan("")}), std::invalid_argument);
  CHECK_THROWS_AS(lcm_barrier({2, std::numeric_limits<double>::infinity()}), std::invalid_argument);
  CHECK_THROWS_WITH_AS(lcm_barrier({2, 3}, spread(-1)), doctest::Contains("max_step_spread (M) must be >= 0"),
                       std::invalid_argument);
  CHECK_THROWS_AS(lcm_barrier({2, 3}, spread(2, 0)), std::invalid_argument);
}
