#include "experiments/calibration/time_model_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "common/errors.hpp"

namespace experiments::calibration {
namespace {

std::vector<double> distinct_of(const std::vector<MeasuredStep>& points) {
  std::vector<double> d;
  for (const auto& p : points) d.push_back(p.batch);
  std::sort(d.begin(), d.end());
  d.erase(std::unique(d.begin(), d.end()), d.end());
  return d;
}

double rss_of(const env::BatchTimeModel& m, const std::vector<MeasuredStep>& points) {
  double rss = 0;
  for (const auto& p : points) {
    const double r = p.ms - m.polynomial(p.batch);
    rss += r * r;
  }
  return rss;
}

double bic(double rss, std::size_t n, int k) {
  const double nn = static_cast<double>(n);
  // A perfect fit has RSS 0: floor it so ln stays finite (and the simpler model wins ties).
  return nn * std::log(std::max(rss / nn, 1e-300)) + k * std::log(nn);
}

std::vector<env::BatchTimePoint> as_points(const std::vector<MeasuredStep>& points) {
  std::vector<env::BatchTimePoint> out;
  for (const auto& p : points) out.push_back({p.batch, p.ms});
  return out;
}

}  // namespace

const char* form_name(TimeModelForm form) { return form == TimeModelForm::Cubic ? "cubic" : "linear"; }

bool enough_batches(const std::vector<MeasuredStep>& points, const FitRequirements& need) {
  const auto d = distinct_of(points);
  return d.size() >= need.min_distinct_batches && d.size() >= 2 && (d.back() - d.front()) >= need.min_batch_spread * d.back();
}

TimeModelFit fit_time_model(const std::vector<MeasuredStep>& points, int max_batch, const std::string& who, const FitRequirements& need) {
  for (const auto& p : points)
    if (!(p.batch > 0) || !std::isfinite(p.ms) || p.ms < 0 || p.steps < 1)
      throw common::DataError(who + ": a measured step needs batch > 0, steps >= 1 and a time >= 0");
  TimeModelFit fit;
  fit.points = points.size();
  fit.distinct_batches = distinct_of(points);
  if (!enough_batches(points, need)) {
    std::ostringstream batches;
    for (std::size_t i = 0; i < fit.distinct_batches.size() && i < 8; ++i) batches << (i ? ", " : "") << fit.distinct_batches[i];
    if (fit.distinct_batches.size() > 8) batches << ", ...";
    throw common::DataError(who + ": measured " + std::to_string(points.size()) + " steps of batch sizes {" + batches.str() +
                            "}: too few to fit the slope of LBB Eq. 1 (need " + std::to_string(need.min_distinct_batches) +
                            " distinct sizes spanning at least " + std::to_string(static_cast<int>(need.min_batch_spread * 100)) +
                            "% of the largest)");
  }
  const auto pts = as_points(points);
  env::BatchTimeModel line = env::BatchTimeModel::fit(pts, 1);
  if (line.coefficients().size() == 2 && line.coefficients()[1] <= 0) {
    // The time cannot fall with the batch: the least-squares line with slope >= 0 is then flat at
    // the mean (configs/real_quick.yaml's MLP: 0.2 ms a step at batch 32 and at 64, warm-up aside).
    double sum = 0;
    for (const auto& p : points) sum += p.ms;
    line = env::BatchTimeModel({sum / static_cast<double>(points.size()), 0.0}, line.valid_up_to());
    fit.flat = true;
  }
  // A negative intercept (few points at small batches, noise) would give small batches no time:
  // the line through the origin instead, least squares in its slope alone.
  if (line.coefficients().size() == 2 && line.coefficients()[0] < 0) {
    double sbt = 0, sbb = 0;
    for (const auto& p : points) sbt += p.batch * p.ms, sbb += p.batch * p.batch;
    line = env::BatchTimeModel({0.0, sbt / sbb}, line.valid_up_to());
    fit.through_origin = true;
  }
  if (line.coefficients().size() < 2 || !(line.polynomial(1) > 0))
    throw common::DataError(who + ": every measured step took 0 ms: no time model to fit");
  const std::size_t n = points.size();
  fit.bic_linear = bic(rss_of(line, points), n, 2);
  fit.bic_cubic = std::numeric_limits<double>::quiet_NaN();
  env::BatchTimeModel chosen = line;
  if (fit.distinct_batches.size() >= 4 && n > 4) {
    const env::BatchTimeModel cubic = env::BatchTimeModel::fit(pts, 3);
    fit.bic_cubic = bic(rss_of(cubic, points), n, 4);
    const bool sane = cubic.coefficients().size() == 4 && cubic.first_decrease(max_batch) == 0 && cubic.polynomial(1) > 0;
    if (sane && fit.bic_cubic < fit.bic_linear) {
      chosen = cubic;
      fit.form = TimeModelForm::Cubic;
    }
  }
  fit.coefficients = chosen.coefficients();
  double rss = 0, rel = 0, log_var = 0, weight = 0;
  std::size_t rel_n = 0;
  for (const auto& p : points) {
    const double f = chosen.polynomial(p.batch);
    rss += (p.ms - f) * (p.ms - f);
    if (f > 0 && p.ms > 0) {
      rel += (p.ms - f) * (p.ms - f) / (f * f);
      ++rel_n;
      const double l = std::log(p.ms / f);
      log_var += p.steps * l * l;
      weight += 1;
    }
  }
  fit.rms_ms = std::sqrt(rss / static_cast<double>(n));
  fit.rms_relative = rel_n ? std::sqrt(rel / static_cast<double>(rel_n)) : 0.0;
  fit.noise_sigma = weight > 0 ? std::min(2.0, std::sqrt(log_var / weight)) : 0.0;
  return fit;
}

}  // namespace experiments::calibration
