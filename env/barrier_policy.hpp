// The interface every synchronization policy implements (DSGD, Local SGD, MLLSGD, OSA, LBB, BOA,
// LB-BSP, Orchestra). The runner asks for a plan before each round and feeds back what happened;
// the environment itself knows no policy.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "env/round_plan.hpp"

namespace env {

// What a policy may know about the cluster before training starts.
struct ClusterView {
  int num_workers = 0;
  int global_batch = 0;                 // B of the workload (SSGD splits it equally)
  std::int64_t train_samples = 0;       // size of the training set
  std::vector<std::string> worker_names;
  std::vector<int> max_batch;           // B_lim_i, the memory limit of each worker
  std::vector<int> server_of;           // server index of each worker (0..num_servers-1)
  int num_servers = 1;
  double parameter_bytes = 0;           // size of one model message (for communication costs)
  // Profiling (LBB Alg. 1): time one training step of `batch` samples on `worker`, in ms. In a
  // simulated cluster it comes from the worker's batch-time model with its noise; the time spent
  // is charged to the clock before the first round, so profiling is not free.
  std::function<double(int worker, int batch)> probe_step_ms;
  // Communication time of one all-reduce of the model over all workers (ms), from the cost model.
  std::function<double(int participants)> allreduce_ms;
};

// What the policy sees when asked for the next plan.
struct PlanContext {
  std::int64_t round = 0;      // index of the round about to run
  int epoch = 0;               // epoch it belongs to
  bool epoch_start = false;    // true for the first round of an epoch
  double clock_ms = 0;         // clock now
};

class BarrierPolicy {
 public:
  virtual ~BarrierPolicy() = default;
  // Called before the first round of a run. A policy is built once and started for each run
  // (the runner's preflight on a timing-only copy of the cluster, then the run itself): start
  // forgets everything an earlier start learned, so the run is what a fresh policy would do.
  virtual void start(const ClusterView& cluster) = 0;
  // The plan for the next round.
  virtual RoundPlan plan(const PlanContext& context) = 0;
  // What the round just planned did.
  virtual void observe_round(const RoundReport& report) { (void)report; }
  // The epoch just finished (test accuracy and loss included).
  virtual void observe_epoch(const EpochReport& report) { (void)report; }
  // Every test evaluation of the global model, mid-epoch ones included (the epoch's own arrives
  // after observe_epoch), before the next plan.
  virtual void observe_evaluation(const EvalResult& result) { (void)result; }
};

}  // namespace env
