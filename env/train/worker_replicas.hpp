// The workers' model replicas as the simulated cluster drives them: what every implementation
// (one model per worker, or all workers stacked into one batched computation) must do alike.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <vector>

#include "env/round_plan.hpp"
#include "env/sim/averaging_round.hpp"
#include "env/sim/epoch_data.hpp"
#include "env/train/dataset.hpp"

namespace env {

struct OptimizerSpec {
  double lr = 0.05;
  double momentum = 0.9;
  double weight_decay = 5e-4;
};


// How the replicas are trained (`runtime.replicas`): one libtorch call chain per worker step, or
// every worker's step of a slot as one stacked forward/backward/update (batched_replicas.hpp).
// Auto (the default) batches where it measured faster: the MLP anywhere, the CNN on a GPU (on the
// CPU, Debian's libtorch runs its grouped convolution slower than N plain ones; BENCHMARKS.md).
enum class ReplicaMode { Auto, Batched, Sequential };

inline const std::vector<std::pair<const char*, ReplicaMode>>& replica_mode_spellings() {
  static const std::vector<std::pair<const char*, ReplicaMode>> spellings = {
      {"auto", ReplicaMode::Auto}, {"batched", ReplicaMode::Batched}, {"sequential", ReplicaMode::Sequential}};
  return spellings;
}

class WorkerReplicas {
 public:
  virtual ~WorkerReplicas() = default;
  // SSGD / LBB (Alg. 3, Sec. 3.2.4): one step of the shared model on every worker's batch, each
  // worker's mean-loss gradient weighted by B_i/B; returns the sample-weighted mean training loss.
  virtual double gradient_step(const Dataset& train, const std::vector<IndexSpan>& batches) = 0;
  // Local SGD steps (Orchestra Eq. 2, second case): batches[i] lists worker i's batches in order.
  // Returns each step's training loss, worker 0's steps first, then worker 1's, ...
  virtual std::vector<double> local_steps(const Dataset& train, const std::vector<std::vector<IndexSpan>>& batches) = 0;
  // Model averaging (Orchestra Eq. 2, first case): the weighted average of `members`' parameters
  // and buffers is written into every replica in `receivers`. Momentum buffers stay local.
  virtual void average(const std::vector<int>& members, const std::vector<double>& weights, const std::vector<int>& receivers) = 0;
  // FedNova and the outer optimizer (global_update.hpp): x_t kept at the round's start, then the
  // round's global model from it, written into every replica.
  virtual void snapshot_global() = 0;
  virtual void global_update(const GlobalAverage& global) = 0;
  // Every replica's momentum buffer back to zero: FedNova's a_i (averaging_round.hpp) counts a
  // round's momentum steps from a fresh buffer, so a FedNova round starts from one. Carried over,
  // a worker with one local step moved ~1/(1 - rho) gradients where a_i counts 1, and after a
  // few rounds it held 3.5x the normalized weight of a worker with eight (rho 0.9).
  virtual void reset_momentum() = 0;
  virtual void set_learning_rate(double lr) = 0;
  // Test accuracy and loss of replica 0, which holds the global model after a synchronization.
  virtual EvalResult evaluate(const Dataset& test) = 0;
  // Replica `worker`'s parameters then floating buffers (copies), in the model's order.
  virtual std::vector<torch::Tensor> state(int worker) = 0;
  virtual int num_workers() const = 0;
  virtual double parameter_bytes() const = 0;
};

// The samples of `span`, from tensors on whichever device `data` lives on.
std::pair<torch::Tensor, torch::Tensor> gather_batch(const Dataset& data, IndexSpan span);

}  // namespace env
