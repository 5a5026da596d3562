// Microseconds per LBB Eq. 3 solve (lbb::solve_min_max on env::BatchTimeModel), median over
// repetitions, at 4 workers (LBB's testbed, B = 512), 64 workers (B = 8,192) and 1,024 workers
// (B = 65,536). Linear models (the online model of Eq. 1) and increasing cubics (the profiling
// model) with seeded random coefficients; each worker's B_lim is between 2 and 3.5 times B / N,
// so some limits bind.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "env/sim/batch_time_model.hpp"
#include "lbb/min_max_solver.hpp"

namespace {

struct Case {
  int workers;
  int global_batch;
  bool cubic;
  int repetitions;
};

struct Timing {
  double median_us;
  double min_us;
  double iteration_ms;
};

Timing run(const Case& c) {
  std::mt19937 rng(12345u + static_cast<unsigned>(c.workers));
  std::uniform_real_distribution<double> a0(5.0, 50.0), a1(0.2, 3.0), a2(0.0, 1e-3), a3(0.0, 1e-6);
  std::vector<env::BatchTimeModel> models;
  std::vector<int> limits;
  const int share = c.global_batch / c.workers;
  for (int i = 0; i < c.workers; ++i) {
    const int limit = 2 * share + (i % 7) * share / 4;
    limits.push_back(limit);
    if (c.cubic) models.emplace_back(std::vector<double>{a0(rng), a1(rng), a2(rng), a3(rng)}, limit);
    else models.emplace_back(std::vector<double>{a0(rng), a1(rng)});
  }
  std::vector<double> us;
  double iteration_ms = 0.0;
  for (int r = 0; r < c.repetitions + 3; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const lbb::BatchAllocation a = lbb::solve_min_max(models, limits, c.global_batch);
    const auto stop = std::chrono::steady_clock::now();
    if (std::accumulate(a.batch_sizes.begin(), a.batch_sizes.end(), 0) != c.global_batch)
      throw std::logic_error("bench_solver: the split does not sum to B");
    iteration_ms = a.iteration_ms;
    if (r >= 3) us.push_back(std::chrono::duration<double, std::micro>(stop - start).count());  // 3 warm-ups
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us.front(), iteration_ms};
}

}  // namespace

int main() {
  const std::vector<Case> cases = {
      {4, 512, false, 2001},   {4, 512, true, 2001},    {64, 8192, false, 501},
      {64, 8192, true, 501},   {1024, 65536, false, 101}, {1024, 65536, true, 101},
  };
  std::printf("LBB Eq. 3 solver (lbb::solve_min_max), microseconds per solve\n\n");
  std::printf("| workers | global batch | model  | median us | min us | reps | slowest worker ms |\n");
  std::printf("|--------:|-------------:|--------|----------:|-------:|-----:|------------------:|\n");
  for (const Case& c : cases) {
    const Timing t = run(c);
    std::printf("| %7d | %12d | %-6s | %9.1f | %6.1f | %4d | %17.3f |\n", c.workers, c.global_batch,
                c.cubic ? "cubic" : "linear", t.median_us, t.min_us, c.repetitions, t.iteration_ms);
  }
  return 0;
}
