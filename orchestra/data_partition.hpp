// Orchestra's Data Partition Controller (Sec. 3.1.2): each worker's share of the training set for
// the next epoch, proportional to its measured speed, so that fast and slow workers run out of data
// together instead of the fast one idling through the end of the epoch (Figure 2, case 1).
//
// Speed: the paper measures batches per second with one batch size for all workers. This toolkit
// lets batch sizes differ per worker, so the share is proportional to samples per second,
// B_n * (batches/s)_n, which is the paper's rule whenever the B_n are equal: a worker's shard of
// share_n * S samples then takes share_n * S / (B_n * speed_n) seconds, the same for every worker.
#pragma once

#include <vector>

#include "env/round_plan.hpp"

namespace orchestra {

// Speeds (any positive unit) -> shares summing to 1. Throws std::invalid_argument on an empty list
// or a speed that is not positive and finite.
std::vector<double> normalize_shares(const std::vector<double>& speeds);

// Batches per second of each worker in an epoch: worker_steps / (worker_busy_ms / 1000). A worker
// with no steps, no busy time, or a non-finite value gets NaN (no measurement); so do all workers
// when the report's vectors do not have `num_workers` entries.
std::vector<double> measured_batches_per_second(const env::EpochReport& report, int num_workers);

class DataPartitionController {
 public:
  // B_n per worker (each >= 1). Until a measurement arrives all workers count as equally fast.
  explicit DataPartitionController(std::vector<int> batch_sizes);

  // Speeds from per-batch times in ms (profiling, or estimates from round reports): 1000 / t_b^n.
  // Workers whose time is not positive and finite keep their previous speed.
  void set_batch_times(const std::vector<double>& batch_ms);

  // Re-estimates speeds from an epoch's report (3.1.2: "collect the computing speed of each worker
  // by performance monitor"). A worker without a usable measurement (zero steps or busy time, NaN)
  // keeps its previous speed, so an epoch where nothing was measured leaves the shares as they
  // were. Returns how many workers were re-estimated.
  int update(const env::EpochReport& report);

  const std::vector<double>& shares() const { return shares_; }                   // sum to 1
  const std::vector<double>& batches_per_second() const { return batches_per_second_; }
  const std::vector<int>& batch_sizes() const { return batch_sizes_; }

 private:
  void recompute_shares();

  std::vector<int> batch_sizes_;
  std::vector<double> batches_per_second_;
  std::vector<double> shares_;
};

}  // namespace orchestra
