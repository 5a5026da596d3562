// A logged episode's rounds replayed through a surrogate: the same local steps, batches and averages
// in the same order (the schedule is taken from the log, not decided again), so the surrogate's loss
// and accuracy can be set against what real training did round by round. The fit's residuals
// (surrogate_fit.hpp) and its held-out judgement both come from here.
#pragma once

#include <optional>
#include <vector>

#include "env/surrogate/surrogate_model.hpp"
#include "experiments/surrogate/logged_episodes.hpp"

namespace experiments {

struct ReplayTrace {
  double initial_loss = 0;
  std::vector<double> loss;        // the global model's test loss after each round
  std::vector<double> accuracy;    // its mean accuracy (no residual)
  std::vector<double> train_loss;  // the round's mean training loss (without the gap)
  std::vector<double> fresh;       // the round's own noise (before z): ProgressNoise's fresh part
  std::vector<int> steps;          // local steps in the round, over all workers
};

enum class ReplayMode {
  Mean,      // z = 1, no residuals, no episode scale: the model's expected path
  Filtered,  // as Mean, but each round starts from the noise the logged loss implies (L - F(p)):
             // the one-round-ahead prediction, whose errors measure the round's own noise
};

// `task_lr` turns the logged lr into the learning-rate factor.
ReplayTrace replay_mean(const env::SurrogateDynamics& dynamics, const LoggedEpisode& episode, double task_lr, ReplayMode mode);

// One draw of the whole stochastic surrogate along the logged schedule: the clock (ms) of the first
// round whose accuracy reaches `target`, or nullopt when none does within the logged rounds.
std::optional<double> replay_time_to_target(const env::SurrogateDynamics& dynamics, const LoggedEpisode& episode, double task_lr,
                                            double target, env::SurrogateRng& rng);

// One row per logged round: the episode, the round, what it did (workers, members, mean steps,
// batch, progress) and the logged loss and accuracy beside the model's expected path.
std::string replayed_paths_csv(const env::SurrogateModel& model, const RoundLogs& logs, const std::vector<const LoggedEpisode*>& episodes);
inline constexpr const char* kReplayedPathsHeader = "source,episode,static,round,";  // how replayed_paths_csv begins

// The logged episode's own: the clock of its first round at the target, or nullopt.
std::optional<double> logged_time_to_target(const LoggedEpisode& episode, double target);

}  // namespace experiments
