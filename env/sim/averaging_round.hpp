// One round of model averaging, described once: who takes how many local steps on how many
// samples, in which chunks (MLLSGD), which workers each in-server and the global average take in
// and with what weight, FedNova's effective steps and tau_eff, and the outer optimizer. The
// simulator (Simulation::run_average_round, every replica in one process) and a real run
// (RealWorker::run_average_round, one replica per rank, averages by all-reduce) both carry out
// this description; only the clock and the transport are theirs. Plain C++: no tensors here.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "env/round_plan.hpp"
#include "env/sim/cluster.hpp"
#include "env/sim/epoch_data.hpp"

namespace env {

// A weighted average over `members` (ascending worker indices; weights sum to 1).
struct AverageGroup {
  std::vector<int> members;
  std::vector<double> weights;  // one per member

  // The worker's weight in this average, 0 for a worker outside it (a real rank then adds zeros).
  double weight_of(int worker) const;
  bool contains(int worker) const;
};

// a_i of FedNova for `steps` local steps of SGD with momentum `rho` (a fresh buffer: the replicas
// zero theirs at a FedNova round's start, WorkerReplicas::reset_momentum): the number of plain
// steps the momentum steps amount to. rho = 0 gives `steps`.
double fednova_effective_steps(int steps, double rho);

// The round's global model (Orchestra Eq. 2, and FedNova and the outer optimizer from the plan).
struct GlobalAverage : AverageGroup {
  std::vector<int> steps;  // each member's local steps this round (FedNova's tau_i)
  bool fednova = false;
  std::optional<OuterOptimizer> outer;

  // FedNova and the outer optimizer start from x_t, the global model as the round starts, which
  // must therefore be kept before the first local step.
  bool needs_round_start() const { return fednova || outer.has_value(); }
  // FedNova's a_i per member for the local optimizer's momentum `rho` ...
  std::vector<double> effective_steps(double rho) const;
  // ... and tau_eff = sum_i p_i a_i (Wang et al. 2020, Eq. 6), summed in member order.
  double tau_eff(double rho) const;
};

// Local steps [first, end) of every worker that has that many, then (unless it is the round's
// last chunk) an average inside every server among its workers that stepped in the chunk.
struct AveragingChunk {
  std::int64_t first = 0, end = 0;
  std::vector<AverageGroup> server_averages;  // in server order; each over the intra-server link
};

struct AveragingRound {
  std::vector<std::int64_t> steps;    // per worker: min(tau_i, batches left in its shard)
  std::vector<std::int64_t> samples;  // per worker: samples read this round (the last batch may be short)
  std::vector<AveragingChunk> chunks;  // one unless MLLSGD (server_average_every > 0); none without steps
  std::vector<int> took_part;          // the workers with at least one step, ascending
  // Over `took_part`, or every worker under AllWorkers (Orchestra Eq. 2 with N fixed: a worker
  // without steps adds the global model it holds); empty when nobody stepped.
  GlobalAverage global;
  bool hierarchical = false;  // MLLSGD: the global all-reduce runs inside servers, then across them
};

// The round `plan` describes on `cluster` with the shards of `data` as they stand (the epoch open).
AveragingRound describe_averaging_round(const RoundPlan& plan, const ClusterSpec& cluster, const EpochData& data);

}  // namespace env
