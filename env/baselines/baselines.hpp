// The baseline policies: DSGD (SSGD with equal batches), Local SGD (period H), MLLSGD (two-level
// averaging) and OSA (one-shot averaging at the end of each epoch).
#pragma once

#include "env/barrier_policy.hpp"
#include "common/errors.hpp"

namespace env {

// Equal local batches B/N (the remainder to the first workers), gradients all-reduced every step.
class DsgdPolicy : public BarrierPolicy {
 public:
  void start(const ClusterView& cluster) override;
  RoundPlan plan(const PlanContext& context) override;

 private:
  RoundPlan plan_;
};

struct LocalSgdOptions {
  int batch = 0;            // local batch per worker; 0 = global_batch / N
  int period = 8;           // H: local steps between averages
  AverageWeighting weighting = AverageWeighting::Uniform;  // Orchestra Eq. 2: 1/N
};

// Local SGD (Orchestra Sec. 2): every worker takes H local steps, then all models are averaged.
class LocalSgdPolicy : public BarrierPolicy {
 public:
  explicit LocalSgdPolicy(LocalSgdOptions options) : options_(options) {}
  void start(const ClusterView& cluster) override;
  RoundPlan plan(const PlanContext& context) override;

 private:
  LocalSgdOptions options_;
  RoundPlan plan_;
};

struct MllsgdOptions {
  int batch = 0;         // 0 = global_batch / N
  int server_period = 4;  // H1: local steps between averages inside a server
  int global_period = 16; // H2: local steps between averages across servers (a multiple of H1)
};

// Multi-Level Local SGD (Castiglia et al., Orchestra baseline 3): average inside each server over
// the fast link every H1 steps, across servers every H2 steps.
class MllsgdPolicy : public BarrierPolicy {
 public:
  explicit MllsgdPolicy(MllsgdOptions options) : options_(options) {}
  void start(const ClusterView& cluster) override;
  RoundPlan plan(const PlanContext& context) override;

 private:
  MllsgdOptions options_;
  RoundPlan plan_;
};

// One-shot averaging (LBB Fig. 4's OSA): each worker trains through its whole shard, then one
// average at the end of the epoch.
class OsaPolicy : public BarrierPolicy {
 public:
  explicit OsaPolicy(int batch) : batch_(batch) {}
  void start(const ClusterView& cluster) override;
  RoundPlan plan(const PlanContext& context) override;

 private:
  int batch_;
  RoundPlan plan_;
};

// Model averaging after `steps` local steps of `batch` samples each (0: B/N); throws
// common::PlanError if a batch exceeds a worker's max_batch.
RoundPlan averaging_plan(const ClusterView& cluster, int batch, int steps);

// B/N for each worker, the remainder to the first ones; throws common::PlanError if a share exceeds
// a worker's max_batch.
std::vector<int> equal_split(const ClusterView& cluster, int total);

}  // namespace env
