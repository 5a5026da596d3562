// LBB Eq. 3 (min-max batch solver), Eq. 4 (straggler effect) and the batch splits.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "lbb/batch_split.hpp"
#include "lbb/min_max_solver.hpp"
#include "lbb/straggler_effect.hpp"

using lbb::solve_min_max;
using lbb::WorkerTimeModel;

namespace {

WorkerTimeModel linear(double a0, double a1, int max_batch) {
  return {[a0, a1](int b) { return a0 + a1 * b; }, max_batch};
}

// LBB Table 2's cluster as linear models: GTX 1070 x2, Tesla M40, GTX 750 (ms).
std::vector<env::BatchTimeModel> table2_models() {
  return {env::BatchTimeModel({6.6, 0.586}), env::BatchTimeModel({6.6, 0.586}), env::BatchTimeModel({8.3, 0.602}),
          env::BatchTimeModel({51.0, 2.671})};
}

// Every split of `left` samples over workers[k..] within the limits, scored as (max, spread).
void brute_force(const std::vector<WorkerTimeModel>& workers, std::size_t k, int left, std::vector<int>& batch,
                 double& best_max, double& best_spread) {
  if (k == workers.size()) {
    if (left != 0) return;
    double hi = -INFINITY, lo = INFINITY;
    for (std::size_t i = 0; i < workers.size(); ++i)
      if (batch[i] > 0) hi = std::max(hi, workers[i].time_ms(batch[i])), lo = std::min(lo, workers[i].time_ms(batch[i]));
    if (hi < best_max || (hi == best_max && hi - lo < best_spread)) best_max = hi, best_spread = hi - lo;
    return;
  }
  for (int b = 0; b <= std::min(left, workers[k].max_batch); ++b) {
    batch[k] = b;
    brute_force(workers, k + 1, left - b, batch, best_max, best_spread);
  }
}

}  // namespace

TEST_CASE("Eq. 3: two linear workers split so both take the same time") {
  // t0 = B, t1 = 2B, B = 9: 6 and 3 samples, 6 ms each.
  const auto a = solve_min_max({linear(0, 1, 100), linear(0, 2, 100)}, 9);
  CHECK(a.batch_sizes == std::vector<int>{6, 3});
  CHECK(a.iteration_ms == doctest::Approx(6.0));
  CHECK(a.spread_ms == doctest::Approx(0.0));
  CHECK(a.participants == 2);
}

TEST_CASE("Eq. 3: integer split when the balance point is fractional") {
  // 10 + B = 10 + 2B' with B + B' = 100 balances at 66.7 / 33.3: (67, 33) gives 77 / 76 ms,
  // (66, 34) gives 76 / 78, so (67, 33) with a 1 ms spread.
  const auto a = solve_min_max({linear(10, 1, 100), linear(10, 2, 100)}, 100);
  CHECK(a.batch_sizes == std::vector<int>{67, 33});
  CHECK(a.predicted_ms == std::vector<double>{77.0, 76.0});
  CHECK(a.iteration_ms == doctest::Approx(77.0));
  CHECK(a.spread_ms == doctest::Approx(1.0));
}

TEST_CASE("Eq. 3: a worker whose single sample is slower than the optimum is taken out") {
  // 50 samples on the fast worker take 50 ms; one sample on the other takes 101 ms.
  const auto a = solve_min_max({linear(0, 1, 100), linear(100, 1, 100)}, 50);
  CHECK(a.batch_sizes == std::vector<int>{50, 0});
  CHECK(a.predicted_ms[1] == 0.0);
  CHECK(a.participants == 1);
  CHECK(a.iteration_ms == doctest::Approx(50.0));
  CHECK(a.spread_ms == 0.0);
}

TEST_CASE("Eq. 3: the memory limit B_lim binds") {
  // Unbounded, t0 = B and t1 = 3B would split 100 as 75 / 25 (75 ms). With B_lim0 = 60 the rest,
  // 40, goes to worker 1: 120 ms.
  const auto a = solve_min_max({linear(0, 1, 60), linear(0, 3, 100)}, 100);
  CHECK(a.batch_sizes == std::vector<int>{60, 40});
  CHECK(a.iteration_ms == doctest::Approx(120.0));
  CHECK(a.spread_ms == doctest::Approx(60.0));
}

