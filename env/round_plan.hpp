// What a barrier policy decides for the next round, and what the environment reports back.
// The data flow: plan -> round -> report -> policy (docs/ARCHITECTURE.md).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace env {

// How the replicas are combined at the end of a round.
enum class Aggregation {
  // SSGD / LBB / BOA / LB-BSP: one local step each, gradients all-reduced with weight B_i/B
  // (LBB Sec. 3.2.4), so every replica takes the same update.
  GradientAllReduce,
  // Local SGD / MLLSGD / OSA / Orchestra: each worker takes tau_i local steps, then the models are
  // averaged (Orchestra Eq. 2).
  ModelAverage,
};

// Weights of the model average. Uniform: 1/N over the workers that took part in the round.
// AllWorkers: Orchestra Eq. 2 read with N fixed, 1/N over all N workers in every round, a worker
// without steps (its shard used up near an epoch's end) counting with the unchanged global model;
// the two differ only in such rounds, where under Uniform the one or two workers still holding
// data set the global model alone. The all-reduce then runs over all N workers.
// FedNova (Wang et al., NeurIPS 2020, "Tackling the Objective Inconsistency Problem in
// Heterogeneous Federated Optimization", Eq. 6): each worker's update x_t - x_i is divided by its
// effective number of steps a_i (with momentum rho, a_i = (tau_i - rho (1 - rho^tau_i) / (1 - rho))
// / (1 - rho)), the normalized updates are averaged with the sample shares p_i, and the result is
// scaled by tau_eff = sum_i p_i a_i, so that workers taking more local steps do not pull the model
// towards their own objective.
enum class AverageWeighting { Uniform, AllWorkers, BySamples, FedNova };
inline constexpr AverageWeighting kAverageWeightings[] = {AverageWeighting::Uniform, AverageWeighting::AllWorkers,
                                                          AverageWeighting::BySamples, AverageWeighting::FedNova};

// The weighting's spelling in configs (`weighting:`), policy files and the real mode's messages.
inline const char* weighting_name(AverageWeighting w) {
  switch (w) {
    case AverageWeighting::Uniform: return "uniform";
    case AverageWeighting::AllWorkers: return "all_workers";
    case AverageWeighting::BySamples: return "samples";
    case AverageWeighting::FedNova: return "fednova";
  }
  return "uniform";
}

// The weighting a spelling names (configs, policy files, the real mode's messages); nullopt for
// an unknown one, so each reader reports it in its own terms.
inline std::optional<AverageWeighting> weighting_from_name(const std::string& name) {
  for (auto w : kAverageWeightings)
    if (name == weighting_name(w)) return w;
  return std::nullopt;
}

// An outer optimizer on the averaged update (SlowMo, Wang et al., ICLR 2020; DiLoCo, Douillard et
// al. 2023): with x_t the global model at the round's start and x the average, the pseudo-gradient
// is delta = x_t - x; m = momentum * m + delta; x_{t+1} = x_t - lr * (nesterov ? delta + momentum * m : m).
// lr 1 and momentum 0 give plain averaging.
struct OuterOptimizer {
  double lr = 1.0;
  double momentum = 0.0;
  bool nesterov = false;
};

// "Run until your data shard for this epoch is used up" (one-shot averaging).
inline constexpr int kUntilShardEnd = std::numeric_limits<int>::max();

struct WorkerPlan {
  int batch_size = 0;   // B_i; 0 takes the worker out of the round (LBB Eq. 3, B_i = 0)
  int local_steps = 1;  // tau_i; ignored (always 1) under GradientAllReduce
};

struct RoundPlan {
  Aggregation aggregation = Aggregation::GradientAllReduce;
  AverageWeighting weighting = AverageWeighting::Uniform;
  std::vector<WorkerPlan> workers;  // one entry per worker, in cluster order
  // MLLSGD: within a round, average inside each server every `server_average_every` local steps
  // over the fast intra-server link; 0 means never (a flat scheme).
  int server_average_every = 0;
  // Per-worker share of the training set for the epoch this round starts (ModelAverage only; read
  // at the first round of an epoch). Empty means proportional to B_i * tau_i, so that every worker
  // runs out of data in the same round. Orchestra 3.1.2 sets it proportional to speed.
  std::vector<double> data_shares;
  // Orchestra's barrier T in ms when the policy has one (recorded in the results, 0 otherwise).
  double barrier_ms = 0.0;
  // The outer optimizer applied to the round's global average (ModelAverage only); none: plain.
  std::optional<OuterOptimizer> outer;
};

struct WorkerRoundStats {
  int batch_size = 0;     // the batch actually used (the last batch of a shard may be smaller)
  int local_steps = 0;    // steps actually taken this round
  int samples = 0;        // samples processed this round
  double compute_ms = 0;  // busy time: sum of this worker's step times
  double idle_ms = 0;     // time spent waiting at barriers for slower workers
};

struct RoundReport {
  std::int64_t round = 0;  // global sync index, counting from 0 over the whole run
  int epoch = 0;           // epoch this round belongs to, from 0
  std::vector<WorkerRoundStats> workers;
  double comm_ms = 0;    // all-reduce / averaging time of this round (cost model or measured)
  double round_ms = 0;   // wall time of the round: slowest compute + communication
  double clock_ms = 0;   // clock at the end of the round
  double straggler_effect = 0;  // LBB Eq. 4 over the workers that took part
  double barrier_ms = 0;        // the plan's T, echoed
  bool epoch_end = false;       // the last round of its epoch
  // Mean training loss over the round's steps (NaN in timing-only runs): what adaptive-period
  // policies (AdaComm) steer by.
  double train_loss = std::numeric_limits<double>::quiet_NaN();
};

struct EpochReport {
  int epoch = 0;
  std::int64_t rounds = 0;       // rounds in this epoch
  double clock_ms = 0;           // clock at the end of the epoch (after evaluation, which costs 0)
  double epoch_ms = 0;           // simulated (or wall) time of this epoch
  double accuracy = 0;           // test accuracy in [0,1]; NaN in timing-only mode
  double loss = 0;               // test loss; NaN in timing-only mode
  double train_loss = 0;         // mean training loss over the epoch's steps; NaN in timing-only mode
  double mean_straggler_effect = 0;
  double utilization = 0;        // busy / (N * elapsed)
  std::vector<double> worker_busy_ms;  // per worker, this epoch
  std::vector<double> worker_idle_ms;
  std::vector<std::int64_t> worker_steps;  // local iterations taken this epoch, per worker
};

// Test accuracy in [0,1] and loss of the global model.
struct EvalResult {
  double accuracy = 0;
  double loss = 0;
};

}  // namespace env
