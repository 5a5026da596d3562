#include "lbb/spread_tiebreak.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "lbb/monotone_search.hpp"

namespace lbb::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Past this many DP cells the optional-drop knapsack falls back to a greedy by value density. It
// is only reached when the time functions have long flat stretches exactly at the optimum.
constexpr std::int64_t kMaxKnapsackCells = std::int64_t{1} << 24;

// Doubles in increasing order map to int64 keys in increasing order, so "the largest double L
// with a monotone property" is found exactly by bisection over the keys (<= 64 steps).
std::int64_t order_key(double x) {
  std::int64_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  return bits >= 0 ? bits : std::numeric_limits<std::int64_t>::min() - bits;
}

double from_key(std::int64_t key) {
  const std::int64_t bits = key >= 0 ? key : std::numeric_limits<std::int64_t>::min() - key;
  double x = 0;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// What each worker could take at the optimum T*: cap_j = largest B_j with t_j(B_j) <= T*.
// Any split with the optimal slowest time has B_j <= cap_j, and sum cap_j = B + excess.
struct Slack {
  std::vector<int> cap;
  std::vector<double> cap_ms;  // t_j(cap_j)
  std::int64_t excess = 0;
};

Slack slack_at(const std::vector<WorkerTimeModel>& workers, int global_batch, double optimum,
               const std::vector<int>& batch) {
  Slack s;
  s.cap.assign(workers.size(), 0);
  s.cap_ms.assign(workers.size(), 0.0);
  std::int64_t total = 0;
  for (std::size_t j = 0; j < workers.size(); ++j) {
    const auto& t = workers[j].time_ms;
    const int limit = workers[j].max_batch;
    int good = batch[j];
    // Gallop up from the current batch: cap_j is usually batch_j or batch_j + 1.
    for (std::int64_t step = 1; good < limit; step *= 2) {
      const int next = static_cast<int>(std::min<std::int64_t>(limit, good + step));
      if (t(next) > optimum) {
        good = largest_within(t, good, next - 1, optimum);
        break;
      }
      good = next;
    }
    s.cap[j] = good;
    if (good > 0) s.cap_ms[j] = t(good);
    total += good;
  }
  s.excess = total - global_batch;
  return s;
}

// A way to keep every participant at or above a level L: which workers sit out, the lowest batch
// each kept worker may go down to, and how many samples must still come off the kept ones.
struct Choice {
  bool feasible = false;
  std::vector<char> out;
  std::vector<int> floor;
  std::int64_t removals = 0;
};

// Optional drops: choose workers to take out (weight cap_j, value floor_j) with total weight
// <= capacity and the largest total value. Returns the chosen indices and their value.
std::pair<std::vector<std::size_t>, std::int64_t> best_drops(const std::vector<std::size_t>& items,
                                                             const Slack& s, const std::vector<int>& floor,
                                                             std::int64_t capacity) {
  const std::size_t width = static_cast<std::size_t>(capacity) + 1;
  std::vector<std::size_t> chosen;
  if (static_cast<std::int64_t>(items.size() * width) <= kMaxKnapsackCells) {
    std::vector<std::int64_t> best(width, 0);
    std::vector<char> take(items.size() * width, 0);
    for (std::size_t k = 0; k < items.size(); ++k) {
      const std::size_t weight = static_cast<std::size_t>(s.cap[items[k]]);
      const std::int64_t value = floor[items[k]];
      for (std::size_t w = width; w-- > weight;) {
        if (best[w - weight] + value > best[w]) {
          best[w] = best[w - weight] + value;
          take[k * width + w] = 1;
        }
      }
    }
    std::size_t w = width - 1;
    for (std::size_t k = items.size(); k-- > 0;)
      if (take[k * width + w]) chosen.push_back(items[k]), w -= static_cast<std::size_t>(s.cap[items[k]]);
    return {chosen, best[width - 1]};
  }
  std::vector<std::size_t> order = items;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return static_cast<double>(floor[a]) / s.cap[a] > static_cast<double>(floor[b]) / s.cap[b];
  });
  std::int64_t used = 0, value = 0;
  for (std::size_t j : order)
    if (used + s.cap[j] <= capacity) used += s.cap[j], value += floor[j], chosen.push_back(j);
  return {chosen, value};
}