TEST_CASE("Eq. 3 on LBB Table 2: from 392.9 ms with equal batches to about 104.5 ms") {
  const auto models = table2_models();
  CHECK(models[3].eval(128) == doctest::Approx(392.888));  // SSGD's straggler, Table 2: 392.92 ms
  const auto a = solve_min_max(models, {1024, 1024, 1024, 256}, 512);
  // Worked out by enumeration: 104.462 ms is the least possible slowest time; of the splits that
  // reach it, (167, 166, 159, 20) has the smallest spread (104.462 - 103.876). Paper: (167, 167, 158, 20).
  CHECK(a.batch_sizes == std::vector<int>{167, 166, 159, 20});
  CHECK(a.iteration_ms == doctest::Approx(104.462));
  CHECK(a.spread_ms == doctest::Approx(0.586));
  CHECK(a.predicted_ms[3] == doctest::Approx(51.0 + 2.671 * 20));
}

TEST_CASE("Eq. 3 tie-break: a worker is dropped when that narrows the spread at the same optimum") {
  // Worker 1 takes 1 ms for one sample and 1001 ms for two. Min-max alone gives (5, 1, 4) or
  // (5, 0, 5), both 5 ms; keeping worker 1 leaves a 4 ms spread, dropping it none.
  const WorkerTimeModel steep{[](int b) { return 1.0 + 1000.0 * (b - 1); }, 10};
  const auto a = solve_min_max({linear(0, 1, 100), steep, linear(0, 1, 100)}, 10);
  CHECK(a.batch_sizes == std::vector<int>{5, 0, 5});
  CHECK(a.iteration_ms == 5.0);
  CHECK(a.spread_ms == 0.0);
  CHECK(a.participants == 2);
}

TEST_CASE("Eq. 3 matches enumeration on random small step functions with plateaus") {
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> workers_d(1, 4), batch_d(1, 11), limit_d(0, 8), step_d(0, 4), start_d(0, 6);
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int n = workers_d(rng);
    std::vector<WorkerTimeModel> workers;
    std::vector<std::vector<double>> tables;
    int capacity = 0;
    for (int i = 0; i < n; ++i) {
      // Integer steps, zeros included: ties and flat stretches are the hard cases.
      std::vector<double> table(12, 0.0);
      table[1] = start_d(rng);
      for (int b = 2; b < 12; ++b) table[b] = table[b - 1] + step_d(rng);
      tables.push_back(table);
      const int limit = limit_d(rng);
      capacity += limit;
      workers.push_back({[table](int b) { return table.at(static_cast<std::size_t>(b)); }, limit});
    }
    const int global_batch = batch_d(rng);
    if (capacity < global_batch) {
      CHECK_THROWS_AS(solve_min_max(workers, global_batch), std::invalid_argument);
      continue;
    }
    std::vector<int> scratch(workers.size(), 0);
    double best_max = INFINITY, best_spread = INFINITY;
    brute_force(workers, 0, global_batch, scratch, best_max, best_spread);
    const auto a = solve_min_max(workers, global_batch);
    INFO("trial " << trial);
    REQUIRE(std::accumulate(a.batch_sizes.begin(), a.batch_sizes.end(), 0) == global_batch);
    for (int i = 0; i < n; ++i) REQUIRE(a.batch_sizes[i] <= workers[i].max_batch);
    CHECK(a.iteration_ms == best_max);
    CHECK(a.spread_ms == best_spread);
    ++checked;
  }
  CHECK(checked > 200);
}

