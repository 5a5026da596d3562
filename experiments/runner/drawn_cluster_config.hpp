// Clusters drawn from a training config's distribution (`clusters:`, orchestra/cluster_distribution.hpp),
// written out as ordinary experiment configs: the workload of the training's first experiment (data,
// model, training, budget, policies) on the drawn servers, GPUs, network and perturbations.
//
// What it is for: validation clusters. A policy trained on a distribution is chosen among its
// snapshots, or a training recipe compared with another, on clusters drawn from that same
// distribution with seeds of their own, and `orchestra evaluate` runs on the files as on any
// config. The held-out suite (configs/heldout/) stays for the final judgement only: choosing on it
// would be choosing on the test set. A researcher can also read the files to see what the agents
// trained on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/runner/train_config.hpp"
#include "orchestra/cluster_distribution.hpp"

namespace experiments {

struct DrawnClusterConfig {
  std::string name;   // drawn-<seed>
  std::uint64_t seed = 0;
  orchestra::DrawnCluster cluster;
  std::string yaml;   // a complete experiment config (loads with load_config)
};

// Which drawn clusters to keep. A stratum of the distribution, for validation sets that must hold
// cases the plain draw rarely gives: communication-bound clusters (an all-reduce many times LCM's
// T*, where the best barrier is often 2-9 times the controller's start) are a few percent of the
// a3c_general distribution, so 12 plain draws may hold none, and snapshots chosen on them are never
// asked to raise T.
struct DrawFilter {
  // Keep a cluster only if its all-reduce takes at least this many times LCM's T*, both nominal
  // (DrawnCluster::reference_comm_ms / reference_barrier_ms). 0 keeps every cluster.
  double min_comm_over_barrier = 0;
  // Seeds tried per cluster asked for before giving up with a clear error.
  int max_tries_per_cluster = 10000;
};

// How every config draw_cluster_configs writes begins: `orchestra draw` replaces only such a file.
inline constexpr const char* kDrawnConfigMarker = "# A cluster drawn from the distribution of ";

// `count` clusters drawn with seeds first_seed, first_seed + 1, ...; the same seeds give the same
// files. With a filter, seeds whose cluster it rejects are skipped (a kept cluster is still
// drawn-<its seed>, the same file the unfiltered draw writes for that seed). The workload is
// config.experiments.front(); its cluster and network are replaced (the drawn times depend on its
// global batch and training-set size, as in the training environment). Throws common::ConfigError
// when the config has no `clusters:` distribution, or when the filter keeps fewer than `count`
// clusters within count * max_tries_per_cluster seeds.
std::vector<DrawnClusterConfig> draw_cluster_configs(const TrainConfig& config, std::uint64_t first_seed, int count,
                                                     const DrawFilter& filter = {});

// The experiment config of one drawn cluster on the workload in `workload_path`. Numbers are
// written so that they read back to the same doubles (shortest round-trip form); link bandwidths
// and latencies are converted to the config's units (Gbit/s, microseconds), exact to rounding.
std::string drawn_cluster_yaml(const orchestra::DrawnCluster& drawn, const std::string& workload_path, const std::string& name,
                               const std::string& provenance);

}  // namespace experiments
