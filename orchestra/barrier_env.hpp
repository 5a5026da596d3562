// The barrier-tuning RL environment's contract, Gymnasium-style in C++ (Orchestra 3.1.3): one step
// is one decision window of local-SGD training (an epoch, as in the paper, or K rounds); the action
// moves the barrier T down, not at all, or up (by a unit or a factor).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace orchestra {

// Discrete actions. Index order (0, 1, 2) is the order of a policy network's outputs.
enum class BarrierAction : int { Decrease = -1, Keep = 0, Increase = 1 };
inline constexpr int kNumBarrierActions = 3;
inline BarrierAction action_from_index(int index) { return static_cast<BarrierAction>(index - 1); }
inline int index_of(BarrierAction a) { return static_cast<int>(a) + 1; }

// What an episode step reports besides the observation (Gymnasium's `info`).
struct StepInfo {
  int epoch = 0;               // epochs finished in this episode
  std::int64_t rounds = 0;     // rounds run in this episode
  double barrier_ms = 0;       // T after the action
  double step_ms = 0;          // simulated time of the step just run
  double clock_ms = 0;         // simulated time since the episode started
  double accuracy = 0;         // test accuracy at the latest evaluation (this step's if `evaluated`)
  bool evaluated = false;      // the test accuracy was measured after this step
  double loss = 0;
  bool reached_target = false;
};

struct ResetResult {
  std::vector<float> observation;
  StepInfo info;
};

struct StepResult {
  std::vector<float> observation;
  double reward = 0;        // Orchestra Eq. 1 (+1, -1 or 0), or minus the step's time
  bool terminated = false;  // reached the target accuracy
  bool truncated = false;   // ran out of the epoch or time budget
  StepInfo info;
};

class BarrierEnv {
 public:
  virtual ~BarrierEnv() = default;
  // Starts an episode with everything seeded from `seed`; T starts at the LCM heuristic's T*.
  virtual ResetResult reset(std::uint64_t seed) = 0;
  // Runs one decision window after moving T; throws std::invalid_argument for an action outside
  // {-1, 0, 1} or a step after the episode ended.
  virtual StepResult step(int action) = 0;
  virtual int observation_size() const = 0;
};

}  // namespace orchestra
