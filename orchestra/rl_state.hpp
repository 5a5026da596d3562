// The Barrier Controller's state (Orchestra Sec. 3.1.3, "State Space": (1) training progress, the
// global synchronization index and each worker's local iteration index, (2) accuracy or loss,
// (3) time spent waiting for other workers), as a fixed-size float vector that one network can
// read on a cluster of any size, speed and network.
//
// Every entry is scale-free: a ratio, a share, or a log2 ratio of two times of the same cluster,
// so a cluster twice as fast, with twice the workers or a ten times slower network gives values
// of the same range. There are no per-worker slots: worker-level quantities enter as their mean,
// maximum or spread, so no entry depends on the order or the number of workers. What the decision
// needs beyond the paper's three groups (4) is where T stands against the cluster's own times: the
// communication's share of a round at the current T, T against the slowest and fastest step and
// against the all-reduce, and whether a worker has slowed down since the start.
//
// The window: the rounds since the last decision (one epoch with `interval: epoch`, K rounds with
// `interval_rounds: K`; barrier_controller.hpp).
//
// | index | feature             | value                                                            | 3.1.3 |
// |-------|---------------------|------------------------------------------------------------------|-------|
// | 0     | budget used         | (epochs done + fraction of this epoch's samples) / horizon       | (1)   |
// | 1     | global sync index   | log(1 + rounds so far) / log(1 + 1000), clamped to 1             | (1)   |
// | 2     | local steps, mean   | mean_n tau_n / max_local_steps (the plan for the next window)    | (1)   |
// | 3     | local steps, spread | (max_n tau_n - min_n tau_n) / max_local_steps                    | (1)   |
// | 4     | sync rate           | rounds in the window / max_n local steps in it (1 = DSGD)        | (1)   |
// | 5     | test accuracy       | after the last finished epoch (0 before the first)               | (2)   |
// | 6     | accuracy change     | over the last finished epoch, clamped to [-1, 1]                 | (2)   |
// | 7     | training loss       | window's mean training loss / the episode's first window's       | (2)   |
// |       |                     | (clamped to [0, 2], halved: 0.5 = where training started)        |       |
// | 8     | loss trend          | log2(window loss / previous window loss), clamped to [-1, 1]     | (2)   |
// | 9     | waiting, cluster    | sum_n idle_n / sum_n (busy_n + idle_n) in the window             | (3)   |
// | 10    | waiting, worst      | max_n idle_n / (busy_n + idle_n)                                 | (3)   |
// | 11    | comm. share at T    | C / (C + T), C the all-reduce per round (measured on rounds of   | (4)   |
// |       |                     | the whole cluster, or modelled)                                  |       |
// | 12    | comm. share, window | all-reduce time / window time                                    | (4)   |
// | 13    | T vs slowest step   | log2(T / max_n t_b^n) / 6, clamped to [-1, 1]                    | (4)   |
// | 14    | T vs fastest step   | log2(T / min_n t_b^n) / 6, clamped to [-1, 1]                    | (4)   |
// | 15    | T vs all-reduce     | log2(T / C) / 6, clamped to [-1, 1] (1 when C = 0)               | (4)   |
// | 16    | T vs its start      | log2(T / T_start) / 6, clamped to [-1, 1] (T_start: LCM's T*)    | (4)   |
// | 17    | T within bounds     | log(T / T_min) / log(T_max / T_min) (0 when T_max = T_min)       | (4)   |
// | 18    | speed spread        | min_n t_b^n / max_n t_b^n (1 = a homogeneous cluster)            | (4)   |
// | 19    | slowdown            | log2(max_n t_b^n(now) / t_b^n(start)) / 2, clamped to [-1, 1]    | (4)   |
// | 20    | cluster size        | log2(N) / 6, clamped to 1                                        | (4)   |
// | 21    | last action         | the previous move: -1, 0 or +1                                   |       |
//
// With `state: progress` (StateFeatures::Progress; issue 41 item 4, whether a longer barrier pays)
// three entries follow, from the stretches of rounds run at one T (progress_stretch.hpp):
//
// | 22    | progress at T       | (r - r') / (|r| + |r'|): r the loss's fall per ms at the current   | (2)   |
// |       |                     | T, r' at the T before it (0 until both are known)                |       |
// | 23    | last change of T    | log2(T / T before it) / 6, clamped to [-1, 1] (0: never changed)  | (4)   |
// | 24    | rounds at T         | log2(1 + rounds run at the current T) / 6, clamped to 1          | (1)   |
//
// With `state: lead` (StateFeatures::Lead) entry 22 is instead where the loss stands against the T
// before: log2(the latest loss / the previous T's fitted trend extrapolated to now), clamped to
// [-1, 1] (negative: the current T is ahead of where the old one was heading). Measured on the
// static sweeps, a loss further down at the same time picks the faster of two barriers far more
// often than a faster fall does (BENCHMARKS.md, "A state that can tell up from down").
//
// Before the first window (the observation at reset) the window entries (4, 7-10, 12) are 0 and
// C is the cost model's estimate; NaN inputs (timing-only runs have no loss) give 0.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "env/round_plan.hpp"
#include "orchestra/progress_stretch.hpp"

