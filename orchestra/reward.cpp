#include "orchestra/reward.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace orchestra {

double increment_rate(double delta_accuracy, double epoch_ms, double trainstep) {
  if (!std::isfinite(delta_accuracy))
    throw std::invalid_argument("reward: accuracy change must be finite, got " + std::to_string(delta_accuracy) +
                                " (the Eq. 1 reward needs test accuracy; timing-only runs have none)");
  if (!std::isfinite(epoch_ms) || epoch_ms <= 0)
    throw std::invalid_argument("reward: epoch time must be positive ms, got " + std::to_string(epoch_ms));
  if (!std::isfinite(trainstep) || trainstep < 0)
    throw std::invalid_argument("reward: trainstep must be >= 0, got " + std::to_string(trainstep));
  // Eq. 1: p = (delta acc / time) * sqrt(trainstep), time in seconds.
  return delta_accuracy / (epoch_ms / 1000.0) * std::sqrt(trainstep);
}

void RewardTracker::reset(double initial_accuracy) {
  accuracy_ = initial_accuracy;
  trainsteps_ = 0;
  epoch_ = 0;
  best_.reset();
}

std::optional<double> RewardTracker::best() const {
  if (scope_ == RecordScope::Episode) return best_;
  if (epoch_ < best_by_epoch_.size()) return best_by_epoch_[epoch_];
  return std::nullopt;
}

RewardResult RewardTracker::observe(double accuracy, double epoch_ms, double trainstep) {
  RewardResult result;
  result.p = increment_rate(accuracy - accuracy_, epoch_ms, trainstep);
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const std::optional<double> record = best();
  if (!record) {
    result.first = true;
    result.best_before = kNaN;
    result.ratio = kNaN;
    result.reward = 0;
  } else {
    result.best_before = *record;
    result.ratio = *record > 0 ? result.p / *record : kNaN;
    result.reward = result.p > *record ? 1 : (result.p < *record ? -1 : 0);
  }
  const double updated = record ? std::max(*record, result.p) : result.p;
  if (scope_ == RecordScope::Episode) {
    best_ = updated;
  } else if (epoch_ < best_by_epoch_.size()) {
    best_by_epoch_[epoch_] = updated;
  } else {
    best_by_epoch_.push_back(updated);
  }
  ++epoch_;
  accuracy_ = accuracy;
  return result;
}

RewardResult RewardTracker::observe(const env::EpochReport& report) {
  std::int64_t steps = trainsteps_;
  for (std::int64_t s : report.worker_steps) steps += s;
  // Validate before changing any state, so a rejected epoch leaves the tracker as it was.
  RewardResult result = observe(report.accuracy, report.epoch_ms, static_cast<double>(steps));
  trainsteps_ = steps;
  return result;
}

}  // namespace orchestra
