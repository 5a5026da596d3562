// The `clusters:` section of a training config (orchestra train): the distribution each agent
// draws a fresh cluster from for every episode (orchestra/cluster_distribution.hpp). Every key is
// optional; a range is [lo, hi] or one number (a fixed value), and the defaults are the struct's.
//
//   clusters:
//     servers: [1, 4]                 workers_per_server: [1, 4]      total_workers: [2, 16]
//     gpus:                           # each server draws one of these (or, with mixed_servers: p,
//       - {name: t4, time_model: {coefficients: [20, 0.525]}, max_batch: 384}   # each worker)
//     mixed_servers: 0.2
//     equal_workers: 0.25             # the whole cluster one GPU kind, one speed_jitter draw
//     a0_ms: [5, 40]   a1_ms: [0.05, 1.0]   max_batch: 1024   # drawn GPUs when gpus: is absent (log-uniform)
//     speed_jitter: [0.9, 1.1]        # per worker, times every coefficient
//     inter_bandwidth_gbps: [1, 100]  intra_bandwidth_gbps: [16, 300]          # log-uniform
//     inter_latency_us: [5, 100]      intra_latency_us: [1, 10]                # log-uniform
//     message_mb: [10, 500]           # log-uniform
//     noise: [0.01, 0.06]
//     slowdown: {probability: 0.5, factor: [1.5, 4], start_epochs: [0, 1], duration_epochs: [0.2, 1.5]}
//     cyclic: {probability: 0.2, factor: [1.5, 3], period_rounds: [2, 10]}
#pragma once

#include "common/yaml_reader.hpp"
#include "orchestra/cluster_distribution.hpp"

namespace experiments {

// Reads the mapping `r` holds; errors name file:line and the key (common::ConfigError).
orchestra::ClusterDistribution read_cluster_distribution(common::YamlReader r);

// `key: [lo, hi]` or `key: x` (lo = hi = x), each within [min, max]; fallback when the key is
// absent. With fallback.log the values must be > 0. Errors name file:line and the key.
orchestra::Range read_range(common::YamlReader& r, const std::string& key, orchestra::Range fallback, double min, double max);

}  // namespace experiments
