// Levenberg-Marquardt least squares (Marquardt 1963, with his scaling of the damping by the
// diagonal of J^T J) on residuals computed by a callback, the Jacobian by forward differences: the
// surrogate's parameters are fitted to whole logged episodes replayed through the model, a
// residual per round, with no gradient to hand.
#pragma once

#include <functional>
#include <vector>

namespace experiments {

struct LeastSquaresOptions {
  int max_iterations = 100;
  double relative_tolerance = 1e-7;  // stop when an accepted step improves the sum of squares by less
  double difference_step = 1e-5;     // forward-difference step, relative to max(1, |theta_k|)
};

struct LeastSquaresResult {
  std::vector<double> parameters;
  double sum_of_squares = 0;
  int iterations = 0;
  int evaluations = 0;
};

using Residuals = std::function<std::vector<double>(const std::vector<double>& parameters)>;

// Minimizes sum_i r_i(theta)^2 from `start`. Residuals that are not finite count as a failed step
// (the damping grows); a start whose residuals are not finite throws std::invalid_argument.
LeastSquaresResult levenberg_marquardt(const Residuals& residuals, std::vector<double> start, const LeastSquaresOptions& options = {});

}  // namespace experiments
