// One rank of a real multi-process run: its own replica, trained only on its own samples, with its
// compute time measured on the wall clock, and the round's aggregation through a Communicator.
//
// Every rank keeps the whole epoch's sample order (the simulator's EpochData, same seed) and
// advances every worker's cursor by the plan, so all ranks agree on who takes which samples and on
// the averaging weights without exchanging them; a rank only ever reads the samples of its own
// shard (or its own slice of the global batch).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "env/sim/cluster.hpp"
#include "env/sim/round_rules.hpp"
#include "common/errors.hpp"
#include "env/real/communicator.hpp"
#include "env/train/dataset.hpp"
#include "env/sim/epoch_data.hpp"
#include "env/train/local_sgd_env.hpp"
#include "env/train/global_update.hpp"
#include "env/train/replicas.hpp"
#include "env/round_plan.hpp"

namespace env {

struct RealWorkerSpec {
  TrainingSpec training;           // model, optimizer, lr schedule (timing_only is not allowed)
  ClusterSpec cluster;             // one worker per rank: names, B_lim, servers (MLLSGD's intra-server averages)
  // Heterogeneity on a homogeneous machine: this rank's perturbations (cluster.perturbations with
  // worker == this rank), applied to its measured compute time. A step that took t ms becomes
  // t * slowdown + add_ms (LBB's cyclic +ms with period_s); the difference is slept.
  std::vector<Perturbation> perturbations;
  std::uint64_t seed = 1;          // the experiment's seed: model init and data order
  // Where this rank trains (env::rank_device of runtime.device): its replica, its samples (the data
  // set is placed there once) and its aggregation; measured step times wait for the device.
  torch::Device device = torch::kCPU;
};

// What this rank did in one round; rank 0 gathers them into the RoundReport.
struct RealRoundStats {
  std::int64_t round = 0;
  WorkerRoundStats worker;  // compute_ms measured (slowdown included); idle_ms left to rank 0
  double loss_sum = 0;      // gradient round: this rank's B_i/B-weighted loss; else sum over steps
  int loss_count = 0;
  double sync_ms = 0;       // wall time blocked in this round's collectives (waiting + transfer)
  bool epoch_end = false;   // the round used up the epoch's data
};

class RealWorker {
 public:
  // All ranks initialize the same weights from the seed (as ReplicaSet does for replica 0).
  RealWorker(const RealWorkerSpec& spec, std::shared_ptr<const DatasetPair> data, Communicator& comm);

  // Throws common::PlanError for a plan this cluster cannot run (checked by rank 0 before broadcasting).
  void check(const RoundPlan& plan) const;
  // This rank's part of `plan` (round index `round`); opens the epoch first when none is open.
  // `clock_ms` is the run's clock at the start of the round (it drives the perturbations).
  RealRoundStats run_round(std::int64_t round, const RoundPlan& plan, double clock_ms);
  // LBB Alg. 1 on this rank: wall time of forward + backward over `batch` samples with this rank's
  // slowdown applied. The model, its gradients and its buffers are left as they were.
  double probe_ms(int batch, double clock_ms);

  // Resume: the weights to continue from come from rank 0 (checkpoint), the epoch from its meta.
  void broadcast_model_from(int root);
  void start_at_epoch(int epoch);

  int epoch() const { return epoch_; }
  bool in_epoch() const { return in_epoch_; }
  double epoch_progress() const;
  std::int64_t train_samples() const { return order_.samples(); }
  ReplicaSet& replicas() { return *replicas_; }
  std::vector<torch::Tensor> state();  // parameters then floating buffers (ReplicaSet's order)

 private:
  void begin_epoch(const RoundPlan& plan);
  void run_gradient_round(const RoundPlan& plan, RealRoundStats& stats);
  void run_average_round(const RoundPlan& plan, RealRoundStats& stats);
  // Weighted sum of the contributing ranks' states, written into the ranks in `receive`.
  void average(double my_weight, bool receive, const std::string& what, RealRoundStats& stats);
  double timed(const std::function<void()>& step, double clock_ms);  // ms, slowdown applied

  RealWorkerSpec spec_;
  std::shared_ptr<const DatasetPair> data_;
  Communicator& comm_;
  std::unique_ptr<ReplicaSet> replicas_;  // one replica: this rank's
  EpochData order_;
  int epoch_ = 0;
  bool in_epoch_ = false;
  Aggregation epoch_aggregation_ = Aggregation::GradientAllReduce;
  std::int64_t round_ = 0;
  std::chrono::steady_clock::time_point round_start_{};
  OuterState outer_;  // the outer optimizer's momentum (identical on every rank; restarts at 0 on resume)
  double round_clock_ms_ = 0;
};

}  // namespace env
