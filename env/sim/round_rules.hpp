// The rules of a round that the simulated cluster and a real run must apply alike: which plans
// are valid, how an epoch's data is shared out, how a global batch is split, how many steps a
// shard has left, the learning-rate schedule, what a policy may know about the cluster, and the
// totals of an epoch. One definition each, so that simulated and real results cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "env/barrier_policy.hpp"
#include "env/round_plan.hpp"
#include "env/sim/cluster.hpp"
#include "env/sim/epoch_data.hpp"
#include "env/sim/network.hpp"

namespace env {

// Throws common::PlanError for a plan `cluster` cannot run: the wrong number of workers, a batch
// outside [0, max_batch], negative local steps, no work at all, or an aggregation changed inside
// the epoch (`in_epoch` with `epoch_aggregation`).
void validate_plan(const RoundPlan& plan, const ClusterSpec& cluster, bool in_epoch, Aggregation epoch_aggregation);

// Each worker's share of the epoch's data under model averaging: the plan's data_shares, or
// proportional to B_i * tau_i so that every worker runs out of data in the same round; a worker
// with batch 0 sits the epoch out. Throws common::PlanError for a share list of the wrong size.
std::vector<double> epoch_data_shares(const RoundPlan& plan);

// Opens `epoch` of `data` for `plan`: one stream under gradient all-reduce, else one shard per
// worker (epoch_data_shares). Throws common::PlanError for shares the data cannot be split by.
void open_epoch(EpochData& data, int epoch, const RoundPlan& plan);

// Before a model-averaging round, under `rule` (epoch_data.hpp): when a worker taking part (batch
// > 0, local steps > 0, a share > 0) has fewer samples left than its round would take (B_i * tau_i)
// while another worker holds more than its round would take (under Steal: one that takes fewer
// samples a round), reshares the epoch's remaining samples (Rebalance: by epoch_data_shares(plan);
// Steal: by B_i * tau_i) and returns true. Without such a pair (the epoch's healthy rounds, its
// very end, one-shot plans that run a shard to its end) or under Epoch it changes nothing.
// Simulated and real runs call it alike, so every rank deals the same shards.
bool rebalance_shards(EpochData& data, const RoundPlan& plan, ShardRule rule);

// Local steps a shard of `samples` still has at batch `batch` (the last one may be short).
inline std::int64_t batches_left(std::int64_t samples, int batch) { return batch > 0 ? (samples + batch - 1) / batch : 0; }

// The samples each worker takes from the epoch's stream in a gradient round: B_i, or, when fewer
// than B samples are left (the epoch's short last global batch), B_i shrunk in proportion, the
// remainder going round-robin to workers still under their B_i. Sums to min(B, available).
std::vector<std::int64_t> stream_batch_sizes(const std::vector<WorkerPlan>& workers, std::int64_t available);

// LBB Eq. 4 over the workers that computed: (max t - min t) / mean t; 0 for fewer than two.
double straggler_effect_of(const std::vector<WorkerRoundStats>& workers);

// Cosine decay at the start of `epoch`: lr * (1 + cos(pi * e / planned_epochs)) / 2.
double cosine_learning_rate(double lr, int epoch, int planned_epochs);

// What a policy may know before training (probe_step_ms is left for the cluster to fill in). The
// all-reduce estimate is the configured link model's in simulated and real runs alike.
ClusterView make_cluster_view(const ClusterSpec& cluster, const NetworkSpec& network, int global_batch,
                              std::int64_t train_samples, double parameter_bytes);

// An epoch's totals over its rounds: busy, idle and steps per worker, the mean straggler effect,
// utilization and the mean training loss.
class EpochTally {
 public:
  explicit EpochTally(std::size_t workers) : busy_(workers, 0.0), idle_(workers, 0.0), steps_(workers, 0) {}
  void start(double clock_ms);
  void add_round(const RoundReport& report);
  void add_loss(double loss_sum, std::int64_t count);
  // Accuracy and loss are left NaN for the caller.
  EpochReport finish(int epoch, double clock_ms) const;

 private:
  std::vector<double> busy_, idle_;
  std::vector<std::int64_t> steps_;
  double start_ms_ = 0, straggler_sum_ = 0, loss_sum_ = 0;
  std::int64_t rounds_ = 0, loss_count_ = 0;
};

}  // namespace env
