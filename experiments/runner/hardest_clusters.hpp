// The clusters where a barrier policy trails the hindsight-best static barrier the most, and the
// file that hands them to training. Genet (Xia et al., SIGCOMM 2022, Sec. 4) found that an RL
// policy trained on environments drawn uniformly generalizes poorly, and trains instead, stage
// after stage, on the environments where the current policy's gap to a rule-based baseline is
// largest. Here the baseline is the best of a static-T sweep on the same episode (what
// `orchestra evaluate` calls the oracle), so the gap is the policy's time over the oracle's:
// `orchestra surrogate hardest` draws candidates from a training config's distribution, runs the
// policy (greedy, as deployed) and the sweep on each, and writes the hardest as focus clusters,
// which a training config reads with `focus: {files: [...], share: S}` (train_config.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agents/policy_file.hpp"
#include "experiments/runner/train_config.hpp"

namespace experiments {

struct HardestSearchOptions {
  int candidates = 256;     // clusters drawn from the training config's distribution
  int keep = 32;            // the hardest written
  std::uint64_t seed = 1;   // candidate i runs episode orchestra::episode_seed(seed, i)
};

// One candidate: the policy's episode against the static sweep's on the same seed.
struct ClusterGap {
  std::uint64_t episode_seed = 0;
  std::uint64_t draw_seed = 0;     // orchestra::cluster_draw_seed's: what a focus entry names
  int workers = 0;
  double policy_s = 0;             // the policy's time to the target (its episode's end where it missed)
  bool policy_reached = false;
  double best_static_s = 0;        // the fastest static T's time to the target
  double best_static_x_start = 0;  // that T as a factor of LCM's T*
  double gap = 0;                  // policy_s / best_static_s (a lower bound where the policy missed)
};

struct HardestSearchResult {
  std::vector<ClusterGap> clusters;  // every comparable candidate, hardest first: misses, then by gap
  int candidates = 0;
  int incomparable = 0;              // no static T reached the target there: left out
  int policy_misses = 0;
  double geomean_gap = 0;            // over the comparable candidates
  std::vector<double> sweep_x_start; // the static T's, as factors of T*
};

// Runs candidates x (1 + sweep) episodes of `config`'s environment (agent 0's experiment for
// candidate 0, experiments[i mod n] for candidate i), one after the other. The config needs a
// cluster distribution and `policy` the config's controller (its moves, bounds and state); throws
// std::invalid_argument naming what differs otherwise.
HardestSearchResult find_hardest_clusters(const TrainConfig& config, agents::A3cPolicy policy, const HardestSearchOptions& options);

// What every focus-clusters file holds (its format), and so may be replaced by another.
inline constexpr const char* kFocusClustersSignature = "\"format\": \"orchestra-focus-clusters\"";

// The first `keep` clusters of `result` as a focus-clusters file (JSON, written atomically), with
// what made it (policy, config, seed, candidates, the gap over all of them).
void write_focus_clusters(const std::string& path, const HardestSearchResult& result, int keep, const std::string& policy_path,
                          const std::string& config_path, std::uint64_t seed);

// The draw seeds of a focus-clusters file; common::DataError naming the file for a missing or
// malformed one.
std::vector<std::uint64_t> read_focus_draws(const std::string& path);

}  // namespace experiments
