// The barrier-tuning RL environment's contract, Gymnasium-style in C++ (Orchestra 3.1.3): one step
// is one decision window of local-SGD training (an epoch, as in the paper, or K rounds); the action
// moves the barrier T down, not at all, or up (by a unit or a factor).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace orchestra {

// Discrete actions: a move of T by -m ... +m units or powers of the factor, m = the controller's
// max_move (1, the paper's +1 / 0 / -1, unless a config widens it: moves of x2 and x4 both ways
// are max_move 2 with factor 2). Index order (0 ... 2m) is the order of a policy network's outputs:
// index i is the move i - m.
enum class BarrierAction : int { Decrease = -1, Keep = 0, Increase = 1 };
inline constexpr int kMaxBarrierMove = 4;
inline constexpr int num_barrier_actions(int max_move) { return 2 * max_move + 1; }
inline int action_from_index(int index, int max_move = 1) { return index - max_move; }
inline int index_of(int action, int max_move = 1) { return action + max_move; }
// For messages: "-1, 0 or +1 (decrease, keep or increase T by one unit)", or "in [-m, +m] (...)".
inline std::string allowed_moves(int max_move) {
  if (max_move == 1) return "-1, 0 or +1 (decrease, keep or increase T by one unit)";
  return "in [-" + std::to_string(max_move) + ", +" + std::to_string(max_move) + "] (decrease, keep or increase T by up to " +
         std::to_string(max_move) + " units)";
}

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
  // [-max_move(), max_move()] or a step after the episode ended.
  virtual StepResult step(int action) = 0;
  virtual int observation_size() const = 0;
  // The largest move an action makes (actions are -max_move() ... +max_move()).
  virtual int max_move() const { return 1; }
};

}  // namespace orchestra
