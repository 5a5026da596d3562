#include "orchestra/rl_state.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace orchestra {
namespace {

using L = StateLayout;

// 1000 rounds saturate the sync-index entry: an episode of the controller's task has tens to a few
// hundred rounds.
constexpr double kSyncIndexScale = 1000;
// Six doublings (64x) span the barrier's range: the step cap is 64 local steps.
constexpr double kDoublings = 6;

double finite_or_zero(double value) { return std::isfinite(value) ? value : 0.0; }
double clamp01(double value) { return std::clamp(finite_or_zero(value), 0.0, 1.0); }
double clamp11(double value) { return std::clamp(finite_or_zero(value), -1.0, 1.0); }
double ratio(double num, double den) { return den > 0 ? num / den : 0.0; }
// log2(a / b) / kDoublings in [-1, 1]; 0 when either time is not positive.
double doublings(double a, double b) { return a > 0 && b > 0 ? clamp11(std::log2(a / b) / kDoublings) : 0.0; }

void validate(const StateInputs& in) {
  if (in.batch_ms.empty()) throw std::invalid_argument("build_state: no batch times (expected one per worker)");
  for (std::size_t n = 0; n < in.batch_ms.size(); ++n)
    if (!std::isfinite(in.batch_ms[n]) || in.batch_ms[n] <= 0)
      throw std::invalid_argument("build_state: batch time of worker " + std::to_string(n) + " must be positive, got " +
                                  std::to_string(in.batch_ms[n]));
  if (in.start_batch_ms.size() != in.batch_ms.size())
    throw std::invalid_argument("build_state: expected " + std::to_string(in.batch_ms.size()) + " start batch times, got " +
                                std::to_string(in.start_batch_ms.size()));
  if (in.local_steps.size() != in.batch_ms.size())
    throw std::invalid_argument("build_state: expected " + std::to_string(in.batch_ms.size()) + " planned local steps, got " +
                                std::to_string(in.local_steps.size()));
  if (in.max_local_steps < 1) throw std::invalid_argument("build_state: max_local_steps must be >= 1, got " + std::to_string(in.max_local_steps));
  for (double t : {in.barrier_ms, in.start_barrier_ms, in.min_barrier_ms, in.max_barrier_ms})
    if (!std::isfinite(t) || t <= 0) throw std::invalid_argument("build_state: barrier times must be positive, got " + std::to_string(t));
}

// Entries 22-24 (StateFeatures::Progress): did the last change of T speed the loss's fall per
// second up or down? A symmetric relative difference, so it is scale-free and defined whatever the
// signs (a loss that rose at one T and fell at the other reads +-1).
template <typename Set>
void set_progress(const StateInputs& in, StateFeatures features, const Set& set) {
  const ProgressStretch* now = in.stretch;
  const ProgressStretch* before = in.previous_stretch;
  if (now) set(L::kRoundsAtBarrier, clamp01(std::log2(1.0 + static_cast<double>(now->rounds)) / kDoublings));
  if (!now || !before) return;
  set(L::kLastBarrierChange, doublings(now->barrier_ms, before->barrier_ms));
  if (features == StateFeatures::Lead) {
    // Lead: the latest loss against the old T's line at the same time (both on the run's clock).
    const auto point = now->last_point();
    const auto trend = point ? before->log_loss_at(point->first) : std::nullopt;
    if (trend) set(L::kLossVsPreviousTrend, clamp11((std::log(point->second) - *trend) / std::log(2.0)));
    return;
  }
  const auto r = now->rate_per_ms(), r_before = before->rate_per_ms();
  if (r && r_before && std::abs(*r) + std::abs(*r_before) > 0)
    set(L::kProgressVsPreviousBarrier, clamp11((*r - *r_before) / (std::abs(*r) + std::abs(*r_before))));
}

}  // namespace

void DecisionWindow::add(const env::RoundReport& report) {
  const std::size_t n = report.workers.size();
  if (busy_ms.size() != n) {
    busy_ms.assign(n, 0.0);
    idle_ms.assign(n, 0.0);
    steps.assign(n, 0);
  }
  ++rounds;
  global_rounds = std::max(global_rounds, report.round + 1);
  elapsed_ms += finite_or_zero(report.round_ms);
  comm_ms += finite_or_zero(report.comm_ms);
  std::int64_t round_steps = 0;
  for (std::size_t i = 0; i < n; ++i) {
    busy_ms[i] += finite_or_zero(report.workers[i].compute_ms);
    idle_ms[i] += finite_or_zero(report.workers[i].idle_ms);
    steps[i] += report.workers[i].local_steps;
    samples += report.workers[i].samples;
    round_steps += report.workers[i].local_steps;
  }
  if (std::isfinite(report.train_loss) && round_steps > 0) {
    loss_sum += report.train_loss * static_cast<double>(round_steps);
    loss_steps += round_steps;
  }
}

double DecisionWindow::train_loss() const {
  return loss_steps > 0 ? loss_sum / static_cast<double>(loss_steps) : std::numeric_limits<double>::quiet_NaN();
}

const char* state_features_name(StateFeatures features) {
  switch (features) {
    case StateFeatures::Progress: return "progress";
    case StateFeatures::Lead: return "lead";
    case StateFeatures::Base: break;
  }
  return "base";
}

std::optional<StateFeatures> state_features_from_name(const std::string& name) {
  for (const StateFeatures f : kStateFeatures)
    if (name == state_features_name(f)) return f;
  return std::nullopt;
}

