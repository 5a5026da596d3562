// The simulated clock and the round loop: per-worker step times from the cluster model, barrier
// waits, communication from the all-reduce cost model, data consumption and bookkeeping. Training
// itself is delegated to TrainingHooks, so the same loop runs timing-only studies with thousands
// of workers (no hooks) and real libtorch training (LocalSgdEnv).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "env/barrier_policy.hpp"
#include "env/sim/averaging_round.hpp"
#include "common/errors.hpp"
#include "env/sim/cluster.hpp"
#include "env/sim/epoch_data.hpp"
#include "env/sim/network.hpp"
#include "env/round_plan.hpp"
#include "env/sim/round_rules.hpp"

namespace env {

// What the training side does when the clock says a step happens.
class TrainingHooks {
 public:
  virtual ~TrainingHooks() = default;
  virtual void begin_epoch(int epoch) { (void)epoch; }
  // SSGD: one step over every worker's batch (empty spans for workers out of the round); returns
  // the mean training loss.
  virtual double gradient_round(const std::vector<IndexSpan>& batches) = 0;
  // Local steps: batches[i] lists worker i's batches, in order (workers train independently, so
  // they may run side by side); returns each step's training loss, worker 0's first.
  virtual std::vector<double> local_steps(const std::vector<std::vector<IndexSpan>>& batches) = 0;
  // Writes the weighted average `group` (averaging_round.hpp) into every replica in `receivers`.
  virtual void average(const AverageGroup& group, const std::vector<int>& receivers) = 0;
  // FedNova and the outer optimizer (GlobalAverage::needs_round_start): the model at the start of
  // the round, kept before its first local step ...
  virtual void begin_global_round(const GlobalAverage& global) {
    (void)global;
    throw std::logic_error("this training cannot run FedNova or an outer optimizer");
  }
  // ... and the round's global model from it, written into every replica.
  virtual void global_update(const GlobalAverage& global) {
    (void)global;
    throw std::logic_error("this training cannot run FedNova or an outer optimizer");
  }
};

struct SimulationSpec {
  ClusterSpec cluster;
  NetworkSpec network;
  int global_batch = 512;
  std::int64_t train_samples = 0;
  double message_bytes = 0;  // bytes per model/gradient message (resolved, > 0)
  ShardRule shards = ShardRule::Epoch;  // training.shards (epoch_data.hpp)
};

class Simulation {
 public:
  // `hooks` may be null: a timing-only run.
  Simulation(SimulationSpec spec, std::uint64_t seed, TrainingHooks* hooks);

  ClusterView view();
  // Runs one round of `plan`; starts a new epoch first when the previous one has finished.
  // Throws common::PlanError for a plan the cluster cannot run.
  RoundReport run_round(const RoundPlan& plan);
  bool epoch_finished() const { return in_epoch_ && data_.exhausted(); }
  bool in_epoch() const { return in_epoch_; }  // false before an epoch's first round
  // Closes the epoch: totals over its rounds (accuracy and loss left NaN for the caller).
  EpochReport finish_epoch();

  double clock_ms() const { return clock_ms_; }
  int epoch() const { return epoch_; }
  std::int64_t rounds() const { return round_; }
  double epoch_progress() const;  // fraction of this epoch's samples used
  const SimulationSpec& spec() const { return spec_; }

 private:
  void begin_epoch(const RoundPlan& plan);
  void run_gradient_round(const RoundPlan& plan, RoundReport& report);
  void run_average_round(const RoundPlan& plan, RoundReport& report);
  const LinkSpec& link_for(const std::vector<int>& members) const;
  double probe(int worker, int batch);
  void add_loss(double loss);  // one step's training loss, to the epoch and the round

  SimulationSpec spec_;
  SimulatedCluster cluster_;
  EpochData data_;
  TrainingHooks* hooks_;
  double clock_ms_ = 0;
  std::vector<double> pending_probe_ms_;  // profiling time per worker, paid before the next round
  int epoch_ = 0;
  std::int64_t round_ = 0;
  bool in_epoch_ = false;
  Aggregation epoch_aggregation_ = Aggregation::GradientAllReduce;
  EpochTally tally_;  // the current epoch's totals
  double round_loss_sum_ = 0;  // the current round's training loss
  std::int64_t round_loss_count_ = 0;
};

}  // namespace env
