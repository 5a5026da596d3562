#include "experiments/surrogate/surrogate_fit.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <numeric>

#include "common/errors.hpp"
#include "env/sim/cluster.hpp"
#include "experiments/surrogate/levenberg_marquardt.hpp"
#include "experiments/surrogate/surrogate_replay.hpp"

namespace experiments {
namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::uint64_t folder_index(const RoundLogs& logs, const std::string& folder) {
  return static_cast<std::uint64_t>(std::find(logs.folders.begin(), logs.folders.end(), folder) - logs.folders.begin());
}

// The median over `draws` stochastic replays of the episode's time to target (infinity: missed),
// the draws seeded from (seed, episode) so that two models are compared on the same random numbers.
std::vector<double> times_to_target(const env::SurrogateDynamics& dynamics, const RoundLogs& logs, const LoggedEpisode& e, int draws,
                                    std::uint64_t seed) {
  std::vector<double> times;
  env::SurrogateRng rng(env::derive_seed(seed, static_cast<std::uint64_t>(e.id) * 131 + folder_index(logs, e.source)));
  for (int d = 0; d < draws; ++d) {
    const auto t = replay_time_to_target(dynamics, e, logs.task.lr, logs.target_accuracy, rng);
    times.push_back(t ? *t : std::numeric_limits<double>::infinity());
  }
  std::sort(times.begin(), times.end());
  return times;
}

double median_time_to_target(const env::SurrogateDynamics& dynamics, const RoundLogs& logs, const LoggedEpisode& e, int draws,
                             std::uint64_t seed) {
  const std::vector<double> times = times_to_target(dynamics, logs, e, draws, seed);
  return times.empty() ? std::numeric_limits<double>::infinity() : times[times.size() / 2];
}

// Mean ln(median surrogate time / logged time) over the episodes where both reach the target.
double target_log_bias(const env::SurrogateModel& model, const RoundLogs& logs, const std::vector<const LoggedEpisode*>& episodes,
                       int draws, std::uint64_t seed) {
  const env::SurrogateDynamics dynamics(model);
  double sum = 0;
  int n = 0;
  for (const LoggedEpisode* e : episodes) {
    const auto logged = logged_time_to_target(*e, logs.target_accuracy);
    if (!logged || *logged <= 0) continue;
    const double median = median_time_to_target(dynamics, logs, *e, draws, seed);
    if (!std::isfinite(median) || median <= 0) continue;
    sum += std::log(median / *logged);
    ++n;
  }
  return n > 0 ? sum / n : 0.0;
}

// The round's own noise (fresh_sd) set so that the median time to target of the training episodes
// is unbiased: noise brings the first crossing of the target forward, so too little of it makes
// the surrogate late and too much early, and the residual estimate (`estimate`, which also holds
// the expected path's own errors) errs on the side of too much. Bisection on the bias, which falls
// as fresh_sd grows, on the same random numbers throughout.
void calibrate_round_noise(env::SurrogateModel& m, const RoundLogs& logs, const std::vector<const LoggedEpisode*>& episodes,
                           std::uint64_t seed) {
  constexpr int kDraws = 8;
  const double estimate = m.noise.fresh_sd;
  const auto bias_at = [&](double sd) {
    env::SurrogateModel trial = m;
    trial.noise.fresh_sd = sd;
    return target_log_bias(trial, logs, episodes, kDraws, seed);
  };
  if (bias_at(0.0) <= 0) {
    m.noise.fresh_sd = 0;
    return;
  }
  double lo = 0, hi = std::max(estimate, 0.05);
  while (bias_at(hi) > 0 && hi < 4) {
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < 12; ++i) {
    const double mid = 0.5 * (lo + hi);
    (bias_at(mid) > 0 ? lo : hi) = mid;
  }
  m.noise.fresh_sd = 0.5 * (lo + hi);
}
double logit(double p) { return std::log(p / (1.0 - p)); }

// The fitted parameters of a form as an unconstrained vector: scales and rates as logs, shares as
// logits, exponents as they are.
std::vector<double> start_of(env::SurrogateForm form) {
  // A start near where fits on the controller task's logs ended (any reasonable start converges, k
  // to a rate that sheds the barrier within a step or two).
  std::vector<double> theta = {std::log(2.3), logit(0.15), std::log(10.0), std::log(1.0), -0.4, std::log(85.0), std::log(2.8), 1.7};
  if (form == env::SurrogateForm::ProgressNoise)
    for (double x : {std::log(0.12), std::log(0.17), 0.75, logit(0.15), std::log(0.1), std::log(50.0), std::log(1.5), std::log(5.0)}) theta.push_back(x);
  return theta;
}

// exp(x), kept finite: a parameter that small data do not pin down (a tiny log, a flat direction)
// may drift far, and the model must still validate.
double positive(double x) { return std::exp(std::clamp(x, -30.0, 30.0)); }

env::SurrogateModel model_of(env::SurrogateForm form, const std::vector<double>& t, const env::SurrogateModel& base) {
  env::SurrogateModel m = base;
  m.form = form;
  m.curve.initial = positive(t[0]);
  m.curve.floor = m.curve.initial * sigmoid(t[1]);
  m.curve.scale = positive(t[2]);
  m.curve.exponent = positive(t[3]);
  m.progress.batch_exponent = t[4];
  m.progress.drift_scale = positive(t[5]);
  m.progress.drift_exponent = positive(t[6]);
  m.progress.drift_batch_exponent = t[7];
  if (form == env::SurrogateForm::ProgressNoise) {
    m.noise.relaxation = positive(t[8]);
    m.noise.level = positive(t[9]);
    m.noise.batch_exponent = t[10];
    m.noise.unrecovered = sigmoid(t[11]);
    m.noise.divergence = positive(t[12]);
    m.noise.divergence_scale = positive(t[13]);
    m.noise.divergence_exponent = positive(t[14]);
    // k in [e^-5, e^7]: the logged rounds push it up without bound, since a barrier shed within a
    // step fits them as well as one shed faster still (from a start of 1 the fit ends at the cap,
    // from 5 at k = 27, 88% shed in a step; BENCHMARKS, "The surrogate's tilt").
    m.noise.penalty_speedup = std::exp(std::clamp(t[15], -5.0, 7.0));
  } else {
    m.noise.level = 0;
  }
  return m;
}

// A model with every parameter the path does not use set to a neutral value, for the path's fit.
env::SurrogateModel base_model(const RoundLogs& logs) {
  env::SurrogateModel m;
  m.task = logs.task;
  m.progress.reference_batch = 64;
  m.accuracy.coefficients = {0.0};
  return m;
}

double mean_of(const std::vector<double>& x) { return x.empty() ? 0.0 : std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size()); }

