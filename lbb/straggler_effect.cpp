#include "lbb/straggler_effect.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace lbb {

double straggler_effect(const std::vector<double>& compute_ms) {
  if (compute_ms.size() < 2) return 0.0;
  const auto [lo, hi] = std::minmax_element(compute_ms.begin(), compute_ms.end());
  double sum = 0.0;
  for (double t : compute_ms) sum += t;
  const double mean = sum / static_cast<double>(compute_ms.size());
  return mean > 0.0 ? (*hi - *lo) / mean : 0.0;
}

double straggler_effect(const std::vector<double>& compute_ms, const std::vector<int>& batch_sizes) {
  if (compute_ms.size() != batch_sizes.size())
    throw std::invalid_argument("straggler_effect: " + std::to_string(compute_ms.size()) + " times but " +
                                std::to_string(batch_sizes.size()) + " batch sizes");
  std::vector<double> taking_part;
  for (std::size_t i = 0; i < compute_ms.size(); ++i)
    if (batch_sizes[i] > 0) taking_part.push_back(compute_ms[i]);
  return straggler_effect(taking_part);
}

}  // namespace lbb
