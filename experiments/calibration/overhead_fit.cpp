#include "experiments/calibration/overhead_fit.hpp"

#include <algorithm>
#include <cmath>

#include "common/errors.hpp"

namespace experiments::calibration {

OverheadFit fit_overhead(const std::vector<MeasuredRound>& rounds) {
  std::vector<double> x, y, gaps;
  for (const auto& r : rounds) {
    if (!std::isfinite(r.round_ms) || !std::isfinite(r.comm_ms) || !std::isfinite(r.slowest_compute_ms)) continue;
    x.push_back(r.slowest_steps);
    y.push_back(r.round_ms - r.comm_ms - r.slowest_compute_ms);
    if (r.gap_before_ms >= 0 && std::isfinite(r.gap_before_ms)) gaps.push_back(r.gap_before_ms);
  }
  if (x.empty()) throw common::DataError("no round of the real run has round_ms, comm_ms and compute_ms to fit the round overhead to");
  OverheadFit fit;
  fit.rounds = x.size();
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += x[i] / n, my += y[i] / n;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
  double slope = sxx > 0 ? sxy / sxx : 0.0;
  double intercept = my - slope * mx;
  // Costs are not negative: a falling line keeps the mean as a fixed cost, a line through a
  // negative intercept is refitted through the origin.
  if (slope < 0) {
    slope = 0;
    intercept = std::max(0.0, my);
  } else if (intercept < 0) {
    double s0xx = 0, s0xy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) s0xx += x[i] * x[i], s0xy += x[i] * y[i];
    slope = s0xx > 0 ? std::max(0.0, s0xy / s0xx) : 0.0;
    intercept = 0;
  }
  double rss = 0;
  for (std::size_t i = 0; i < x.size(); ++i) rss += (y[i] - intercept - slope * x[i]) * (y[i] - intercept - slope * x[i]);
  fit.rms_ms = std::sqrt(rss / n);
  if (!gaps.empty()) {
    std::sort(gaps.begin(), gaps.end());
    const std::size_t m = gaps.size() / 2;
    fit.median_gap_ms = gaps.size() % 2 ? gaps[m] : 0.5 * (gaps[m - 1] + gaps[m]);
  }
  fit.round_fixed_ms = intercept;
  fit.overhead.fixed_ms = intercept + fit.median_gap_ms;
  fit.overhead.per_step_ms = slope;
  return fit;
}

}  // namespace experiments::calibration
