// One worker as the Eq. 3 solver sees it (LBB Eq. 1's predicted step time and B_lim). Its own
// header so that the solver (min_max_solver) and its tie-break (spread_tiebreak) both depend on it
// and not on each other.
#pragma once

#include <functional>

namespace lbb {

// Predicted compute time (ms) of one step of `batch` samples on one worker. Must be nondecreasing
// in `batch` over [1, max_batch]; the solver never calls it with batch <= 0 (no work, no time).
using TimeFunction = std::function<double(int batch)>;

struct WorkerTimeModel {
  TimeFunction time_ms;
  int max_batch = 0;  // B_lim_i (memory limit); 0 keeps the worker out
};

}  // namespace lbb