TEST_CASE("Eq. 3 at 1,024 workers: optimal by certificate") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> a0_d(5, 50), a1_d(0.2, 3);
  std::vector<env::BatchTimeModel> models;
  std::vector<int> limits;
  for (int i = 0; i < 1024; ++i) models.emplace_back(std::vector<double>{a0_d(rng), a1_d(rng)}), limits.push_back(48 + i % 200);
  const auto a = solve_min_max(models, limits, 65536);
  REQUIRE(std::accumulate(a.batch_sizes.begin(), a.batch_sizes.end(), 0) == 65536);
  // No split can be faster: below the optimum the workers together hold fewer than B samples.
  const double below = std::nextafter(a.iteration_ms, 0.0);
  long long hold = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    REQUIRE(a.batch_sizes[i] <= limits[i]);
    int b = 0;
    while (b < limits[i] && models[i].eval(b + 1) <= below) ++b;
    hold += b;
  }
  CHECK(hold < 65536);
}

TEST_CASE("Eq. 3: limits up to INT_MAX do not overflow the searches") {
  const int huge = std::numeric_limits<int>::max();
  const auto a = solve_min_max({linear(0, 1, huge), linear(0, 1, huge)}, 1000);
  CHECK(a.batch_sizes == std::vector<int>{500, 500});
}

TEST_CASE("Eq. 3: bad input is rejected with a reason") {
  CHECK_THROWS_WITH_AS(solve_min_max({linear(0, 1, 100), linear(0, 1, 200)}, 512),
                       "solve_min_max: the workers' max batches sum to 300, less than the global batch 512; "
                       "no split fits in memory",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(solve_min_max({linear(0, 1, 100)}, 0), "solve_min_max: the global batch must be positive, got 0",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(solve_min_max({linear(0, 1, -1), linear(0, 1, 10)}, 5),
                       "solve_min_max: worker 0 has a negative max batch (-1)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(solve_min_max({WorkerTimeModel{nullptr, 4}}, 2), "solve_min_max: worker 0 has no time function",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(solve_min_max(table2_models(), {1, 2}, 2), "solve_min_max: 4 models but 2 max batches",
                       std::invalid_argument);
}

TEST_CASE("Eq. 4: straggler effect over the workers that take part") {
  CHECK(lbb::straggler_effect({100.0, 105.0, 110.0}) == doctest::Approx(10.0 / 105.0));
  // LBB Table 2, SSGD: (392.92 - 81.49) / mean(81.81, 81.49, 85.39, 392.92).
  CHECK(lbb::straggler_effect({81.81, 81.49, 85.39, 392.92}) == doctest::Approx(311.43 / 160.4025));
  // The worker taken out (B = 0, no time) is not the fastest.
  CHECK(lbb::straggler_effect({100.0, 0.0, 110.0}, {10, 0, 12}) == doctest::Approx(10.0 / 105.0));
  CHECK(lbb::straggler_effect({42.0}) == 0.0);
  CHECK(lbb::straggler_effect({42.0, 7.0}, {3, 0}) == 0.0);
  CHECK(lbb::straggler_effect({0.0, 0.0}) == 0.0);
  CHECK_THROWS_AS(lbb::straggler_effect({1.0, 2.0}, {1}), std::invalid_argument);
}

TEST_CASE("equal and proportional splits sum to B within the limits") {
  CHECK(lbb::equal_split(512, {1000, 1000, 1000}) == std::vector<int>{171, 171, 170});
  CHECK(lbb::equal_split(512, {1000, 100, 1000}) == std::vector<int>{206, 100, 206});
  CHECK(lbb::proportional_split({1, 2, 1}, 100, {100, 100, 100}) == std::vector<int>{25, 50, 25});
  CHECK(lbb::proportional_split({1, 1, 1}, 100, {100, 100, 100}) == std::vector<int>{34, 33, 33});
  // 25 / 75 would overflow worker 1's limit of 50: it is capped and worker 0 takes the rest.
  CHECK(lbb::proportional_split({1, 3}, 100, {100, 50}) == std::vector<int>{50, 50});
  CHECK(lbb::proportional_split({0, 1}, 10, {100, 100}) == std::vector<int>{0, 10});
  CHECK_THROWS_WITH_AS(lbb::proportional_split({0, 1}, 10, {100, 5}),
                       "proportional_split: the workers with a positive weight hold 5 samples, less than the global "
                       "batch 10",
                       std::invalid_argument);
  CHECK_THROWS_AS(lbb::proportional_split({-1, 1}, 10, {100, 100}), std::invalid_argument);
}
