#include "lbb/dynamic_tuner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "lbb/min_max_solver.hpp"
#include "lbb/straggler_effect.hpp"

namespace lbb {

DynamicTuner::DynamicTuner(TunerOptions options, std::vector<RoughModel> models, std::vector<int> max_batch,
                           int global_batch)
    : options_(options), models_(std::move(models)), max_batch_(std::move(max_batch)), global_batch_(global_batch) {
  if (models_.size() != max_batch_.size())
    throw std::invalid_argument("DynamicTuner: " + std::to_string(models_.size()) + " models but " +
                                std::to_string(max_batch_.size()) + " max batches");
  if (global_batch_ <= 0)
    throw std::invalid_argument("DynamicTuner: the global batch must be positive, got " + std::to_string(global_batch_));
  std::int64_t capacity = 0;
  for (std::size_t i = 0; i < max_batch_.size(); ++i) {
    if (max_batch_[i] < 0)
      throw std::invalid_argument("DynamicTuner: worker " + std::to_string(i) + " has a negative max batch");
    capacity += max_batch_[i];
  }
  if (capacity < global_batch_)
    throw std::invalid_argument("DynamicTuner: the max batches sum to " + std::to_string(capacity) +
                                ", less than the global batch " + std::to_string(global_batch_));
  if (!(options_.fine_threshold >= 0 && options_.fine_threshold <= options_.rapid_threshold))
    throw std::invalid_argument("DynamicTuner: need 0 <= FT <= RT, got FT = " + std::to_string(options_.fine_threshold) +
                                ", RT = " + std::to_string(options_.rapid_threshold));
  if (options_.step < 1) throw std::invalid_argument("DynamicTuner: step must be >= 1, got " + std::to_string(options_.step));
  if (options_.window < 0)
    throw std::invalid_argument("DynamicTuner: window must be >= 0, got " + std::to_string(options_.window));
}

TuneResult DynamicTuner::tune(const std::vector<int>& batch_sizes, const std::vector<double>& compute_ms) {
  if (batch_sizes.size() != models_.size() || compute_ms.size() != models_.size())
    throw std::invalid_argument("DynamicTuner::tune: expected " + std::to_string(models_.size()) +
                                " workers, got " + std::to_string(batch_sizes.size()) + " batch sizes and " +
                                std::to_string(compute_ms.size()) + " times");
  TuneResult result;
  result.batch_sizes = batch_sizes;
  result.straggler_effect = straggler_effect(compute_ms, batch_sizes);
  result.in_window = window_left_ > 0;
  if (result.in_window) --window_left_;
  if (result.straggler_effect < options_.fine_threshold) return result;  // Alg. 2 line 8
  if (result.straggler_effect < options_.rapid_threshold || result.in_window) return fine_tune(std::move(result), compute_ms);
  return rapid_tune(std::move(result), compute_ms);
}

// Alg. 2 lines 11-14. As printed, the slowest gives floor(step/2) and the fastest takes
// ceil(step/2), which changes the global batch whenever step is odd (and step is "usually 1");
// here exactly `step` samples move, so sum B_i = B holds (Eq. 3). If the fastest worker is at its
// memory limit the next fastest with room takes them.
TuneResult DynamicTuner::fine_tune(TuneResult result, const std::vector<double>& compute_ms) const {
  auto& batch = result.batch_sizes;
  int slowest = -1;
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (batch[i] > 0 && (slowest < 0 || compute_ms[i] > compute_ms[static_cast<std::size_t>(slowest)]))
      slowest = static_cast<int>(i);
  int fastest = -1;
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (batch[i] > 0 && static_cast<int>(i) != slowest && batch[i] < max_batch_[i] &&
        (fastest < 0 || compute_ms[i] < compute_ms[static_cast<std::size_t>(fastest)]))
      fastest = static_cast<int>(i);
  if (slowest < 0 || fastest < 0) return result;
  const auto s = static_cast<std::size_t>(slowest), f = static_cast<std::size_t>(fastest);
  if (options_.fine_step == FineStep::Balance) {
    std::vector<int> balanced = rebalance(batch, compute_ms);
    if (balanced != batch) {
      result.action = TuneAction::Fine;
      result.slowest = slowest;
      result.fastest = fastest;
      result.moved = batch[s] - balanced[s];  // what the slowest gave (to every faster worker)
      batch = std::move(balanced);
      return result;
    }
  }
  const int moved = std::min({options_.step, batch[s], max_batch_[f] - batch[f]});
  if (moved <= 0) return result;
  batch[s] -= moved;  // may reach 0: the worker is taken out, as Eq. 3 allows
  batch[f] += moved;
  result.action = TuneAction::Fine;
  result.slowest = slowest;
  result.fastest = fastest;
  result.moved = moved;
  return result;
}

// The worker's per-sample time: its rough model's a1 once known, else its last step through the
// origin (CT_i / CB_i), which assumes no start-up time.
double DynamicTuner::per_sample_ms(std::size_t worker, int batch, double compute_ms) const {
  const double a1 = models_[worker].a1;
  if (std::isfinite(a1) && a1 > 0) return a1;
  return batch > 0 && compute_ms > 0 ? compute_ms / batch : 0.0;
}

// FineStep::Balance: Eq. 3 on the rough models' slopes through the last measurements. Workers
// taken out (CB_i = 0) stay out: there is no measurement to anchor them.
std::vector<int> DynamicTuner::rebalance(const std::vector<int>& batch, const std::vector<double>& compute_ms) const {
  std::vector<WorkerTimeModel> workers(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (batch[i] <= 0) continue;  // max_batch 0: out
    const double slope = per_sample_ms(i, batch[i], compute_ms[i]);
    const double at = compute_ms[i];
    const int from = batch[i];
    workers[i].time_ms = [slope, at, from](int b) { return std::max(0.0, at + slope * (b - from)); };
    workers[i].max_batch = max_batch_[i];
  }
  return solve_min_max(workers, global_batch_).batch_sizes;
}

// Alg. 2 lines 1-5 and 16-17.
TuneResult DynamicTuner::rapid_tune(TuneResult result, const std::vector<double>& compute_ms) {
  const auto& current = result.batch_sizes;
  for (std::size_t i = 0; i < models_.size(); ++i) {
    if (current[i] <= 0 || !(compute_ms[i] > 0)) continue;  // no measurement: keep the model
    const double a0 = std::max(0.0, models_[i].a0);
    if (compute_ms[i] > a0) {
      // a0 from profiling, a1 = (CT_i - a0) / CB_i: the real-time throughput (Sec. 3.2.3).
      models_[i] = {a0, (compute_ms[i] - a0) / current[i]};
    } else {
      // A step no slower than the profiled start-up time discredits that a0; the model through
      // the origin and the measurement is the one that assumes least.
      models_[i] = {0.0, compute_ms[i] / current[i]};
    }
  }
  // Workers with no model at all sit out, unless the others cannot hold B: then they are given
  // the worst known model, so they are used last.
  std::int64_t known_capacity = 0;
  RoughModel worst{0.0, 0.0};
  for (std::size_t i = 0; i < models_.size(); ++i) {
    if (!std::isfinite(models_[i].a1)) continue;
    known_capacity += max_batch_[i];
    worst.a0 = std::max(worst.a0, models_[i].a0);
    worst.a1 = std::max(worst.a1, models_[i].a1);
  }
  std::vector<WorkerTimeModel> workers(models_.size());
  for (std::size_t i = 0; i < models_.size(); ++i) {
    const bool known = std::isfinite(models_[i].a1);
    if (!known && known_capacity >= global_batch_) continue;  // max_batch 0: out
    const RoughModel m = known ? models_[i] : worst;
    workers[i].time_ms = [m](int b) { return m.a0 + m.a1 * b; };
    workers[i].max_batch = max_batch_[i];
  }
  result.batch_sizes = solve_min_max(workers, global_batch_).batch_sizes;
  result.action = TuneAction::Rapid;
  window_left_ = options_.window;
  return result;
}

}  // namespace lbb