int state_size(StateFeatures features) { return features == StateFeatures::Base ? L::kStateSize : L::kProgressStateSize; }

StateBounds state_bounds(StateFeatures features) {
  const auto size = static_cast<std::size_t>(state_size(features));
  StateBounds b{std::vector<float>(size, 0.0f), std::vector<float>(size, 1.0f)};
  std::vector<int> signed_entries{L::kAccuracyChange, L::kLossTrend, L::kBarrierVsSlowest, L::kBarrierVsFastest,
                                  L::kBarrierVsComm, L::kBarrierVsStart, L::kLastAction};
  if (features != StateFeatures::Base) signed_entries.insert(signed_entries.end(), {L::kProgressVsPreviousBarrier, L::kLastBarrierChange});
  for (const int signed_entry : signed_entries) b.low[static_cast<std::size_t>(signed_entry)] = -1.0f;
  return b;
}

std::vector<float> build_state(const StateInputs& in, StateFeatures features) {
  validate(in);
  std::vector<float> state(static_cast<std::size_t>(state_size(features)), 0.0f);
  const auto set = [&state](int index, double value) { state[static_cast<std::size_t>(index)] = static_cast<float>(value); };
  const std::size_t n_workers = in.batch_ms.size();
  const auto [fastest_it, slowest_it] = std::minmax_element(in.batch_ms.begin(), in.batch_ms.end());
  const double fastest = *fastest_it, slowest = *slowest_it;
  const auto [fewest, most] = std::minmax_element(in.local_steps.begin(), in.local_steps.end());
  double mean_steps = 0;
  for (int tau : in.local_steps) mean_steps += tau;
  mean_steps /= static_cast<double>(n_workers);

  // (1) training progress
  set(L::kBudgetUsed, clamp01(in.budget_used));
  const std::int64_t rounds = in.window ? in.window->global_rounds : 0;
  set(L::kGlobalSyncIndex, clamp01(std::log1p(static_cast<double>(std::max<std::int64_t>(0, rounds))) / std::log1p(kSyncIndexScale)));
  set(L::kLocalStepsMean, clamp01(mean_steps / in.max_local_steps));
  set(L::kLocalStepsSpread, clamp01(static_cast<double>(*most - *fewest) / in.max_local_steps));

  // (2) accuracy and loss
  set(L::kAccuracy, clamp01(in.accuracy));
  if (std::isfinite(in.accuracy) && std::isfinite(in.previous_accuracy)) set(L::kAccuracyChange, clamp11(in.accuracy - in.previous_accuracy));

  if (const DecisionWindow* w = in.window) {
    std::int64_t max_steps = 0;
    double busy = 0, idle = 0, worst = 0;
    for (std::size_t i = 0; i < w->busy_ms.size(); ++i) {
      max_steps = std::max(max_steps, w->steps[i]);
      busy += w->busy_ms[i];
      idle += w->idle_ms[i];
      worst = std::max(worst, ratio(w->idle_ms[i], w->busy_ms[i] + w->idle_ms[i]));
    }
    set(L::kSyncRate, clamp01(ratio(static_cast<double>(w->rounds), static_cast<double>(max_steps))));
    const double loss = w->train_loss();
    if (std::isfinite(loss) && std::isfinite(in.first_loss) && in.first_loss > 0) set(L::kTrainLoss, std::clamp(loss / in.first_loss, 0.0, 2.0) / 2);
    if (in.previous && std::isfinite(loss) && loss > 0) {
      const double before = in.previous->train_loss();
      if (std::isfinite(before) && before > 0) set(L::kLossTrend, clamp11(std::log2(loss / before)));
    }
    // (3) waiting
    set(L::kWaitingMean, clamp01(ratio(idle, busy + idle)));
    set(L::kWaitingMax, clamp01(worst));
    set(L::kCommShareWindow, clamp01(ratio(w->comm_ms, w->elapsed_ms)));
  }

  // (4) T against the cluster's own times
  const double comm = std::max(0.0, finite_or_zero(in.comm_ms));
  set(L::kCommShareAtBarrier, clamp01(comm / (comm + in.barrier_ms)));
  set(L::kBarrierVsSlowest, doublings(in.barrier_ms, slowest));
  set(L::kBarrierVsFastest, doublings(in.barrier_ms, fastest));
  set(L::kBarrierVsComm, comm > 0 ? doublings(in.barrier_ms, comm) : 1.0);
  set(L::kBarrierVsStart, doublings(in.barrier_ms, in.start_barrier_ms));
  if (in.max_barrier_ms > in.min_barrier_ms)
    set(L::kBarrierInBounds, clamp01(std::log(in.barrier_ms / in.min_barrier_ms) / std::log(in.max_barrier_ms / in.min_barrier_ms)));
  set(L::kSpeedSpread, clamp01(fastest / slowest));
  double slowdown = 0;
  for (std::size_t i = 0; i < n_workers; ++i)
    if (in.start_batch_ms[i] > 0) slowdown = std::max(slowdown, std::log2(in.batch_ms[i] / in.start_batch_ms[i]));
  set(L::kSlowdown, clamp11(slowdown / 2));
  set(L::kClusterSize, clamp01(std::log2(static_cast<double>(n_workers)) / kDoublings));
  set(L::kLastAction, clamp11(static_cast<double>(in.last_action) / std::max(in.max_move, 1)));
  if (features != StateFeatures::Base) set_progress(in, features, set);
  return state;
}

}  // namespace orchestra
