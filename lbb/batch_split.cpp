#include "lbb/batch_split.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>

namespace lbb {

std::vector<int> proportional_split(const std::vector<double>& weights, int global_batch,
                                    const std::vector<int>& max_batch) {
  const std::size_t n = weights.size();
  if (max_batch.size() != n)
    throw std::invalid_argument("proportional_split: " + std::to_string(n) + " weights but " +
                                std::to_string(max_batch.size()) + " max batches");
  if (global_batch <= 0)
    throw std::invalid_argument("proportional_split: the global batch must be positive, got " +
                                std::to_string(global_batch));
  std::int64_t capacity = 0;
  std::vector<char> open(n, 0);  // still taking a proportional share
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(weights[i]) || weights[i] < 0)
      throw std::invalid_argument("proportional_split: weight " + std::to_string(i) + " must be finite and >= 0");
    if (weights[i] > 0 && max_batch[i] > 0) open[i] = 1, capacity += max_batch[i];
  }
  if (capacity < global_batch)
    throw std::invalid_argument("proportional_split: the workers with a positive weight hold " +
                                std::to_string(capacity) + " samples, less than the global batch " +
                                std::to_string(global_batch));

  // Water-filling: cap whoever the proportional share would overflow, share the rest again.
  std::vector<double> share(n, 0.0);
  double left = global_batch;
  for (bool capped = true; capped;) {
    capped = false;
    double total = 0.0;
    for (std::size_t i = 0; i < n; ++i) if (open[i]) total += weights[i];
    for (std::size_t i = 0; i < n; ++i) {
      if (!open[i] || weights[i] / total * left < max_batch[i]) continue;
      share[i] = max_batch[i], left -= max_batch[i], open[i] = 0, capped = true;
    }
    if (!capped)
      for (std::size_t i = 0; i < n; ++i) if (open[i]) share[i] = weights[i] / total * left;
  }

  // Largest remainder; the loop also absorbs rounding error in the shares.
  std::vector<int> batch(n, 0);
  std::int64_t assigned = 0;
  for (std::size_t i = 0; i < n; ++i) {
    batch[i] = std::min(max_batch[i], static_cast<int>(std::floor(share[i] + 1e-9)));
    assigned += batch[i];
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return share[a] - batch[a] > share[b] - batch[b];
  });
  while (assigned < global_batch)
    for (std::size_t i : order)
      if (assigned < global_batch && weights[i] > 0 && batch[i] < max_batch[i]) ++batch[i], ++assigned;
  while (assigned > global_batch)
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      if (assigned > global_batch && batch[*it] > 0) --batch[*it], --assigned;
  return batch;
}

std::vector<int> equal_split(int global_batch, const std::vector<int>& max_batch) {
  return proportional_split(std::vector<double>(max_batch.size(), 1.0), global_batch, max_batch);
}

}  // namespace lbb
