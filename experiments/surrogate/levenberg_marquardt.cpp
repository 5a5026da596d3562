#include "experiments/surrogate/levenberg_marquardt.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace experiments {
namespace {

double sum_of_squares(const std::vector<double>& r) {
  double s = 0;
  for (double x : r) s += x * x;
  return std::isfinite(s) ? s : INFINITY;
}

// Solves A x = b for a symmetric positive definite A (Cholesky); false if A is not.
bool solve_spd(std::vector<double> a, std::vector<double> b, std::size_t n, std::vector<double>& x) {
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0)) return false;
    a[j * n + j] = std::sqrt(d);
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (std::size_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / a[j * n + j];
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < i; ++k) b[i] -= a[i * n + k] * b[k];
    b[i] /= a[i * n + i];
  }
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t k = i + 1; k < n; ++k) b[i] -= a[k * n + i] * b[k];
    b[i] /= a[i * n + i];
  }
  x = b;
  return true;
}

}  // namespace

LeastSquaresResult levenberg_marquardt(const Residuals& residuals, std::vector<double> theta, const LeastSquaresOptions& options) {
  LeastSquaresResult result;
  const std::size_t n = theta.size();
  std::vector<double> r = residuals(theta);
  ++result.evaluations;
  double cost = sum_of_squares(r);
  if (!std::isfinite(cost)) throw std::invalid_argument("levenberg_marquardt: the residuals at the start are not finite");
  const std::size_t m = r.size();
  double lambda = 1e-3;
  for (int iteration = 0; iteration < options.max_iterations; ++iteration) {
    result.iterations = iteration + 1;
    // J by forward differences, column by column.
    std::vector<double> jacobian(m * n);
    for (std::size_t k = 0; k < n; ++k) {
      std::vector<double> moved = theta;
      const double h = options.difference_step * std::max(1.0, std::fabs(theta[k]));
      moved[k] += h;
      const std::vector<double> rk = residuals(moved);
      ++result.evaluations;
      for (std::size_t i = 0; i < m; ++i) jacobian[i * n + k] = std::isfinite(rk[i]) ? (rk[i] - r[i]) / h : 0.0;
    }
    std::vector<double> jtj(n * n, 0.0), jtr(n, 0.0);
    for (std::size_t i = 0; i < m; ++i) {
      const double* row = &jacobian[i * n];
      for (std::size_t a = 0; a < n; ++a) {
        jtr[a] += row[a] * r[i];
        for (std::size_t b = 0; b <= a; ++b) jtj[a * n + b] += row[a] * row[b];
      }
    }
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < a; ++b) jtj[b * n + a] = jtj[a * n + b];
    bool accepted = false;
    for (int attempt = 0; attempt < 12 && !accepted; ++attempt) {
      std::vector<double> damped = jtj, step;
      for (std::size_t a = 0; a < n; ++a) damped[a * n + a] += lambda * std::max(jtj[a * n + a], 1e-12);
      std::vector<double> minus_jtr(n);
      for (std::size_t a = 0; a < n; ++a) minus_jtr[a] = -jtr[a];
      if (solve_spd(damped, minus_jtr, n, step)) {
        std::vector<double> next = theta;
        for (std::size_t a = 0; a < n; ++a) next[a] += step[a];
        std::vector<double> rn = residuals(next);
        ++result.evaluations;
        const double next_cost = sum_of_squares(rn);
        if (next_cost < cost) {
          const double improvement = (cost - next_cost) / std::max(cost, 1e-300);
          theta = next;
          r = std::move(rn);
          cost = next_cost;
          lambda = std::max(lambda / 3, 1e-9);
          accepted = true;
          if (improvement < options.relative_tolerance) {
            result.parameters = theta;
            result.sum_of_squares = cost;
            return result;
          }
          break;
        }
      }
      lambda *= 4;
    }
    if (!accepted) break;  // no step improves: a (local) minimum
  }
  result.parameters = theta;
  result.sum_of_squares = cost;
  return result;
}

}  // namespace experiments
