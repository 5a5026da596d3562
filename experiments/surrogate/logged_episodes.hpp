// Rounds logged by `orchestra surrogate log` (round_log.hpp), read back as episodes: what the
// surrogate is fitted on and judged against.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "env/round_plan.hpp"
#include "env/surrogate/surrogate_task.hpp"

namespace experiments {

struct LoggedWorker {
  double steps = 0;
  double samples = 0;
};

struct LoggedRound {
  std::vector<LoggedWorker> workers;  // every worker, in cluster order (steps 0: not in the round)
  env::AverageWeighting weighting = env::AverageWeighting::Uniform;
  double lr = 0;
  double clock_ms = 0;        // at the round's end
  double progress = 0;        // epochs done after it (fractional)
  double loss = 0;            // the global model's test loss after the round
  double accuracy = 0;
  double train_loss = 0;      // the round's mean training loss
  bool epoch_end = false;
};

struct LoggedEpisode {
  std::string source;         // the log folder
  std::int64_t id = 0;        // the episode's index in it
  bool static_barrier = false;
  double initial_loss = 0;    // before the first round
  double initial_accuracy = 0;
  std::vector<LoggedRound> rounds;
};

struct RoundLogs {
  env::SurrogateTask task;
  double target_accuracy = 0;
  std::vector<std::string> folders;
  std::vector<LoggedEpisode> episodes;  // by folder, then episode index
  std::int64_t rounds() const;
};

// Reads every rounds-*.csv and episodes-*.csv of each folder. Throws common::DataError naming the
// file (and line) for a folder without logs, a malformed row, or folders of different tasks or
// targets.
RoundLogs read_round_logs(const std::vector<std::string>& folders);

}  // namespace experiments
