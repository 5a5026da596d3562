// A worker's performance model: compute time of one training step as a function of its local
// batch size (LBB Eq. 1): t(B) = a0 + a1 B + a2 B^2 + a3 B^3 in ms, or a0 + a1 B (online model).
#pragma once

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace env {

struct BatchTimePoint {
  double batch = 0;
  double ms = 0;
};

class BatchTimeModel {
 public:
  BatchTimeModel() = default;
  // Coefficients a0..ad (d <= 3) in ms. `valid_up_to` is the largest batch the model is meant for:
  // a fitted cubic can turn down past its last point, so beyond it the model is continued linearly
  // with the secant slope of its last stretch (never decreasing), see eval().
  explicit BatchTimeModel(std::vector<double> coefficients, double valid_up_to = 0);

  // Least-squares fit of a polynomial of `degree` (1..3) to profiled points (LBB Alg. 1 line 25).
  // The fit is valid up to the largest profiled batch.
  static BatchTimeModel fit(const std::vector<BatchTimePoint>& points, int degree = 3);

  // Time of one step of `batch` samples, in ms; 0 for batch <= 0 (a worker taken out does no work).
  // Monotone: between 0 and valid_up_to the value is the running maximum of the polynomial
  // (precomputed on integer batches up to 2^20, in closed form above), beyond it linear with the
  // last stretch's slope.
  double eval(double batch) const;

  const std::vector<double>& coefficients() const { return coefficients_; }
  double valid_up_to() const { return valid_up_to_; }
  double polynomial(double batch) const;  // the raw polynomial, no monotone envelope

  // The first integer batch in [1, up_to] at which the raw polynomial decreases, or 0 if none.
  int first_decrease(int up_to) const;

 private:
  void build_envelope();
  // The monotone envelope at a batch in [0, valid_up_to] (the polynomial itself when it never falls).
  double envelope_at(double batch) const;
  // The largest value of the polynomial on the real interval [lo, hi].
  double max_between(double lo, double hi) const;

  std::vector<double> coefficients_;
  double valid_up_to_ = 0;
  std::vector<double> envelope_;  // envelope_[b] = max_{1<=k<=b} polynomial(k), b <= valid_up_to_
  double tail_slope_ = 0;         // ms per sample past valid_up_to_
  // Batches up to here are read from envelope_ (or the polynomial when it never falls there); above
  // it, up to valid_up_to_, the running maximum is continued with max_between().
  double table_top_ = std::numeric_limits<double>::infinity();
};

// Why a model given by its coefficients cannot be a worker's step time up to max_batch, or "" if it
// can: each coefficient and the step of max_batch within common::kStepMs, positive at a batch of 1,
// never falling up to max_batch (a falling time would make the min-max split, LBB Eq. 3, favour
// larger batches). The config reader and `orchestra balance` share it, so both accept the same models.
std::string given_model_problem(const BatchTimeModel& model, int max_batch);

// The message for a step of max_batch predicted at `ms`, beyond common::kStepMs, or "" if within.
std::string step_time_limit_problem(double ms, int max_batch);

}  // namespace env
