#include "lbb/min_max_solver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "lbb/monotone_search.hpp"
#include "lbb/spread_tiebreak.hpp"

namespace lbb {
namespace {

using detail::largest_within;

constexpr double kInf = std::numeric_limits<double>::infinity();

void validate(const std::vector<WorkerTimeModel>& workers, int global_batch) {
  if (global_batch <= 0)
    throw std::invalid_argument("solve_min_max: the global batch must be positive, got " +
                                std::to_string(global_batch));
  std::int64_t capacity = 0;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const auto& w = workers[i];
    const std::string who = "solve_min_max: worker " + std::to_string(i);
    if (w.max_batch < 0)
      throw std::invalid_argument(who + " has a negative max batch (" + std::to_string(w.max_batch) + ")");
    if (w.max_batch == 0) continue;
    if (!w.time_ms) throw std::invalid_argument(who + " has no time function");
    for (int b : {1, w.max_batch})
      if (!std::isfinite(w.time_ms(b)))
        throw std::invalid_argument(who + " predicts a non-finite time at batch " + std::to_string(b));
    capacity += w.max_batch;
  }
  if (capacity < global_batch)
    throw std::invalid_argument("solve_min_max: the workers' max batches sum to " + std::to_string(capacity) +
                                ", less than the global batch " + std::to_string(global_batch) +
                                "; no split fits in memory");
}

// Min-max part of Eq. 3. Let S(T) = sum_i cap_i(T), cap_i(T) the largest B_i with t_i(B_i) <= T;
// the optimum T* is the smallest T with S(T) >= B. A few interpolation/bisection steps on T find a
// T_lo < T* whose caps leave only a small deficit, then a heap hands the remaining samples one by
// one to the worker whose next sample is cheapest. Every sample handed out costs <= T* (while the
// deficit is positive some worker is below cap_i(T*)), and the popped costs never decrease, so the
// result reaches T* exactly. The caps at T_lo and T_hi bracket every later binary search, so each
// step costs less than the one before.
std::vector<int> min_max_split(const std::vector<WorkerTimeModel>& workers, int global_batch) {
  const std::size_t n = workers.size();
  std::vector<int> cap_lo(n, 0), cap_hi(n, 0), cap_mid(n, 0);
  std::int64_t s_lo = 0, s_hi = 0;
  double min_first = kInf, hi = -kInf;
  std::size_t active = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& w = workers[i];
    if (w.max_batch == 0) continue;
    ++active;
    cap_hi[i] = w.max_batch;
    s_hi += w.max_batch;
    min_first = std::min(min_first, w.time_ms(1));
    hi = std::max(hi, w.time_ms(w.max_batch));
  }
  // Below the cheapest single sample nothing fits: S = 0 there.
  double lo = std::nextafter(min_first, -kInf);
  const std::int64_t tolerance = std::max<std::int64_t>(16, static_cast<std::int64_t>(active));
  bool bisect = false;
  for (int iter = 0; iter < 200 && global_batch - s_lo > tolerance; ++iter) {
    // Aim a little under B so that the step lands on the infeasible side with a small deficit.
    const double target = static_cast<double>(global_batch) - static_cast<double>(tolerance) / 2.0;
    double mid = bisect ? lo + (hi - lo) / 2.0
                        : lo + (hi - lo) * ((target - static_cast<double>(s_lo)) / static_cast<double>(s_hi - s_lo));
    if (!(mid > lo && mid < hi)) mid = lo + (hi - lo) / 2.0;
    if (!(mid > lo && mid < hi)) break;  // lo and hi are adjacent doubles: the heap does the rest
    std::int64_t s_mid = 0;
    for (std::size_t i = 0; i < n; ++i) {
      cap_mid[i] = cap_lo[i] == cap_hi[i] ? cap_lo[i] : largest_within(workers[i].time_ms, cap_lo[i], cap_hi[i], mid);
      s_mid += cap_mid[i];
    }
    if (s_mid >= global_batch) {
      hi = mid, s_hi = s_mid, std::swap(cap_hi, cap_mid);
      bisect = true;  // the interpolation overshot: bisect next, so a one-sided approach cannot stall
    } else {
      lo = mid, s_lo = s_mid, std::swap(cap_lo, cap_mid);
      bisect = false;
    }
  }

  // Greedy fill from cap_lo; ties in cost go to the lower index.
  std::vector<int> batch = cap_lo;
  using Entry = std::pair<double, std::size_t>;
  std::vector<Entry> heap;
  heap.reserve(active);
  for (std::size_t i = 0; i < n; ++i)
    if (batch[i] < workers[i].max_batch) heap.emplace_back(workers[i].time_ms(batch[i] + 1), i);
  const auto later = [](const Entry& a, const Entry& b) { return a > b; };
  std::make_heap(heap.begin(), heap.end(), later);
  for (std::int64_t deficit = global_batch - s_lo; deficit > 0; --deficit) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const std::size_t i = heap.back().second;
    heap.pop_back();
    if (++batch[i] < workers[i].max_batch) {
      heap.emplace_back(workers[i].time_ms(batch[i] + 1), i);
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
  return batch;
}

}  // namespace

BatchAllocation solve_min_max(const std::vector<WorkerTimeModel>& workers, int global_batch) {
  validate(workers, global_batch);
  std::vector<int> batch = min_max_split(workers, global_batch);

  double iteration_ms = -kInf;
  for (std::size_t i = 0; i < workers.size(); ++i)
    if (batch[i] > 0) iteration_ms = std::max(iteration_ms, workers[i].time_ms(batch[i]));
  detail::minimize_spread(workers, global_batch, iteration_ms, batch);

  BatchAllocation result;
  result.batch_sizes = std::move(batch);
  result.predicted_ms.assign(workers.size(), 0.0);
  double fastest = kInf;
  result.iteration_ms = -kInf;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const int b = result.batch_sizes[i];
    if (b == 0) continue;
    const double t = workers[i].time_ms(b);
    result.predicted_ms[i] = t;
    result.iteration_ms = std::max(result.iteration_ms, t);
    fastest = std::min(fastest, t);
    ++result.participants;
  }
  result.spread_ms = result.iteration_ms - fastest;
  return result;
}

BatchAllocation solve_min_max(const std::vector<env::BatchTimeModel>& models, const std::vector<int>& max_batch,
                              int global_batch) {
  if (models.size() != max_batch.size())
    throw std::invalid_argument("solve_min_max: " + std::to_string(models.size()) + " models but " +
                                std::to_string(max_batch.size()) + " max batches");
  std::vector<WorkerTimeModel> workers(models.size());
  for (std::size_t i = 0; i < models.size(); ++i) {
    const env::BatchTimeModel* model = &models[i];
    workers[i].time_ms = [model](int b) { return model->eval(b); };
    workers[i].max_batch = max_batch[i];
  }
  return solve_min_max(workers, global_batch);
}

}  // namespace lbb
