// `orchestra surrogate log`: rounds of real training (env::LocalSgdEnv: the exact timing simulation
// with libtorch replicas) logged one row per round, the data the surrogate of training
// (env/surrogate/) is fitted on. Each episode draws a cluster from the training config's
// distribution (as the RL environment does at reset), starts Orchestra's controller on it (LCM's T*,
// tau_n = floor(T / t_b^n), speed-proportional shards, the config's averaging) and then follows a
// barrier schedule drawn from the episode's seed:
//   static: one T for the whole episode, drawn log-uniformly over [min(T*/8, t_max), max(32 T*,
//           64 t_max)] (t_max: the slowest probed batch time), which covers the controller's bounds
//           and `orchestra evaluate`'s sweep (t_max ... 64 t_max);
//   walk:   T starts at T* times a log-uniform factor in [1/4, 16] (the training's exploring start)
//           and before every round moves by one action (x2 or /2, the config's move) with a
//           probability drawn per episode in [0.02, 0.3], within the controller's bounds: what a
//           learning controller does while it explores.
// The global model is evaluated on the test set after every round, so each row holds the test loss
// and accuracy before and after its round. An episode runs until the workload's epoch budget or
// `after_target_epochs` epochs past the first evaluation at the target, whichever comes first.
//
// Files, in DIR: task.json (the workload: data set, model, optimizer, sizes), log.json (the
// config, seed, target accuracy and schedule options the log was made with), and per chunk of
// `chunk` episodes rounds-<first>-<last>.csv and episodes-<first>-<last>.csv, each written
// atomically once the chunk is done. Episode k's seed is derive_seed(seed, k), so a chunk's files
// depend only on (config, seed, its episodes): a rerun skips the chunks already written (resuming
// a cut-off run), and two processes given disjoint episode ranges fill one folder.
#pragma once

#include <cstdint>
#include <string>

#include "experiments/runner/train_config.hpp"

namespace experiments {

struct RoundLogOptions {
  std::string out_dir;
  std::int64_t first_episode = 0;
  std::int64_t episodes = 100;
  std::uint64_t seed = 1;
  int chunk = 25;                    // episodes per file pair
  double static_share = 0.5;         // fraction of episodes with a static T (the rest walk)
  double after_target_epochs = 0.5;  // epochs run past the first evaluation at the target
  bool quiet = false;
};

struct RoundLogSummary {
  std::int64_t episodes_run = 0;     // this call (chunks already on disk are skipped)
  std::int64_t episodes_skipped = 0;
  std::int64_t rounds = 0;           // rows written by this call
  double seconds = 0;
};

// The CSV columns of rounds-*.csv, in order (the header line without its newline).
const std::string& round_log_header();

// Runs the episodes and writes the files. Throws common::ConfigError for a training config the
// logger cannot use (a toy environment, no experiment), common::DataError for missing data.
RoundLogSummary log_real_rounds(const TrainConfig& config, const RoundLogOptions& options);

}  // namespace experiments
