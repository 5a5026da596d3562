// The workers' model replicas, one libtorch model and optimizer per worker (runtime.replicas:
// sequential): SGD with momentum and weight decay, local steps, weighted gradient all-reduce and
// model averaging, evaluation. Every model kind runs here; real runs hold one such replica per rank.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "env/train/global_update.hpp"
#include "env/train/models.hpp"
#include "env/train/worker_replicas.hpp"

namespace env {

class ReplicaSet : public WorkerReplicas {
 public:
  // All replicas start from the same weights, initialized from `seed`.
  ReplicaSet(const ModelSpec& model, const std::vector<std::int64_t>& input_shape, int classes, int num_workers,
             const OptimizerSpec& optimizer, std::uint64_t seed, torch::Device device = torch::kCPU);

  // SSGD / LBB (Alg. 3, Sec. 3.2.4): each worker's mean-loss gradient is weighted by B_i/B and the
  // weighted gradients are summed, which is what the all-reduce delivers to every worker; every
  // replica then applies the same update. The replicas stay bit-identical, so the simulator keeps
  // them as one (replica 0) and accumulates the weighted gradients straight into it. Returns the
  // sample-weighted mean training loss.
  double gradient_step(const std::vector<torch::Tensor>& inputs, const std::vector<torch::Tensor>& targets);
  double gradient_step(const Dataset& train, const std::vector<IndexSpan>& batches) override;

  // One local SGD step of `worker` on its own replica (Orchestra Eq. 2, second case).
  double local_step(int worker, const torch::Tensor& input, const torch::Tensor& target);
  std::vector<double> local_steps(const Dataset& train, const std::vector<std::vector<IndexSpan>>& batches) override;

  void average(const std::vector<int>& members, const std::vector<double>& weights, const std::vector<int>& receivers) override;

  void snapshot_global() override;
  void reset_momentum() override;
  // FedNova uses each member's local `steps` and the optimizer's momentum. Parameters only:
  // floating buffers (BatchNorm statistics) are averaged plainly.
  void global_update(const GlobalAverage& global) override;

  void set_learning_rate(double lr) override;
  EvalResult evaluate(const Dataset& test) override;
  std::vector<torch::Tensor> state(int worker) override;
  Classifier& model(int worker) { return *models_[static_cast<std::size_t>(worker)]; }
  // Real runs (RealWorker) split a gradient step around the all-reduce: backward, collective, step.
  torch::optim::SGD& optimizer(int worker) { return *optimizers_[static_cast<std::size_t>(worker)]; }
  int num_workers() const override { return static_cast<int>(models_.size()); }
  double parameter_bytes() const override { return parameter_bytes_; }

 private:
  void make_all_equal_to_first();  // after gradient steps, before local steps

  std::vector<std::shared_ptr<Classifier>> models_;
  std::vector<std::unique_ptr<torch::optim::SGD>> optimizers_;
  std::vector<std::vector<torch::Tensor>> params_;   // per replica, parameters then floating buffers
  bool others_stale_ = false;  // replicas 1..N-1 lag replica 0 after gradient steps
  double momentum_ = 0;         // the local optimizer's, for FedNova's a_i
  torch::Device device_ = torch::kCPU;
  std::size_t parameter_count_ = 0;  // params_[i] holds parameters first, then floating buffers
  std::vector<torch::Tensor> round_start_;  // x_t (snapshot_global)
  OuterState outer_;
  double parameter_bytes_ = 0;
};

// Test accuracy and mean loss of `model` on `test`, in chunks, on `device`.
EvalResult evaluate_classifier(Classifier& model, const Dataset& test, torch::Device device);

}  // namespace env