// Least squares polynomial of degree `degree` through (x, y) (normal equations; the few columns are
// well scaled over ln L in [-1.5, 1]).
std::vector<double> polynomial_fit(const std::vector<double>& x, const std::vector<double>& y, int degree) {
  const std::size_t n = static_cast<std::size_t>(degree) + 1;
  std::vector<double> a(n * n, 0.0), b(n, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::vector<double> p(n, 1.0);
    for (std::size_t k = 1; k < n; ++k) p[k] = p[k - 1] * x[i];
    for (std::size_t r = 0; r < n; ++r) {
      b[r] += p[r] * y[i];
      for (std::size_t c = 0; c < n; ++c) a[r * n + c] += p[r] * p[c];
    }
  }
  // Gaussian elimination with partial pivoting.
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < n; ++r)
      if (std::fabs(a[r * n + col]) > std::fabs(a[pivot * n + col])) pivot = r;
    for (std::size_t c = 0; c < n; ++c) std::swap(a[col * n + c], a[pivot * n + c]);
    std::swap(b[col], b[pivot]);
    for (std::size_t r = col + 1; r < n; ++r) {
      const double f = a[r * n + col] / a[col * n + col];
      for (std::size_t c = col; c < n; ++c) a[r * n + c] -= f * a[col * n + c];
      b[r] -= f * b[col];
    }
  }
  std::vector<double> coefficients(n);
  for (std::size_t r = n; r-- > 0;) {
    double s = b[r];
    for (std::size_t c = r + 1; c < n; ++c) s -= a[r * n + c] * coefficients[c];
    coefficients[r] = s / a[r * n + r];
  }
  return coefficients;
}