namespace orchestra {

// Which entries the state has: Base, the 22 of the table (every policy trained before issue 41
// item 4), or Progress or Lead, those and the three entries above (25). A policy file records it.
enum class StateFeatures { Base, Progress, Lead };
inline constexpr std::array<StateFeatures, 3> kStateFeatures{StateFeatures::Base, StateFeatures::Progress, StateFeatures::Lead};
const char* state_features_name(StateFeatures features);  // "base", "progress", "lead"
std::optional<StateFeatures> state_features_from_name(const std::string& name);
int state_size(StateFeatures features);

struct StateLayout {
  static constexpr int kStateSize = 22;

  static constexpr int kBudgetUsed = 0;
  static constexpr int kGlobalSyncIndex = 1;
  static constexpr int kLocalStepsMean = 2;
  static constexpr int kLocalStepsSpread = 3;
  static constexpr int kSyncRate = 4;
  static constexpr int kAccuracy = 5;
  static constexpr int kAccuracyChange = 6;
  static constexpr int kTrainLoss = 7;
  static constexpr int kLossTrend = 8;
  static constexpr int kWaitingMean = 9;
  static constexpr int kWaitingMax = 10;
  static constexpr int kCommShareAtBarrier = 11;
  static constexpr int kCommShareWindow = 12;
  static constexpr int kBarrierVsSlowest = 13;
  static constexpr int kBarrierVsFastest = 14;
  static constexpr int kBarrierVsComm = 15;
  static constexpr int kBarrierVsStart = 16;
  static constexpr int kBarrierInBounds = 17;
  static constexpr int kSpeedSpread = 18;
  static constexpr int kSlowdown = 19;
  static constexpr int kClusterSize = 20;
  static constexpr int kLastAction = 21;
  // StateFeatures::Progress and Lead only (entry 22: Progress's fall against fall, Lead's loss against trend)
  static constexpr int kProgressVsPreviousBarrier = 22;
  static constexpr int kLossVsPreviousTrend = 22;
  static constexpr int kLastBarrierChange = 23;
  static constexpr int kRoundsAtBarrier = 24;
  static constexpr int kProgressStateSize = 25;
};

// What the controller measured over one decision window: the rounds since the last decision.
struct DecisionWindow {
  std::int64_t rounds = 0;
  std::int64_t global_rounds = 0;  // global sync index after the window's last round (its round + 1)
  double elapsed_ms = 0;           // sum of the rounds' round_ms
  double comm_ms = 0;              // sum of the rounds' all-reduce time
  double loss_sum = 0;             // training loss summed over steps (loss * steps per round)
  std::int64_t loss_steps = 0;
  std::int64_t samples = 0;
  std::vector<double> busy_ms, idle_ms;  // per worker
  std::vector<std::int64_t> steps;       // local iterations per worker

  void add(const env::RoundReport& report);
  // Mean training loss over the window's steps; NaN when none was reported.
  double train_loss() const;
};

struct StateInputs {
  const DecisionWindow* window = nullptr;    // the latest closed window; nullptr before the first
  const DecisionWindow* previous = nullptr;  // the window before it (loss trend), or nullptr
  double first_loss = std::numeric_limits<double>::quiet_NaN();  // the episode's first window's loss
  double budget_used = 0;                    // in [0, 1]
  double accuracy = std::numeric_limits<double>::quiet_NaN();           // after the last epoch
  double previous_accuracy = std::numeric_limits<double>::quiet_NaN();  // after the one before
  double barrier_ms = 0;                     // T now
  double start_barrier_ms = 0;               // T at the start (LCM's T*, or the fixed T)
  double min_barrier_ms = 0, max_barrier_ms = 0;  // the controller's bounds on T
  double comm_ms = 0;                        // C: the all-reduce per round, >= 0
  std::vector<double> batch_ms;              // t_b^n now, one per worker (defines N)
  std::vector<double> start_batch_ms;        // t_b^n as probed at the start (same size)
  std::vector<int> local_steps;              // tau_n planned for the next window
  int max_local_steps = 64;
  int last_action = 0;                       // the latest move, in [-max_move, +max_move]
  int max_move = 1;                          // the state reads last_action / max_move
  // StateFeatures::Progress and Lead: the rounds at the current T and those at the T before it (nullptr: none yet).
  const ProgressStretch* stretch = nullptr;
  const ProgressStretch* previous_stretch = nullptr;
};

// The range of every entry, from the table above: shares, fractions and clamped ratios lie in
// [0, 1], the changes, trends, signed log2 ratios and the last action in [-1, 1] (the slowdown
// in [0, 1]: a worker that sped up reads 0). What a learner
// declares as its observation space (Gymnasium's Box of the Python module, experiments/python/).
struct StateBounds {
  std::vector<float> low, high;  // state_size(features) each
};
StateBounds state_bounds(StateFeatures features = StateFeatures::Base);

// Builds the state_size(features) vector described above. Throws std::invalid_argument when batch_ms is empty
// or holds a non-positive time, when start_batch_ms or local_steps do not have one entry per worker,
// when a barrier time is not positive, or when max_local_steps < 1.
std::vector<float> build_state(const StateInputs& inputs, StateFeatures features = StateFeatures::Base);

}  // namespace orchestra
