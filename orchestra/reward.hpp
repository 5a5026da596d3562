// The Barrier Controller's reward (Orchestra Sec. 3.1.3, Eq. 1), paid after each epoch:
//   p = (delta acc / time) * sqrt(trainstep),   ratio = p / p*,   reward = +1 / -1 / 0
// for ratio > 1 / < 1 / = 1, with p* the best p so far.
//
// Readings (the paper leaves them open):
// - delta acc: test accuracy at the end of this epoch minus that at the end of the previous one
//   (for the first epoch: minus the accuracy the tracker was reset with, e.g. the untrained model's).
// - time: the epoch's duration in seconds (EpochReport::epoch_ms / 1000). The unit only scales p.
// - trainstep: local SGD steps taken by all workers since training began, counted at the end of the
//   epoch. The factor is there "to balance the non-linear change of accuracy": later epochs gain
//   less, and sqrt(progress) compensates. Local steps measure progress independently of the action:
//   an epoch has about the same number of steps whatever T is, while the global sync index (rounds)
//   falls as T grows, so weighting by rounds would punish a larger T for the same learning.
// - first epoch: p* does not exist; the reward is 0 (no information) and p becomes p*.
// - p* <= 0 (every epoch so far lost accuracy): p / p* flips or is undefined, so the reward compares
//   p with p* directly, +1 when p > p*. For p* > 0 this is the paper's rule exactly (ratio > 1 iff
//   p > p*); comparing directly also keeps rounding in the division from turning a tie into +-1.
// - p <= 0 (accuracy fell or stayed): it is simply a small p; against a positive p* it gives -1.
// - p* = max of all p seen, updated after the comparison.
// - Which p count as "the historical record" (RecordScope):
//   Episode (the default): every earlier epoch of this episode. In a short episode that starts from
//     an untrained model the first epoch's p (accuracy from ~0.1 to ~0.75) is never matched again,
//     so every later epoch pays -1 whatever the action: an A3C agent trained on it learned nothing
//     (configs/a3c_train.yaml's setup, 400 updates: mean episode reward stuck near -4 over 4-5
//     epoch episodes, time to target not falling).
//   History: the same epoch of every earlier episode of this tracker, i.e. p* is the best increment
//     rate ever seen at this point of training; reset() starts a new episode and keeps the record.
//     An epoch pays +1 when it beats every earlier episode at that stage. Once a few lucky episodes
//     hold the records almost everything pays -1 again (same setup: reward near -5, no learning),
//     which is why configs/a3c_train.yaml trains on the epoch-time reward instead.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "env/round_plan.hpp"

namespace orchestra {

// p of Eq. 1. Throws std::invalid_argument for a non-finite accuracy change (e.g. NaN accuracy in
// timing-only mode, where the reward is undefined), epoch_ms <= 0, or trainstep < 0.
double increment_rate(double delta_accuracy, double epoch_ms, double trainstep);

struct RewardResult {
  double p = 0;            // increment rate of this epoch
  double best_before = 0;  // p* before this epoch; NaN on the first epoch
  double ratio = 0;        // p / p* when p* > 0, NaN otherwise (reported, not used for the sign)
  int reward = 0;          // Eq. 1: +1, -1 or 0
  bool first = false;      // no p* yet, reward 0
};

enum class RecordScope { Episode, History };

class RewardTracker {
 public:
  explicit RewardTracker(double initial_accuracy = 0.0, RecordScope scope = RecordScope::Episode)
      : scope_(scope) {
    reset(initial_accuracy);
  }

  // New episode: forget the step count and start from this accuracy; Episode scope forgets p* too,
  // History scope keeps its per-epoch record.
  void reset(double initial_accuracy = 0.0);

  // One finished epoch, trainstep given by the caller (cumulative, see the header).
  RewardResult observe(double accuracy, double epoch_ms, double trainstep);
  // One finished epoch from its report: trainstep = the running sum of worker_steps.
  RewardResult observe(const env::EpochReport& report);

  std::optional<double> best() const;                  // p* for the next epoch
  double accuracy() const { return accuracy_; }         // the last accuracy seen
  std::int64_t trainsteps() const { return trainsteps_; }
  RecordScope scope() const { return scope_; }

 private:
  RecordScope scope_ = RecordScope::Episode;
  double accuracy_ = 0;
  std::int64_t trainsteps_ = 0;
  std::size_t epoch_ = 0;                      // epochs observed in this episode
  std::optional<double> best_;                 // Episode scope
  std::vector<double> best_by_epoch_;          // History scope: p* of epoch k at [k]
};

}  // namespace orchestra
