// A distribution of heterogeneous clusters to train a barrier controller on (Orchestra 3.1.3: the
// agents "explore the different environments of different workers"): how many servers and workers,
// which GPUs (a list of time models, LBB Eq. 1, or ranges of coefficients), the network inside and
// between servers, the size of a synchronization message, step-time noise, and perturbations drawn
// at random (a worker slowed down for a while; a cyclic disturbance). An agent draws a fresh cluster
// for every episode from its own seed, so one network learns to act on all of them.
//
// Ranges are closed intervals drawn uniformly, or log-uniformly where a quantity spans orders of
// magnitude (bandwidth, latency, message size). Times of perturbations are given in units of the
// drawn cluster's own reference times, so that "a slowdown in the middle of training" means the same
// on a cluster whose epochs take seconds and on one whose epochs take minutes:
//   reference round = T* + C: LCM's barrier (3.1.1, utilization objective, M = 8, at most 64 local
//                     steps) on the nominal batch times at B / N, plus one all-reduce;
//   reference epoch = the rounds an epoch takes at T* (train samples / sum_n tau_n B_n) times that.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "env/sim/cluster.hpp"
#include "env/sim/network.hpp"

namespace orchestra {

struct Range {
  double lo = 0, hi = 0;
  bool log = false;  // log-uniform (lo > 0)
};

struct IntRange {
  int lo = 1, hi = 1;
};

// One kind of GPU: its batch-time model and the largest batch its memory holds.
struct GpuProfile {
  std::string name;
  std::vector<double> coefficients;  // LBB Eq. 1: ms = a0 + a1 B (+ a2 B^2 + a3 B^3)
  int max_batch = 1024;
};

struct ClusterDistribution {
  IntRange servers{1, 4};
  IntRange workers_per_server{1, 4};
  IntRange total_workers{2, 16};  // drawn again until the total is inside
  // Each server holds one kind of GPU drawn from `profiles` (servers are usually bought whole); with
  // probability mixed_servers every worker of a server draws its own. Empty profiles: every server
  // draws a0 and a1 from the ranges below instead.
  std::vector<GpuProfile> profiles;
  double mixed_servers = 0.0;
  // With this probability the whole cluster is one GPU kind with one speed_jitter draw: workers of
  // equal nominal speed (noise and perturbations stay per worker). LCM's T* is then its step cap
  // (no idle to trade), a case the other draws rarely give (3% within 5% of each other for
  // configs/a3c_surrogate_f4.yaml). 0 draws exactly what a distribution without it drew.
  double equal_workers = 0.0;
  Range a0_ms{5, 40, true};
  Range a1_ms{0.05, 1.0, true};
  int max_batch = 1024;               // for drawn (not listed) GPUs
  Range speed_jitter{1.0, 1.0};       // per worker: every coefficient times this (same-model GPUs differ a little)
  Range inter_gbps{1, 100, true};
  Range intra_gbps{16, 300, true};
  Range inter_latency_us{5, 100, true};
  Range intra_latency_us{1, 10, true};
  Range message_mb{10, 500, true};
  Range noise{0.01, 0.06};
  // A worker slowed down for a while: with this probability, one random worker, its steps times
  // `slowdown`, from `start` for `duration` (in reference epochs).
  double slowdown_probability = 0.5;
  Range slowdown{1.5, 4.0};
  Range slowdown_start{0.0, 1.0};
  Range slowdown_duration{0.2, 1.5};
  // A cyclic disturbance (LBB 4.4): with this probability, one random worker slowed by
  // `cyclic_slowdown` for half of every period of `cyclic_period` reference rounds, all along.
  double cyclic_probability = 0.2;
  Range cyclic_slowdown{1.5, 3.0};
  Range cyclic_period{2.0, 10.0};
};

struct DrawnCluster {
  env::ClusterSpec cluster;
  env::NetworkSpec network;
  double reference_round_s = 0;
  double reference_epoch_s = 0;
  // The two parts of the reference round: LCM's T* and the all-reduce C, in ms. Their ratio C / T*
  // says how communication-bound the cluster is at LCM's barrier, where the controller starts.
  double reference_barrier_ms = 0;
  double reference_comm_ms = 0;
};

// Throws std::invalid_argument naming the field for an empty or inverted range, a probability
// outside [0, 1], a log range that is not positive, or a profile without coefficients.
void validate(const ClusterDistribution& distribution);

// One cluster, deterministic in `seed`. `global_batch` and `train_samples` are the workload's
// (B_n = B / N, capped by each worker's max_batch; they set the reference times).
// One value drawn from `range` (uniformly, or log-uniformly with range.log) by a generator seeded
// with `seed`: the same draw the distribution makes for each of its ranges.
double draw_in(const Range& range, std::uint64_t seed);

DrawnCluster draw_cluster(const ClusterDistribution& distribution, std::uint64_t seed, int global_batch, std::int64_t train_samples);

}  // namespace orchestra