// Is there a split with slowest time <= T* and every participant at >= level? Workers that cannot
// reach the level must sit out; the others may shed samples down to floor_j (the first batch at
// the level). If shedding alone cannot remove the excess, more workers sit out, each freeing
// floor_j samples of shedding room: a small 0/1 knapsack, whose capacity is the excess left.
Choice choose(const std::vector<WorkerTimeModel>& workers, const Slack& s, double level) {
  const std::size_t n = workers.size();
  Choice c;
  c.out.assign(n, 1);
  c.floor.assign(n, 0);
  std::int64_t forced = 0, removable = 0;
  std::vector<std::size_t> droppable;
  for (std::size_t j = 0; j < n; ++j) {
    const int cap = s.cap[j];
    if (cap == 0) continue;
    if (s.cap_ms[j] < level) {
      forced += cap;
      continue;
    }
    c.out[j] = 0;
    // No worker sheds more than the excess, so search only the last excess + 1 batches.
    const auto& t = workers[j].time_ms;
    const int window = static_cast<int>(std::max<std::int64_t>(1, cap - (s.excess + 1)));
    c.floor[j] = t(window) >= level ? window : smallest_reaching(t, window + 1, cap, level);
    removable += cap - c.floor[j];
    if (cap <= s.excess) droppable.push_back(j);
  }
  if (forced > s.excess) return c;
  const std::int64_t capacity = s.excess - forced;
  if (removable >= capacity) {
    c.feasible = true;
    c.removals = capacity;
    return c;
  }
  std::vector<std::size_t> items;
  for (std::size_t j : droppable)
    if (s.cap[j] <= capacity) items.push_back(j);
  const auto [drops, value] = best_drops(items, s, c.floor, capacity);
  if (value < capacity - removable) return c;
  c.feasible = true;
  c.removals = capacity;
  for (std::size_t j : drops) c.out[j] = 1, c.removals -= s.cap[j];
  return c;
}

// Start every kept worker at cap_j and take the remaining samples off, each time from the worker
// whose time after losing one stays highest (max-min greedy), never below its floor.
std::vector<int> build(const std::vector<WorkerTimeModel>& workers, const Slack& s, const Choice& c) {
  const std::size_t n = workers.size();
  std::vector<int> batch(n, 0);
  using Entry = std::pair<double, std::size_t>;
  std::vector<Entry> heap;
  for (std::size_t j = 0; j < n; ++j) {
    if (c.out[j]) continue;
    batch[j] = s.cap[j];
    if (batch[j] > c.floor[j]) heap.emplace_back(workers[j].time_ms(batch[j] - 1), j);
  }
  std::make_heap(heap.begin(), heap.end());
  for (std::int64_t left = c.removals; left > 0; --left) {
    std::pop_heap(heap.begin(), heap.end());
    const std::size_t j = heap.back().second;
    heap.pop_back();
    if (--batch[j] > c.floor[j]) {
      heap.emplace_back(workers[j].time_ms(batch[j] - 1), j);
      std::push_heap(heap.begin(), heap.end());
    }
  }
  return batch;
}

}  // namespace

void minimize_spread(const std::vector<WorkerTimeModel>& workers, int global_batch, double iteration_ms,
                     std::vector<int>& batch) {
  double fastest = kInf;
  for (std::size_t j = 0; j < workers.size(); ++j)
    if (batch[j] > 0) fastest = std::min(fastest, workers[j].time_ms(batch[j]));
  if (!(fastest < iteration_ms)) return;  // spread 0 already
  const Slack s = slack_at(workers, global_batch, iteration_ms, batch);
  if (s.excess == 0) return;  // B_j = cap_j is the only split at the optimum

  // Usually the min-max split is already spread-optimal: one check decides that.
  const double first = std::nextafter(fastest, kInf);
  Choice best = choose(workers, s, first);
  if (!best.feasible) return;
  std::int64_t lo = order_key(first), hi = order_key(std::nextafter(iteration_ms, kInf));
  while (static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) > 1) {
    const std::int64_t mid =
        lo + static_cast<std::int64_t>((static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo)) / 2);
    Choice c = choose(workers, s, from_key(mid));
    if (c.feasible) lo = mid, best = std::move(c); else hi = mid;
  }
  batch = build(workers, s, best);
}

}  // namespace lbb::detail
