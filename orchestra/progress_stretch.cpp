#include "orchestra/progress_stretch.hpp"

#include <cmath>
#include <utility>

namespace orchestra {

void ProgressStretch::add(double clock_ms, double loss) {
  ++rounds;
  fit(clock_ms, loss);
}

void ProgressStretch::anchor(double clock_ms, double loss) { fit(clock_ms, loss); }

void ProgressStretch::fit(double clock_ms, double loss) {
  if (!std::isfinite(clock_ms) || !std::isfinite(loss) || loss <= 0) return;
  if (points_ == 0) origin_ms_ = clock_ms;
  const double t = clock_ms - origin_ms_, y = std::log(loss);
  ++points_;
  sum_t_ += t;
  sum_y_ += y;
  sum_tt_ += t * t;
  sum_ty_ += t * y;
  last_t_ = clock_ms;
  last_loss_ = loss;
}

std::optional<double> ProgressStretch::rate_per_ms() const {
  if (points_ < 2) return std::nullopt;
  const auto n = static_cast<double>(points_);
  const double spread = n * sum_tt_ - sum_t_ * sum_t_;
  if (!(spread > 0)) return std::nullopt;
  return -(n * sum_ty_ - sum_t_ * sum_y_) / spread;
}

std::optional<double> ProgressStretch::log_loss_at(double clock_ms) const {
  const auto rate = rate_per_ms();
  if (!rate) return std::nullopt;
  const auto n = static_cast<double>(points_);
  // The least-squares line passes through the mean point.
  return sum_y_ / n - *rate * (clock_ms - origin_ms_ - sum_t_ / n);
}

std::optional<std::pair<double, double>> ProgressStretch::last_point() const {
  if (points_ == 0) return std::nullopt;
  return std::make_pair(last_t_, last_loss_);
}

}  // namespace orchestra