// Lag-1 correlation of residual series (one per episode), pooled.
double lag_one_correlation(const std::vector<std::vector<double>>& series) {
  double sxy = 0, sxx = 0, syy = 0;
  for (const auto& s : series)
    for (std::size_t t = 1; t < s.size(); ++t) {
      sxy += s[t - 1] * s[t];
      sxx += s[t - 1] * s[t - 1];
      syy += s[t] * s[t];
    }
  return sxx > 0 && syy > 0 ? std::clamp(sxy / std::sqrt(sxx * syy), -0.95, 0.95) : 0.0;
}

void fit_noise(env::SurrogateModel& m, const RoundLogs& logs, const std::vector<const LoggedEpisode*>& episodes) {
  const env::SurrogateDynamics dynamics(m);
  const double lr = logs.task.lr;
  // Residuals of ln L along the expected path, per episode (after its first 0.2 epochs: the scale
  // of an episode is about where it levels off, not the first fast rounds).
  std::vector<std::vector<double>> residuals;
  std::vector<double> episode_means, within;
  for (const LoggedEpisode* e : episodes) {
    const ReplayTrace trace = replay_mean(dynamics, *e, lr, ReplayMode::Mean);
    std::vector<double> r;
    for (std::size_t t = 0; t < e->rounds.size(); ++t)
      if (e->rounds[t].progress >= 0.2) r.push_back(std::log(e->rounds[t].loss / trace.loss[t]));
    if (r.size() < 3) continue;
    const double mean = mean_of(r);
    double var = 0;
    for (double x : r) var += (x - mean) * (x - mean);
    episode_means.push_back(mean);
    within.push_back(var / static_cast<double>(r.size() - 1) / static_cast<double>(r.size()));
    for (double& x : r) x -= mean;
    residuals.push_back(std::move(r));
  }
  const double phi = lag_one_correlation(residuals);
  double between = 0;
  if (episode_means.size() > 2) {
    const double mean = mean_of(episode_means);
    for (double x : episode_means) between += (x - mean) * (x - mean);
    between /= static_cast<double>(episode_means.size() - 1);
    between -= mean_of(within) * (1 + phi) / (1 - phi);  // what autocorrelated within-episode noise alone gives
  }
  m.noise.episode_sd = std::min(std::sqrt(std::max(between, 0.0)), 0.5);

  if (m.form == env::SurrogateForm::SampleClock) {
    double ss = 0;
    std::int64_t n = 0;
    for (const auto& r : residuals)
      for (double x : r) {
        ss += x * x;
        ++n;
      }
    m.noise.fresh_sd = n > 0 ? std::sqrt(ss / static_cast<double>(n)) : 0.0;
    m.noise.observation_correlation = phi;
    return;
  }
  // ProgressNoise: one-round-ahead errors against the round's own noise.
  double errors = 0, fresh = 0;
  for (const LoggedEpisode* e : episodes) {
    const ReplayTrace trace = replay_mean(dynamics, *e, lr, ReplayMode::Filtered);
    for (std::size_t t = 0; t < e->rounds.size(); ++t) {
      if (e->rounds[t].progress < 0.2) continue;
      const double error = e->rounds[t].loss - trace.loss[t];
      errors += error * error;
      fresh += trace.fresh[t] * trace.fresh[t];
    }
  }
  m.noise.fresh_sd = fresh > 0 ? std::min(std::sqrt(std::log1p(errors / fresh)), 2.0) : 0.0;
}

void fit_accuracy(env::SurrogateModel& m, const RoundLogs& logs, const std::vector<const LoggedEpisode*>& episodes) {
  std::vector<double> x, y;
  for (const LoggedEpisode* e : episodes) {
    x.push_back(std::log(e->initial_loss));
    y.push_back(e->initial_accuracy);
    for (const LoggedRound& r : e->rounds) {
      x.push_back(std::log(r.loss));
      y.push_back(r.accuracy);
    }
  }
  m.accuracy.coefficients = polynomial_fit(x, y, 3);
  m.accuracy.log_loss_min = *std::min_element(x.begin(), x.end());
  m.accuracy.log_loss_max = *std::max_element(x.begin(), x.end());
  // The residual where it decides the time to target: at most 2 points from it (it is larger lower
  // down the curve, 0.007 over [target - 0.1, target + 0.02] against 0.004 here, measured, and too
  // large a residual brings the first crossing forward).
  std::vector<std::vector<double>> series;
  double ss = 0;
  std::int64_t n = 0;
  for (const LoggedEpisode* e : episodes) {
    std::vector<double> s;
    for (const LoggedRound& r : e->rounds)
      if (std::fabs(r.accuracy - logs.target_accuracy) <= 0.02) {
        const double residual = r.accuracy - m.accuracy.at(r.loss);
        s.push_back(residual);
        ss += residual * residual;
        ++n;
      }
    series.push_back(std::move(s));
  }
  m.accuracy.residual_sd = n > 1 ? std::sqrt(ss / static_cast<double>(n)) : 0.0;
  m.accuracy.residual_correlation = lag_one_correlation(series);
}

