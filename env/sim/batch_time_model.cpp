#include "env/sim/batch_time_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <sstream>
#include <string>

#include "common/limits.hpp"

namespace env {
namespace {

// Envelopes are tabulated on integer batches up to this size; above it (up to valid_up_to) the
// running maximum is continued in closed form (max_between), so a model valid to 2^24 stays monotone.
constexpr double kMaxTabulatedBatch = 1 << 20;

// Solves the (d+1)x(d+1) normal equations by Gaussian elimination with partial pivoting.
std::vector<double> solve_dense(std::vector<std::vector<double>> a, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < n; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    if (std::abs(a[pivot][col]) < 1e-300) throw std::invalid_argument("singular fit: too few distinct batch sizes");
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (std::size_t r = col + 1; r < n; ++r) {
      const double f = a[r][col] / a[col][col];
      for (std::size_t c = col; c < n; ++c) a[r][c] -= f * a[col][c];
      b[r] -= f * b[col];
    }
  }
  std::vector<double> x(n);
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t c = i + 1; c < n; ++c) s -= a[i][c] * x[c];
    x[i] = s / a[i][i];
  }
  return x;
}

}  // namespace

BatchTimeModel::BatchTimeModel(std::vector<double> coefficients, double valid_up_to)
    : coefficients_(std::move(coefficients)), valid_up_to_(valid_up_to) {
  if (coefficients_.empty() || coefficients_.size() > 4)
    throw std::invalid_argument("a batch-time model needs 1 to 4 coefficients (a0..a3), got " +
                                std::to_string(coefficients_.size()));
  build_envelope();
}

BatchTimeModel BatchTimeModel::fit(const std::vector<BatchTimePoint>& points, int degree) {
  if (degree < 1 || degree > 3) throw std::invalid_argument("fit degree must be 1, 2 or 3");
  std::vector<double> distinct;
  for (const auto& p : points) {
    if (!(p.batch > 0) || !std::isfinite(p.ms) || p.ms < 0)
      throw std::invalid_argument("profiled points need batch > 0 and a finite time >= 0");
    distinct.push_back(p.batch);
  }
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  // With fewer distinct batches than coefficients the fit is underdetermined: lower the degree.
  degree = std::min<int>(degree, static_cast<int>(distinct.size()) - 1);
  if (degree < 0) throw std::invalid_argument("cannot fit a batch-time model to no points");
  if (degree == 0) {  // one batch size: the least-squares constant is the mean, not the first point
    double sum = 0.0;
    for (const auto& p : points) sum += p.ms;
    return BatchTimeModel({sum / static_cast<double>(points.size())}, distinct.back());
  }

  // Scale batch sizes to [0,1] so the normal equations stay well conditioned for B up to 1e5.
  const double scale = distinct.back();
  const std::size_t k = static_cast<std::size_t>(degree) + 1;
  std::vector<std::vector<double>> ata(k, std::vector<double>(k, 0.0));
  std::vector<double> atb(k, 0.0);
  for (const auto& p : points) {
    std::vector<double> powers(k, 1.0);
    for (std::size_t j = 1; j < k; ++j) powers[j] = powers[j - 1] * (p.batch / scale);
    for (std::size_t r = 0; r < k; ++r) {
      atb[r] += powers[r] * p.ms;
      for (std::size_t c = 0; c < k; ++c) ata[r][c] += powers[r] * powers[c];
    }
  }
  std::vector<double> scaled = solve_dense(ata, atb);
  for (std::size_t j = 1; j < k; ++j) scaled[j] /= std::pow(scale, static_cast<double>(j));
  return BatchTimeModel(scaled, distinct.back());
}

double BatchTimeModel::polynomial(double batch) const {
  double value = 0.0;
  for (std::size_t i = coefficients_.size(); i-- > 0;) value = value * batch + coefficients_[i];
  return value;
}

