// LBB's coordinator in the training loop (Alg. 2): after each iteration it reads every worker's
// measured compute time CT_i at its batch CB_i, computes the straggler effect SE (Eq. 4) and
//   SE < FT        -> leaves the batch sizes alone,
//   FT <= SE < RT  -> fine-tunes: `step` samples move from the slowest to the fastest worker,
//   SE >= RT       -> rapid-tunes: rough linear models a0 + a1 B through each worker's last
//                     measurement (Alg. 2 BUILD_ROUGHMODEL) replace the current ones and Eq. 3 is
//                     solved again,
// and for `window` iterations after a rapid tune only fine-tuning is allowed (Sec. 3.2.3, "the
// remedy": a rough model cannot balance at once and must not trigger rapid tunes back to back).
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

namespace lbb {

enum class TuneAction { None, Fine, Rapid };

// What one fine-tune does.
//   Fixed:   moves `step` samples from the slowest to the fastest worker (Alg. 2 lines 11-14 as
//            printed; the default).
//   Balance: keeps the rough models' per-sample times a1_i but moves each line through the
//            worker's last measurement, t_i(B) = CT_i + a1_i (B - CB_i), and solves Eq. 3 on those
//            (the slowest gives to every faster worker in proportion to how far behind it is);
//            when that moves nothing, `step` samples move as in Fixed. Our reading of Sec. 3.2.3's
//            "LBB also prioritizes fine-tuning for workers that are significantly slower than other
//            nodes", which Alg. 2 leaves out. The models are not rebuilt, so it is still a fine-tune
//            and allowed in the observation window. It matters when a disturbance adds a fixed
//            delay: the rapid tune's rough model keeps the profiled a0 (Alg. 2 line 3), reads the
//            delay as a slower per-sample rate and under-corrects, and moving one sample per
//            iteration then needs 7 to 14 iterations to close the rest of the gap.
enum class FineStep { Fixed, Balance };

struct TunerOptions {
  double fine_threshold = 0.05;  // FT, Alg. 2 line 8 ("default set to 0.05")
  double rapid_threshold = 0.3;  // RT, Alg. 2 line 10 ("default set to 0.3")
  int step = 1;                  // samples one fine-tune moves (Sec. 3.2.3: "usually 1")
  int window = 10;               // iterations after a rapid tune with fine-tuning only; the paper
                                 // gives no number, 10 lets a few fine-tunes land first
  FineStep fine_step = FineStep::Fixed;
};

// t(B) = a0 + a1 B (ms), LBB Eq. 1 second line. a1 is NaN while nothing is known about the worker
// (no profile and no measurement yet).
struct RoughModel {
  double a0 = 0.0;
  double a1 = std::numeric_limits<double>::quiet_NaN();
};

struct TuneResult {
  TuneAction action = TuneAction::None;
  std::vector<int> batch_sizes;  // for the next iteration; sums to the global batch
  double straggler_effect = 0;   // Eq. 4 over the workers with CB_i > 0
  bool in_window = false;        // inside the observation window, so no rapid tune was possible
  int slowest = -1;              // fine-tune: the worker that gave samples
  int fastest = -1;              // fine-tune: the worker that took them
  int moved = 0;                 // fine-tune: how many
};

class DynamicTuner {
 public:
  // `models` are the current linear models (from profiling, or a0 = 0 and a1 unknown); their a0
  // is the start-up time the rough models keep. Throws std::invalid_argument for sizes that
  // differ, global_batch <= 0, max batches summing to less than it, or bad options.
  DynamicTuner(TunerOptions options, std::vector<RoughModel> models, std::vector<int> max_batch, int global_batch);

  // One pass of Alg. 2 on the iteration that just ran: `batch_sizes` are CB_i (summing to the
  // global batch), `compute_ms` the CT_i measured with them.
  TuneResult tune(const std::vector<int>& batch_sizes, const std::vector<double>& compute_ms);

  const std::vector<RoughModel>& models() const { return models_; }
  int window_left() const { return window_left_; }
  const TunerOptions& options() const { return options_; }

 private:
  TuneResult fine_tune(TuneResult result, const std::vector<double>& compute_ms) const;
  TuneResult rapid_tune(TuneResult result, const std::vector<double>& compute_ms);
  double per_sample_ms(std::size_t worker, int batch, double compute_ms) const;
  std::vector<int> rebalance(const std::vector<int>& batch, const std::vector<double>& compute_ms) const;

  TunerOptions options_;
  std::vector<RoughModel> models_;
  std::vector<int> max_batch_;
  int global_batch_;
  int window_left_ = 0;
};

}  // namespace lbb
