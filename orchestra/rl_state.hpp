// The Barrier Controller's state (Orchestra Sec. 3.1.3, "State Space"): (1) training progress — the
// global synchronization index and each worker's local iteration index —, (2) accuracy or loss,
// (3) time spent waiting for other workers. As a fixed-size float vector, every entry in [0, 1]
// (accuracy change in [-1, 1]), so one network serves clusters of any size up to kWorkerSlots and
// summarizes larger ones.
//
// Layout (kStateSize = kGlobalFeatures + kWorkerSlots * kSlotFeatures = 12 + 16 * 5 = 92):
//
// | index      | feature               | value                                                   | 3.1.3 |
// |------------|-----------------------|---------------------------------------------------------|-------|
// | 0          | epoch progress        | epochs done / horizon, clamped to 1; 0 if no horizon     | (1)   |
// | 1          | global sync index     | log(1 + rounds so far) / log(1 + 1e6), clamped to 1      | (1)   |
// | 2          | sync rate             | rounds in the epoch / max_n local steps in it            | (1)   |
// |            |                       | (1 = averaging after every step, i.e. DSGD)             |       |
// | 3          | test accuracy         | as reported, in [0, 1]                                   | (2)   |
// | 4          | accuracy change       | accuracy - previous accuracy, clamped to [-1, 1]         | (2)   |
// | 5          | test loss             | loss / (1 + loss)                                        | (2)   |
// | 6          | training loss         | loss / (1 + loss)                                        | (2)   |
// | 7          | waiting, cluster      | sum_n idle_n / sum_n (busy_n + idle_n)                   | (3)   |
// | 8          | waiting, worst worker | max_n idle_n / (busy_n + idle_n)                         | (3)   |
// | 9          | communication share   | all-reduce time of the epoch / epoch time                |       |
// | 10         | barrier T             | T / (max_local_steps * min_n t_b^n): 1 = the step cap    | action|
// | 11         | slot resolution       | kWorkerSlots / max(N, kWorkerSlots): 1 = one worker each |       |
// | 12 + 5 s   | slot s present        | 1 if slot s holds a worker (or a group), 0 = padding     |       |
// | 12 + 5 s+1 | local iteration index | the epoch's local steps / max_n local steps              | (1)   |
// | 12 + 5 s+2 | planned tau           | tau_n for the next epoch / max_local_steps               | (1)   |
// | 12 + 5 s+3 | waiting               | idle_n / (busy_n + idle_n) in the epoch                  | (3)   |
// | 12 + 5 s+4 | relative speed        | min_m t_b^m / t_b^n (1 = the fastest)                    |       |
//
// Slots: with N <= kWorkerSlots, worker n is slot n and the other slots are zeros. With more workers,
// slot s holds the mean over workers [floor(s N / K), floor((s + 1) N / K)) in cluster order (K =
// kWorkerSlots), so every worker counts and neighbours (usually one server) share a slot. 16 slots
// fit the paper's largest cluster (cluster C: 16 GPUs). Before the first epoch and for values that
// are NaN (timing-only mode has no accuracy or loss) the entry is 0.
#pragma once

#include <cstdint>
#include <vector>

#include "env/round_plan.hpp"

namespace orchestra {

struct StateLayout {
  static constexpr int kWorkerSlots = 16;
  static constexpr int kGlobalFeatures = 12;
  static constexpr int kSlotFeatures = 5;
  static constexpr int kStateSize = kGlobalFeatures + kWorkerSlots * kSlotFeatures;

  static constexpr int kEpochProgress = 0;
  static constexpr int kGlobalSyncIndex = 1;
  static constexpr int kSyncRate = 2;
  static constexpr int kAccuracy = 3;
  static constexpr int kAccuracyChange = 4;
  static constexpr int kTestLoss = 5;
  static constexpr int kTrainLoss = 6;
  static constexpr int kWaitingMean = 7;
  static constexpr int kWaitingMax = 8;
  static constexpr int kCommShare = 9;
  static constexpr int kBarrier = 10;
  static constexpr int kSlotResolution = 11;

  static constexpr int kSlotPresent = 0;
  static constexpr int kSlotLocalIndex = 1;
  static constexpr int kSlotPlannedSteps = 2;
  static constexpr int kSlotWaiting = 3;
  static constexpr int kSlotSpeed = 4;

  // Index of `feature` (one of kSlot*) of slot `slot`.
  static constexpr int slot(int slot, int feature) { return kGlobalFeatures + slot * kSlotFeatures + feature; }
};

// What the state needs from an epoch's RoundReports that the EpochReport does not carry.
struct RoundSummary {
  std::int64_t rounds = 0;         // rounds added
  std::int64_t global_rounds = 0;  // global sync index after the last round added (its round + 1)
  double comm_ms = 0;              // sum of the rounds' all-reduce time

  void add(const env::RoundReport& report);
};

struct StateInputs {
  const env::EpochReport* epoch = nullptr;  // the latest finished epoch; nullptr before the first
  double previous_accuracy = 0;             // accuracy before that epoch (NaN if unknown)
  RoundSummary rounds;                      // that epoch's rounds
  int epochs_done = 0;
  int horizon_epochs = 0;                   // episode length; 0 if unknown
  double barrier_ms = 0;                    // T
  std::vector<double> batch_ms;             // t_b^n, one per worker (defines N)
  std::vector<int> local_steps;             // tau_n planned for the next epoch
  int max_local_steps = 64;                 // the controller's cap on tau
};

// Builds the kStateSize vector described above. Throws std::invalid_argument when batch_ms is empty
// or holds a non-positive time, when local_steps does not have one entry per worker, or when
// max_local_steps < 1.
std::vector<float> build_state(const StateInputs& inputs);

}  // namespace orchestra
