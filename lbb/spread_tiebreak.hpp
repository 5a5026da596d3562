// The tie-break of the Eq. 3 solver: among the splits whose slowest worker takes exactly the
// optimal time T*, find one with the smallest spread (T* minus the fastest participant's time).
// Internal to min_max_solver.cpp; kept apart because it is a problem of its own (a max-min with an
// optional knapsack), see the .cpp.
#pragma once

#include <vector>

#include "lbb/worker_time_model.hpp"

namespace lbb::detail {

// `batch` is a min-max optimal split of `global_batch` whose slowest time is `iteration_ms`;
// on return it is one with the same slowest time and the smallest spread.
void minimize_spread(const std::vector<WorkerTimeModel>& workers, int global_batch, double iteration_ms,
                     std::vector<int>& batch);

}  // namespace lbb::detail