double BatchTimeModel::max_between(double lo, double hi) const {
  // A cubic's maximum on [lo, hi] is at an end or where its derivative a1 + 2 a2 B + 3 a3 B^2 is 0.
  double best = std::max(polynomial(lo), polynomial(hi));
  auto consider = [&](double b) {
    if (b > lo && b < hi) best = std::max(best, polynomial(b));
  };
  const double a1 = coefficients_.size() > 1 ? coefficients_[1] : 0.0;
  const double a2 = coefficients_.size() > 2 ? 2.0 * coefficients_[2] : 0.0;
  const double a3 = coefficients_.size() > 3 ? 3.0 * coefficients_[3] : 0.0;
  if (a3 == 0.0) {
    if (a2 != 0.0) consider(-a1 / a2);
  } else if (const double disc = a2 * a2 - 4.0 * a3 * a1; disc >= 0) {
    const double root = std::sqrt(disc);
    consider((-a2 - root) / (2.0 * a3));
    consider((-a2 + root) / (2.0 * a3));
  }
  return best;
}

double BatchTimeModel::envelope_at(double batch) const {
  if (batch > table_top_) {
    const double at_top = envelope_.empty() ? polynomial(table_top_) : envelope_.back();
    return std::max(at_top, max_between(table_top_, batch));
  }
  if (envelope_.empty()) return polynomial(batch);
  const std::size_t lo = static_cast<std::size_t>(std::floor(batch));
  const std::size_t hi = std::min(lo + 1, envelope_.size() - 1);
  const double frac = batch - static_cast<double>(lo);
  return envelope_[lo] + frac * (envelope_[hi] - envelope_[lo]);
}

int BatchTimeModel::first_decrease(int up_to) const {
  double previous = polynomial(1);
  for (int b = 2; b <= up_to; ++b) {
    const double current = polynomial(b);
    if (current < previous - 1e-12) return b;
    previous = current;
  }
  return 0;
}

void BatchTimeModel::build_envelope() {
  envelope_.clear();
  tail_slope_ = 0.0;
  table_top_ = std::numeric_limits<double>::infinity();
  if (valid_up_to_ <= 0) return;
  const int top = static_cast<int>(std::min(std::floor(valid_up_to_), kMaxTabulatedBatch));
  table_top_ = std::max(0, top);
  if (top >= 1 && first_decrease(top) != 0) {
    envelope_.assign(static_cast<std::size_t>(top) + 1, 0.0);
    double running = polynomial(1);
    envelope_[0] = std::min(polynomial(0), running);
    for (int b = 1; b <= top; ++b) {
      running = std::max(running, polynomial(b));
      envelope_[static_cast<std::size_t>(b)] = running;
    }
  }
  // Past the valid range, continue with the secant slope of the last half of the range.
  const double hi = valid_up_to_;
  const double lo = hi / 2.0;
  if (hi > lo) tail_slope_ = std::max(0.0, (envelope_at(hi) - envelope_at(lo)) / (hi - lo));
}

double BatchTimeModel::eval(double batch) const {
  if (batch <= 0) return 0.0;
  if (valid_up_to_ > 0 && batch > valid_up_to_) return eval(valid_up_to_) + tail_slope_ * (batch - valid_up_to_);
  return envelope_at(batch);
}

std::string step_time_limit_problem(double ms, int max_batch) {
  if (!common::range_problem(ms, common::kStepMs)) return "";
  std::ostringstream text;
  text << "a step of max_batch (" << max_batch << ") would take " << ms << " ms; a step takes at most " << common::kStepMs.max
       << " ms (2.8 hours)";
  return text.str();
}

std::string given_model_problem(const BatchTimeModel& model, int max_batch) {
  const auto& c = model.coefficients();
  for (std::size_t k = 0; k < c.size(); ++k) {
    if (common::range_problem(c[k], {-common::kStepMs.max, common::kStepMs.max})) {
      std::ostringstream text;
      text << "coefficient a" << k << " = " << c[k] << " is outside [" << -common::kStepMs.max << ", " << common::kStepMs.max << "] ms";
      return text.str();
    }
  }
  if (max_batch < 1 || max_batch > common::kMaxBatch)
    return "max_batch " + std::to_string(max_batch) + " is outside [1, " + std::to_string(common::kMaxBatch) + "]";
  if (const int b = model.first_decrease(max_batch))
    return "the batch time decreases at batch " + std::to_string(b) + " (it must not decrease up to max_batch)";
  if (!(model.polynomial(1) > 0)) return "the time of a batch of 1 must be positive";
  return step_time_limit_problem(model.polynomial(max_batch), max_batch);
}

}  // namespace env
