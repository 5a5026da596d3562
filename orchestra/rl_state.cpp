#include "orchestra/rl_state.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace orchestra {
namespace {

using L = StateLayout;

// 1e6 rounds saturate the sync-index feature: far beyond any run this toolkit makes.
constexpr double kSyncIndexScale = 1e6;

double finite_or_zero(double value) { return std::isfinite(value) ? value : 0.0; }
double clamp01(double value) { return std::clamp(finite_or_zero(value), 0.0, 1.0); }
// Maps [0, inf) onto [0, 1) without a scale to choose: loss l -> l / (1 + l).
double squash(double value) {
  value = finite_or_zero(value);
  return value <= 0 ? 0.0 : value / (1.0 + value);
}
double ratio(double num, double den) { return den > 0 ? num / den : 0.0; }

void validate(const StateInputs& in) {
  if (in.batch_ms.empty()) throw std::invalid_argument("build_state: no batch times (expected one per worker)");
  for (std::size_t n = 0; n < in.batch_ms.size(); ++n)
    if (!std::isfinite(in.batch_ms[n]) || in.batch_ms[n] <= 0)
      throw std::invalid_argument("build_state: batch time of worker " + std::to_string(n) +
                                  " must be positive, got " + std::to_string(in.batch_ms[n]));
  if (in.local_steps.size() != in.batch_ms.size())
    throw std::invalid_argument("build_state: expected " + std::to_string(in.batch_ms.size()) +
                                " planned local steps, got " + std::to_string(in.local_steps.size()));
  if (in.max_local_steps < 1)
    throw std::invalid_argument("build_state: max_local_steps must be >= 1, got " +
                                std::to_string(in.max_local_steps));
}

// Per-worker features before they are put into slots.
struct WorkerFeatures {
  double local_index = 0;
  double planned_steps = 0;
  double waiting = 0;
  double speed = 0;
};

template <typename T>
double at_or_zero(const std::vector<T>& values, std::size_t n) {
  return n < values.size() ? finite_or_zero(static_cast<double>(values[n])) : 0.0;
}

}  // namespace

void RoundSummary::add(const env::RoundReport& report) {
  ++rounds;
  global_rounds = std::max(global_rounds, report.round + 1);
  comm_ms += finite_or_zero(report.comm_ms);
}

std::vector<float> build_state(const StateInputs& in) {
  validate(in);
  const std::size_t n_workers = in.batch_ms.size();
  const env::EpochReport* epoch = in.epoch;
  std::vector<float> state(L::kStateSize, 0.0f);
  const auto set = [&state](int index, double value) { state[static_cast<std::size_t>(index)] = static_cast<float>(value); };

  const double fastest = *std::min_element(in.batch_ms.begin(), in.batch_ms.end());
  double max_steps = 0;
  if (epoch)
    for (std::size_t n = 0; n < n_workers; ++n) max_steps = std::max(max_steps, at_or_zero(epoch->worker_steps, n));

  // (1) training progress
  if (in.horizon_epochs > 0) set(L::kEpochProgress, clamp01(ratio(in.epochs_done, in.horizon_epochs)));
  set(L::kGlobalSyncIndex,
      clamp01(std::log1p(static_cast<double>(std::max<std::int64_t>(0, in.rounds.global_rounds))) /
              std::log1p(kSyncIndexScale)));
  std::vector<WorkerFeatures> workers(n_workers);
  double busy_total = 0, idle_total = 0, waiting_max = 0;
  for (std::size_t n = 0; n < n_workers; ++n) {
    WorkerFeatures& w = workers[n];
    w.planned_steps = clamp01(ratio(in.local_steps[n], in.max_local_steps));
    w.speed = clamp01(fastest / in.batch_ms[n]);
    if (!epoch) continue;
    const double busy = at_or_zero(epoch->worker_busy_ms, n);
    const double idle = at_or_zero(epoch->worker_idle_ms, n);
    w.local_index = clamp01(ratio(at_or_zero(epoch->worker_steps, n), max_steps));
    w.waiting = clamp01(ratio(idle, busy + idle));
    busy_total += busy;
    idle_total += idle;
    waiting_max = std::max(waiting_max, w.waiting);
  }

  if (epoch) {
    set(L::kSyncRate, clamp01(ratio(static_cast<double>(epoch->rounds), max_steps)));
    // (2) accuracy and loss
    set(L::kAccuracy, clamp01(epoch->accuracy));
    if (std::isfinite(epoch->accuracy) && std::isfinite(in.previous_accuracy))
      set(L::kAccuracyChange, std::clamp(epoch->accuracy - in.previous_accuracy, -1.0, 1.0));
    set(L::kTestLoss, squash(epoch->loss));
    set(L::kTrainLoss, squash(epoch->train_loss));
    // (3) waiting time
    set(L::kWaitingMean, clamp01(ratio(idle_total, busy_total + idle_total)));
    set(L::kWaitingMax, waiting_max);
    set(L::kCommShare, clamp01(ratio(in.rounds.comm_ms, epoch->epoch_ms)));
  }
  set(L::kBarrier, clamp01(ratio(in.barrier_ms, in.max_local_steps * fastest)));
  const std::size_t slots = std::min<std::size_t>(n_workers, L::kWorkerSlots);
  set(L::kSlotResolution, ratio(L::kWorkerSlots, static_cast<double>(std::max<std::size_t>(n_workers, L::kWorkerSlots))));

  // Worker slots: one worker each, or the mean of a contiguous group when N > kWorkerSlots.
  for (std::size_t s = 0; s < slots; ++s) {
    const std::size_t begin = s * n_workers / slots;
    const std::size_t end = (s + 1) * n_workers / slots;
    WorkerFeatures mean;
    for (std::size_t n = begin; n < end; ++n) {
      mean.local_index += workers[n].local_index;
      mean.planned_steps += workers[n].planned_steps;
      mean.waiting += workers[n].waiting;
      mean.speed += workers[n].speed;
    }
    const double count = static_cast<double>(end - begin);
    const int slot = static_cast<int>(s);
    set(L::slot(slot, L::kSlotPresent), 1.0);
    set(L::slot(slot, L::kSlotLocalIndex), mean.local_index / count);
    set(L::slot(slot, L::kSlotPlannedSteps), mean.planned_steps / count);
    set(L::slot(slot, L::kSlotWaiting), mean.waiting / count);
    set(L::slot(slot, L::kSlotSpeed), mean.speed / count);
  }
  return state;
}

}  // namespace orchestra
