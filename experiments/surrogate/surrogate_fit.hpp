// `orchestra surrogate fit LOGS... --out surrogate.json`: the surrogate's forms (env/surrogate/
// surrogate_model.hpp) fitted to logged rounds of real training and judged on held-out episodes;
// the form that predicts them best is refitted on every episode and written out.
//
// The fit, per form:
//  1. the expected path: Levenberg-Marquardt on ln(surrogate loss / logged loss) after every round
//     of every training episode replayed through the model (surrogate_replay.hpp) from the untrained
//     loss, each episode weighted equally (its residuals scaled by 1 / sqrt(rounds)), so clusters
//     with hundreds of short rounds do not drown those with a few long ones, and the rounds near
//     the target (logged accuracy within [target - 0.06, target + 0.02]) `target_weight` times;
//  2. the noise, from the residuals of that path: the round's own noise (ProgressNoise: from the
//     one-round-ahead errors, sd of ln z = sqrt(ln(1 + sum e^2 / sum fresh^2)); SampleClock: the
//     sd and lag-1 correlation of the residuals), and the episode scale (the spread of episodes'
//     mean residuals beyond what their within-episode noise explains);
//  3. the accuracy: a cubic in ln L by least squares on the logged (loss, accuracy) pairs, its
//     residual sd and lag-1 correlation near the target (accuracy within 0.02 of it);
//  4. the training loss: the mean ln(logged / replayed) of the rounds' training losses (the gap),
//     and the sd of one step's from the rounds' spread times their step counts;
//  5. the round's own noise recalibrated on what it is for: fresh_sd set (bisection) so that the
//     median time to target of stochastic replays of the training episodes is unbiased against the
//     logged one; the residual estimate of step 2 also holds the path's own errors, too much noise,
//     which brings the first crossing of the target forward (measured: 20% early).
// Held out: every `holdout_every`-th episode of each log folder (by index). Judged there: the
// expected path's RMSE of ln L and of accuracy, and each episode's time to target, the median of
// `draws` stochastic replays against the logged one (relative error, and how many miss the target
// in one and not the other).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "env/surrogate/surrogate_model.hpp"
#include "experiments/surrogate/logged_episodes.hpp"

namespace experiments {

struct SurrogateFitOptions {
  std::vector<env::SurrogateForm> forms{env::SurrogateForm::ProgressNoise, env::SurrogateForm::SampleClock};
  int holdout_every = 5;
  int draws = 16;               // stochastic replays per held-out episode
  std::uint64_t seed = 1;       // of those draws
  int max_iterations = 60;      // Levenberg-Marquardt iterations per fit
  std::int64_t training_limit = 0;  // fit on at most this many of the training episodes (0: all), to measure how fits grow with data
  double target_weight = 3;     // weight of the rounds whose logged accuracy is within [target - 0.06, target + 0.02]
  bool quiet = false;           // progress lines on stderr otherwise
};

// How well a fitted model predicts a set of logged episodes.
struct FitQuality {
  std::int64_t episodes = 0;
  std::int64_t rounds = 0;
  double loss_rmse = 0;          // of ln L along the expected path, per round
  double accuracy_rmse = 0;      // of the expected accuracy, per round
  std::int64_t reached = 0;      // episodes whose logged run reached the target
  std::int64_t timed = 0;        // of those, the ones the surrogate's median reaches too
  double target_error = 0;       // mean |median surrogate time / logged time - 1| over those timed
  double target_log_bias = 0;    // mean ln(median surrogate time / logged time) over those
  std::int64_t miss_disagreements = 0;  // episodes where one reaches the target and the other (median) does not
  // Of the episodes whose logged run reached the target: the share whose logged time lies within
  // the draws' 10th-90th percentiles (about 0.8 when the surrogate's spread is the real one's).
  double target_coverage_80 = 0;
};

// How `surrogate fit` ranks its forms on the held-out episodes (smaller is better): the mean
// |relative error| of the time to target over every episode either side times, a miss
// disagreement counting as a 100% error, plus 1e-3 times the path's ln-loss RMSE to break ties.
double form_score(const FitQuality& holdout);

struct FormFit {
  env::SurrogateModel model;     // fitted on the training episodes
  FitQuality training;
  FitQuality holdout;
  int iterations = 0;
};

struct SurrogateFitResult {
  std::vector<FormFit> forms;    // in the order of options.forms
  env::SurrogateForm chosen = env::SurrogateForm::ProgressNoise;
  env::SurrogateModel model;     // the chosen form refitted on every episode
  nlohmann::json report;         // what the file's "fit" holds: data, per-form quality, the choice
};

// Fits one form on `episodes` (all of them).
env::SurrogateModel fit_form(env::SurrogateForm form, const RoundLogs& logs, const std::vector<const LoggedEpisode*>& episodes,
                             const SurrogateFitOptions& options, int* iterations = nullptr);

// The quality of `model` on `episodes` (draws seeded from options.seed).
FitQuality judge(const env::SurrogateModel& model, const RoundLogs& logs, const std::vector<const LoggedEpisode*>& episodes,
                 const SurrogateFitOptions& options);

// Everything above. Throws common::DataError for logs with too few episodes to hold some out.
SurrogateFitResult fit_surrogate(const RoundLogs& logs, const SurrogateFitOptions& options);

nlohmann::json quality_json(const FitQuality& quality);

// Whether a surrogate file (its parsed JSON) was fitted on one of the log `folders`: its fit record
// ("fit.logs", the folders as given then) names the same folder, compared as paths resolved from
// here. The fit refits the chosen form on every logged episode, held-out ones included, so judging
// it on those logs (`surrogate fit --judge`) is not out of sample. False where the file records
// no fit (a calibrated copy keeps its fit's record).
bool fitted_on_logs(const nlohmann::json& surrogate_document, const std::vector<std::string>& folders);

}  // namespace experiments