void fit_train_loss(env::SurrogateModel& m, const RoundLogs& logs, const std::vector<const LoggedEpisode*>& episodes) {
  const env::SurrogateDynamics dynamics(m);
  // The gap: against the model's own path, so that its training losses are unbiased where it goes.
  std::vector<double> gap;
  // The step noise: against the logged test losses (so the model's path errors stay out of it):
  // Var(ln T) = var_model + step_sd^2 / steps, a line in 1 / steps.
  double s1 = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const LoggedEpisode* e : episodes) {
    const ReplayTrace trace = replay_mean(dynamics, *e, logs.task.lr, ReplayMode::Mean);
    double before = e->initial_loss;
    std::vector<double> r;
    for (std::size_t t = 0; t < e->rounds.size(); ++t) {
      const LoggedRound& round = e->rounds[t];
      if (round.train_loss > 0 && trace.train_loss[t] > 0 && trace.steps[t] > 0) {
        gap.push_back(std::log(round.train_loss / trace.train_loss[t]));
        r.push_back(std::log(round.train_loss / (0.5 * (before + round.loss))));
      }
      before = round.loss;
    }
    const double mean = mean_of(r);
    std::size_t k = 0;
    for (std::size_t t = 0; t < e->rounds.size(); ++t) {
      if (!(e->rounds[t].train_loss > 0 && trace.train_loss[t] > 0 && trace.steps[t] > 0)) continue;
      const double x = 1.0 / trace.steps[t], y = (r[k] - mean) * (r[k] - mean);
      ++k;
      s1 += 1;
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
    }
  }
  m.train_loss.log_gap = mean_of(gap);
  const double denominator = s1 * sxx - sx * sx;
  const double slope = denominator > 0 ? (s1 * sxy - sx * sy) / denominator : 0.0;
  m.train_loss.step_sd = std::min(std::sqrt(std::max(slope, 0.0)), 2.0);
}


std::vector<const LoggedEpisode*> all_of(const RoundLogs& logs) {
  std::vector<const LoggedEpisode*> out;
  for (const auto& e : logs.episodes) out.push_back(&e);
  return out;
}

}  // namespace

nlohmann::json quality_json(const FitQuality& q) {
  return {{"episodes", q.episodes},
          {"rounds", q.rounds},
          {"loss_rmse_log", q.loss_rmse},
          {"accuracy_rmse", q.accuracy_rmse},
          {"episodes_at_target", q.reached},
          {"time_to_target_mean_abs_rel_error", q.target_error},
          {"time_to_target_mean_log_ratio", q.target_log_bias},
          {"target_miss_disagreements", q.miss_disagreements},
          {"time_to_target_within_draws_10_90", q.target_coverage_80}};
}

