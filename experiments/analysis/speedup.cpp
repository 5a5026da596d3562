#include "experiments/analysis/speedup.hpp"

namespace experiments {

std::optional<double> speedup_over(const SpeedupBasis& reference, const SpeedupBasis& run) {
  if (reference.timing_only != run.timing_only) return std::nullopt;
  if (run.timing_only) {
    if (reference.epochs <= 0 || run.epochs <= 0 || reference.epochs_time_s <= 0 || run.epochs_time_s <= 0) return std::nullopt;
    const double reference_per_epoch = reference.epochs_time_s / static_cast<double>(reference.epochs);
    const double run_per_epoch = run.epochs_time_s / static_cast<double>(run.epochs);
    return reference_per_epoch / run_per_epoch;
  }
  if (!reference.time_to_target_s || !run.time_to_target_s || *run.time_to_target_s <= 0) return std::nullopt;
  return *reference.time_to_target_s / *run.time_to_target_s;
}

std::size_t speedup_reference_index(const std::vector<std::string>& kinds) {
  for (std::size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i] == "dsgd") return i;
  return 0;
}

}  // namespace experiments
