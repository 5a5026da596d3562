// All workers' replicas as one batched computation (runtime.replicas: batched): every parameter
// is one tensor [N, ...] over the N replicas, and the steps that share a slot of a round (step s
// of every worker that takes one) are one stacked forward/backward (stacked_models.hpp), one
// optimizer update and, at the barrier, one weighted reduction over the replica dimension.
//
// Workers with different batch sizes (LBB, BOA) or numbers of local steps (Orchestra's tau_n) are
// padded and masked: a padded sample's loss weight is 0, and an idle replica is left out of the slot,
// so each replica follows exactly the sequence of steps ReplicaSet gives it; results differ from
// the sequential path only by floating-point reassociation (bmm against mm).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "env/train/global_update.hpp"
#include "env/train/models.hpp"
#include "env/train/stacked_mlp.hpp"
#include "env/train/worker_replicas.hpp"

namespace env {

class BatchedReplicaSet : public WorkerReplicas {
 public:
  // All replicas start from the weights ReplicaSet gives replica 0 for the same seed. The model
  // must stack (can_stack).
  BatchedReplicaSet(const ModelSpec& model, const std::vector<std::int64_t>& input_shape, int classes, int num_workers,
                    const OptimizerSpec& optimizer, std::uint64_t seed, torch::Device device = torch::kCPU);

  // One forward over all workers' batches on replica 0: sum_i (B_i/B) mean_i = the mean over all.
  double gradient_step(const Dataset& train, const std::vector<IndexSpan>& batches) override;
  std::vector<double> local_steps(const Dataset& train, const std::vector<std::vector<IndexSpan>>& batches) override;
  void average(const std::vector<int>& members, const std::vector<double>& weights, const std::vector<int>& receivers) override;
  void snapshot_global() override;
  void reset_momentum() override;
  void global_update(const GlobalAverage& global) override;
  void set_learning_rate(double lr) override { optimizer_.lr = lr; }
  EvalResult evaluate(const Dataset& test) override;
  std::vector<torch::Tensor> state(int worker) override;
  int num_workers() const override { return num_workers_; }
  double parameter_bytes() const override { return parameter_bytes_; }

  // Several replica sets' local steps as one computation: slot s of every set's stepping workers is
  // one stacked forward and backward (the sets' rows side by side, padded to the widest batch),
  // then each set's own SGD update (its own learning rate and momentum). What each set computes is
  // what its local_steps computes alone, up to floating-point reassociation (a wider batched
  // product). The sets must hold the same model on the same device. This is how several
  // environments (episodes) step as one on a GPU (step_batcher.hpp).
  struct LocalStepsJob {
    BatchedReplicaSet* replicas;
    const Dataset* train;
    const std::vector<std::vector<IndexSpan>>* batches;  // as local_steps takes them
  };
  static std::vector<std::vector<double>> local_steps_together(const std::vector<LocalStepsJob>& jobs);

 private:
  // The stacked parameters of replicas `who` (ascending): views or copies, read-only.
  std::vector<torch::Tensor> rows_of(const std::vector<std::int64_t>& who) const;
  // The gradients of one slot for the replicas whose parameters are `rows`: inputs [n, B, ...],
  // targets [n*B], per-sample loss weights [n*B] (1/B_i for worker i's samples, 0 for padding).
  // The MLP's are written out (stacked_mlp.hpp); the CNN's come from autograd.
  StackedGradients gradients(const std::vector<torch::Tensor>& rows, const torch::Tensor& inputs, const torch::Tensor& targets,
                             const torch::Tensor& sample_weights);
  // SGD with momentum and weight decay as torch::optim::SGD computes it, on replicas `who` with
  // their gradients `grads` ([who.size(), ...] each); the others' parameters and momentum are left
  // exactly as they were. Parameters are float32 (the models are built so).
  void sgd_update(const std::vector<std::int64_t>& who, const std::vector<torch::Tensor>& grads);
  void make_all_equal_to_first();  // after gradient steps, before local steps

  const ModelKind* kind_;  // its row in the model table: the stacked forward and gradients
  int num_workers_;
  OptimizerSpec optimizer_;
  torch::Device device_;
  std::vector<torch::Tensor> params_;    // stacked [N, ...], in Classifier::parameters() order
  std::vector<torch::Tensor> momentum_;  // stacked, zero until a replica's first step (= SGD's lazy buffer)
  std::shared_ptr<Classifier> eval_model_;  // replica 0 is copied here for evaluation
  bool others_stale_ = false;
  std::vector<torch::Tensor> round_start_;  // x_t (snapshot_global)
  OuterState outer_;
  double parameter_bytes_ = 0;
};

// What ReplicaMode::Auto picks: batched for a model that stacks, on the CPU only where its row says
// so (the MLP; the CNN off the CPU).
bool prefers_batched(const std::string& arch, torch::Device device);

// The replicas for `mode`: batched where the model stacks (asked for, or Auto's choice), else the
// sequential ReplicaSet, with a one-line notice on stderr when batched was asked for.
std::unique_ptr<WorkerReplicas> make_replicas(ReplicaMode mode, const ModelSpec& model, const std::vector<std::int64_t>& input_shape,
                                              int classes, int num_workers, const OptimizerSpec& optimizer, std::uint64_t seed,
                                              torch::Device device);

}  // namespace env
