// Fitting a worker's batch-time model (LBB Eq. 1) to measured (local batch, ms per step) points,
// choosing between the linear and the cubic form by a stated criterion.
//
// A line whose intercept comes out negative is refitted through the origin (a0 = 0).
// Criterion: the Bayesian information criterion, BIC = n ln(RSS / n) + k ln(n) with k = 2
// coefficients for the line and 4 for the cubic; the cubic is chosen only if its BIC is lower,
// it was fitted to at least 4 distinct batch sizes, and it neither decreases up to the worker's
// max_batch nor gives a batch of 1 a time <= 0 (the config's own checks on a time model). BIC
// charges the cubic's two extra coefficients ln(n) each, so measurement noise alone does not
// buy them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "env/sim/batch_time_model.hpp"

namespace experiments::calibration {

enum class TimeModelForm { Linear, Cubic };
const char* form_name(TimeModelForm form);

// One measured point: `steps` steps of `batch` samples took `ms` each on average. A mean over
// several steps varies less than one step, which the noise estimate takes into account.
struct MeasuredStep {
  double batch = 0;
  double ms = 0;
  int steps = 1;
};

// Too few distinct batch sizes to fit a slope, or a fit that makes no sense.
struct FitRequirements {
  std::size_t min_distinct_batches = 2;
  double min_batch_spread = 0.2;  // (largest - smallest) / largest over the distinct batches
};

struct TimeModelFit {
  TimeModelForm form = TimeModelForm::Linear;
  std::vector<double> coefficients;  // a0..a1 or a0..a3, ms
  std::size_t points = 0;
  std::vector<double> distinct_batches;  // sorted
  bool through_origin = false;  // the free line's intercept came out negative: a0 = 0, slope refitted
  // The free line's slope came out <= 0: the batch's effect is below the noise (a small model's step
  // is mostly its fixed cost). LBB Eq. 1's time does not fall with the batch, and the least-squares
  // line under that constraint is flat at the mean measured time: a0 = mean, a1 = 0.
  bool flat = false;
  double bic_linear = 0;
  double bic_cubic = 0;  // NaN when the cubic was not a candidate
  double rms_ms = 0;          // residuals of the chosen form
  double rms_relative = 0;    // RMS of (measured - fitted) / fitted
  // sigma of the log-normal step noise (the simulator's `noise`): the spread of ln(measured /
  // fitted), each point's squared residual weighted by its step count (a mean of k steps has 1/k
  // of one step's variance).
  double noise_sigma = 0;
};

// Throws common::DataError naming `who` when the points do not meet `need` (the message says
// which batch sizes were measured) or the line's slope comes out negative.
TimeModelFit fit_time_model(const std::vector<MeasuredStep>& points, int max_batch, const std::string& who,
                            const FitRequirements& need = {});

// True if the points meet `need`.
bool enough_batches(const std::vector<MeasuredStep>& points, const FitRequirements& need);

}  // namespace experiments::calibration
