// The local-SGD training environment: a simulated heterogeneous cluster whose workers train real
// libtorch replicas on real data. One call runs one round of a policy's plan.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "env/round_cluster.hpp"
#include "env/train/dataset.hpp"
#include "env/train/models.hpp"
#include "env/train/worker_replicas.hpp"
#include "env/sim/simulation.hpp"

namespace env {

// Cosine: lr_e = lr * (1 + cos(pi * e / planned_epochs)) / 2 at each epoch start (round_rules.hpp).
enum class LrSchedule { Constant, Cosine };

struct TrainingSpec {
  ModelSpec model;
  OptimizerSpec optimizer;
  LrSchedule lr_schedule = LrSchedule::Constant;
  int planned_epochs = 1;
  // training.shards: how an epoch's shards are dealt (epoch_data.hpp). LocalSgdEnv sets its
  // simulation's SimulationSpec::shards from it; a real run's ranks read it here.
  ShardRule shards = ShardRule::Epoch;
  bool timing_only = false;   // no gradients: only the clock runs (cluster-scale what-if studies)
  std::string device = "cpu";  // runtime.device: cpu | cuda | cuda:N (device.hpp)
  bool tf32 = false;           // runtime.tf32: TF32 for float32 convolutions and matrix products on a GPU (device.hpp)
  ReplicaMode replicas = ReplicaMode::Auto;  // runtime.replicas (worker_replicas.hpp)
};

class StepBatcher;

// Vectorized environments (step_batcher.hpp): when `batcher` is set, this environment's local-SGD
// rounds run merged with those of the other environments taking part (as member `member`), on
// batched replicas; without it, or for a model that does not stack, it steps alone.
struct StepBatching {
  std::shared_ptr<StepBatcher> batcher;
  int member = 0;
};

struct EnvSpec {
  SimulationSpec simulation;  // train_samples and message_bytes are filled in by the environment
  TrainingSpec training;
  StepBatching batching;
};

// The simulated cluster of the run loop (RoundCluster) and the RL environment's substrate.
class LocalSgdEnv : public RoundCluster, private TrainingHooks {
 public:
  // `data` may be null only for timing-only runs, which then use simulation.train_samples and, if
  // message_bytes is 0, the size of the configured model for inputs of `input_shape`.
  LocalSgdEnv(EnvSpec spec, std::shared_ptr<const DatasetPair> data, std::uint64_t seed,
              std::vector<std::int64_t> input_shape = {1, 28, 28});

  ClockKind clock_kind() const override { return ClockKind::Simulated; }
  ClusterView view() override { return simulation_->view(); }
  RoundReport run_round(const RoundPlan& plan) override { return simulation_->run_round(plan); }
  bool epoch_finished() const { return simulation_->epoch_finished(); }
  bool in_epoch() const override { return simulation_->in_epoch(); }
  // Closes the epoch and evaluates the global model on the test set (skipped when timing-only).
  EpochReport finish_epoch() override;
  // Test accuracy and loss of the global model now (NaN when timing-only).
  EvalResult evaluate() override;

  double clock_ms() const override { return simulation_->clock_ms(); }
  int epoch() const override { return simulation_->epoch(); }
  std::int64_t rounds() const override { return simulation_->rounds(); }
  double epoch_progress() const override { return simulation_->epoch_progress(); }
  double message_bytes() const { return simulation_->spec().message_bytes; }
  WorkerReplicas* replicas() { return replicas_.get(); }

 private:
  void begin_epoch(int epoch) override;
  double gradient_round(const std::vector<IndexSpan>& batches) override;
  std::vector<double> local_steps(const std::vector<std::vector<IndexSpan>>& batches) override;
  void average(const AverageGroup& group, const std::vector<int>& receivers) override {
    replicas_->average(group.members, group.weights, receivers);
  }
  void begin_global_round(const GlobalAverage& global) override {
    replicas_->snapshot_global();
    if (global.fednova) replicas_->reset_momentum();  // a_i counts the round's steps from a fresh buffer
  }
  void global_update(const GlobalAverage& global) override { replicas_->global_update(global); }
  const Dataset& train_data() const { return placed_->train; }

  TrainingSpec training_;
  StepBatching batching_;
  std::shared_ptr<const DatasetPair> data_;
  torch::Device device_ = torch::kCPU;
  std::shared_ptr<const DatasetPair> placed_;  // data_ on device_ (data_ itself on the CPU; device.hpp place_on)
  std::unique_ptr<WorkerReplicas> replicas_;
  std::unique_ptr<Simulation> simulation_;
};

// [C, H, W] of the samples a data spec produces (without reading the files: its dataset row's input_shape).
std::vector<std::int64_t> input_shape_of(const DataSpec& spec);

}  // namespace env