env::SurrogateModel fit_form(env::SurrogateForm form, const RoundLogs& logs, const std::vector<const LoggedEpisode*>& episodes,
                             const SurrogateFitOptions& options, int* iterations) {
  if (episodes.empty()) throw common::DataError("surrogate fit: no episodes to fit on");
  const env::SurrogateModel base = base_model(logs);
  const double lr = logs.task.lr;
  const Residuals residuals = [&](const std::vector<double>& theta) {
    const env::SurrogateModel model = model_of(form, theta, base);
    const env::SurrogateDynamics dynamics(model);
    std::vector<double> r;
    for (const LoggedEpisode* e : episodes) {
      const ReplayTrace trace = replay_mean(dynamics, *e, lr, ReplayMode::Mean);
      const double w = 1.0 / std::sqrt(static_cast<double>(e->rounds.size() + 1));
      r.push_back(w * std::log(trace.initial_loss / e->initial_loss));
      for (std::size_t t = 0; t < e->rounds.size(); ++t) {
        // The rounds near the target decide the time to it: they count `options.target_weight` times.
        const double a = e->rounds[t].accuracy, target = logs.target_accuracy;
        const double near = a >= target - 0.06 && a <= target + 0.02 ? std::sqrt(options.target_weight) : 1.0;
        r.push_back(w * near * std::log(trace.loss[t] / e->rounds[t].loss));
      }
    }
    return r;
  };
  LeastSquaresOptions lm;
  lm.max_iterations = options.max_iterations;
  const LeastSquaresResult solved = levenberg_marquardt(residuals, start_of(form), lm);
  if (iterations) *iterations = solved.iterations;
  env::SurrogateModel model = model_of(form, solved.parameters, base);
  fit_noise(model, logs, episodes);
  fit_accuracy(model, logs, episodes);
  fit_train_loss(model, logs, episodes);
  calibrate_round_noise(model, logs, episodes, env::derive_seed(options.seed, 5));
  env::validate(model);
  return model;
}

FitQuality judge(const env::SurrogateModel& model, const RoundLogs& logs, const std::vector<const LoggedEpisode*>& episodes,
                 const SurrogateFitOptions& options) {
  const env::SurrogateDynamics dynamics(model);
  FitQuality q;
  double loss_ss = 0, acc_ss = 0, error_sum = 0, log_sum = 0;
  std::int64_t misses_of_reached = 0;
  for (const LoggedEpisode* e : episodes) {
    ++q.episodes;
    const ReplayTrace trace = replay_mean(dynamics, *e, logs.task.lr, ReplayMode::Mean);
    for (std::size_t t = 0; t < e->rounds.size(); ++t) {
      const double dl = std::log(trace.loss[t] / e->rounds[t].loss), da = trace.accuracy[t] - e->rounds[t].accuracy;
      loss_ss += dl * dl;
      acc_ss += da * da;
      ++q.rounds;
    }
    const std::vector<double> times = times_to_target(dynamics, logs, *e, options.draws, options.seed);
    const double median = times.empty() ? std::numeric_limits<double>::infinity() : times[times.size() / 2];
    const auto logged = logged_time_to_target(*e, logs.target_accuracy);
    if (logged && *logged > 0) {
      ++q.reached;
      const std::size_t n = times.size();
      if (n > 0 && times[n / 10] <= *logged && *logged <= times[std::min(n - 1, n * 9 / 10)]) q.target_coverage_80 += 1;
      if (std::isfinite(median) && median > 0) {
        error_sum += std::fabs(median / *logged - 1.0);
        log_sum += std::log(median / *logged);
      } else {
        ++q.miss_disagreements;
        ++misses_of_reached;
      }
    } else if (!logged && std::isfinite(median)) {
      ++q.miss_disagreements;
    }
  }
  if (q.rounds > 0) {
    q.loss_rmse = std::sqrt(loss_ss / static_cast<double>(q.rounds));
    q.accuracy_rmse = std::sqrt(acc_ss / static_cast<double>(q.rounds));
  }
  if (q.reached > 0) q.target_coverage_80 /= static_cast<double>(q.reached);
  q.timed = q.reached - misses_of_reached;  // episodes with a time on both sides
  if (q.timed > 0) {
    q.target_error = error_sum / static_cast<double>(q.timed);
    q.target_log_bias = log_sum / static_cast<double>(q.timed);
  }
  return q;
}

double form_score(const FitQuality& q) {
  // target_error is a mean over the timed episodes only: scaled back by those, not by every
  // episode the logged run timed (that inflated the error sum by reached / timed, and a form that
  // missed half the targets could lose to one 58% off on every episode).
  const double timed = static_cast<double>(q.timed), disagreements = static_cast<double>(q.miss_disagreements);
  return (q.target_error * timed + disagreements) / std::max(1.0, timed + disagreements) + 1e-3 * q.loss_rmse;
}

