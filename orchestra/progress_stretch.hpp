// How fast the training loss falls at one barrier T: the rounds run since T last changed (a
// "stretch"), for the state entries that compare the current T with the one before it
// (rl_state.hpp, StateFeatures::Progress and Lead; issue 41 item 4: a state that can tell whether
// a longer barrier pays).
//
// The rate is the least-squares slope of ln(loss) against the run's clock over the stretch's
// rounds, anchored at the previous stretch's last round, so a stretch of one round already has a
// rate (from two points) and a long one averages its rounds' noise: one round's loss alone was too
// noisy to compare moves by (docs/controller.md, attempts table row 17, which compared single rounds).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

namespace orchestra {

struct ProgressStretch {
  double barrier_ms = 0;   // the T of every round in the stretch
  std::int64_t rounds = 0;  // rounds run at it

  // One round's end on the run's clock (ms since the start) and its mean training loss; a loss
  // that is not finite and positive (timing-only runs report NaN) is counted as a round but not fitted.
  void add(double clock_ms, double loss);
  // The point the fit starts from (the previous stretch's last fitted round), not counted as a round.
  void anchor(double clock_ms, double loss);
  // -d ln(loss) / dt in 1/ms (positive while the loss falls); nullopt with fewer than two fitted
  // points or no spread in time.
  std::optional<double> rate_per_ms() const;
  // ln(loss) the fitted line gives at `clock_ms` (the trend extrapolated); nullopt as rate_per_ms.
  std::optional<double> log_loss_at(double clock_ms) const;
  // The latest fitted point (clock, loss), for the next stretch's anchor.
  std::optional<std::pair<double, double>> last_point() const;

 private:
  void fit(double clock_ms, double loss);
  std::int64_t points_ = 0;
  double sum_t_ = 0, sum_y_ = 0, sum_tt_ = 0, sum_ty_ = 0;
  double origin_ms_ = 0;  // times are taken from the first point, so sums stay well conditioned
  double last_t_ = 0, last_loss_ = 0;
};

}  // namespace orchestra