SurrogateFitResult fit_surrogate(const RoundLogs& logs, const SurrogateFitOptions& options) {
  std::vector<const LoggedEpisode*> training, holdout;
  for (const auto& e : logs.episodes) (options.holdout_every > 0 && e.id % options.holdout_every == 0 ? holdout : training).push_back(&e);
  if (options.training_limit > 0 && static_cast<std::int64_t>(training.size()) > options.training_limit)
    training.resize(static_cast<std::size_t>(options.training_limit));
  if (training.size() < 5 || holdout.empty())
    throw common::DataError("surrogate fit: " + std::to_string(logs.episodes.size()) +
                            " logged episodes are too few to fit on some and judge on the others (log more)");
  SurrogateFitResult result;
  const auto say = [&](const std::string& line) {
    if (!options.quiet) std::fprintf(stderr, "surrogate fit: %s\n", line.c_str());
  };
  say(std::to_string(logs.episodes.size()) + " episodes, " + std::to_string(logs.rounds()) + " rounds; " +
      std::to_string(holdout.size()) + " held out");
  nlohmann::json forms = nlohmann::json::object();
  double best = std::numeric_limits<double>::infinity();
  for (env::SurrogateForm form : options.forms) {
    const auto start = std::chrono::steady_clock::now();
    FormFit fit;
    fit.model = fit_form(form, logs, training, options, &fit.iterations);
    fit.training = judge(fit.model, logs, training, options);
    fit.holdout = judge(fit.model, logs, holdout, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char line[256];
    std::snprintf(line, sizeof line, "%s: held out, ln-loss RMSE %.4f, accuracy RMSE %.4f, time to target %.1f%% off (%lld episodes, %lld disagree on a miss); %.0f s",
                  env::surrogate_form_name(form), fit.holdout.loss_rmse, fit.holdout.accuracy_rmse, 100 * fit.holdout.target_error,
                  static_cast<long long>(fit.holdout.reached), static_cast<long long>(fit.holdout.miss_disagreements), seconds);
    say(line);
    forms[env::surrogate_form_name(form)] = {{"training", quality_json(fit.training)}, {"holdout", quality_json(fit.holdout)},
                                             {"iterations", fit.iterations}};
    // The choice: time to target first (what the environment's reward and the fidelity goal are
    // about), a miss disagreement counting as a 100% error; the path's RMSE breaks ties.
    const double score = form_score(fit.holdout);
    if (score < best) {
      best = score;
      result.chosen = form;
    }
    result.forms.push_back(std::move(fit));
  }
  std::vector<const LoggedEpisode*> everything = all_of(logs);
  if (options.training_limit > 0) {  // the data-size study: the training episodes it was limited to, and the held-out ones
    everything = training;
    everything.insert(everything.end(), holdout.begin(), holdout.end());
  }
  say(std::string("chosen: ") + env::surrogate_form_name(result.chosen) + "; refitting it on " + std::to_string(everything.size()) + " episodes");
  result.model = fit_form(result.chosen, logs, everything, options);
  result.report = {{"logs", logs.folders},
                   {"episodes", logs.episodes.size()},
                   {"rounds", logs.rounds()},
                   {"target_accuracy", logs.target_accuracy},
                   {"holdout_every", options.holdout_every},
                   {"training_episodes", training.size()},
                   {"target_weight", options.target_weight},
                   {"draws", options.draws},
                   {"forms", forms},
                   {"chosen", env::surrogate_form_name(result.chosen)},
                   {"chosen_by", "held-out time to target (mean |relative error|, a miss disagreement counting 1)"}};
  return result;
}

bool fitted_on_logs(const nlohmann::json& surrogate_document, const std::vector<std::string>& folders) {
  if (!surrogate_document.is_object()) return false;
  const auto fit = surrogate_document.find("fit");
  if (fit == surrogate_document.end() || !fit->is_object()) return false;
  const auto logs = fit->find("logs");
  if (logs == fit->end() || !logs->is_array()) return false;
  for (const std::string& folder : folders) {
    std::error_code here_error;
    const auto here = std::filesystem::weakly_canonical(folder, here_error);
    if (here_error) continue;
    for (const auto& fitted : *logs) {
      if (!fitted.is_string()) continue;
      std::error_code there_error;
      const auto there = std::filesystem::weakly_canonical(fitted.get<std::string>(), there_error);
      if (!there_error && there == here) return true;
    }
  }
  return false;
}

}  // namespace experiments
