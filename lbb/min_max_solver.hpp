// The load-balancing problem of LBB Eq. 3: split the global batch B into integer local batches
// 0 <= B_i <= B_lim_i, sum B_i = B, so that the slowest worker's predicted compute time is as small
// as possible. Among the splits that reach that minimum, the one with the smallest spread
// (max - min over the workers with B_i > 0) wins, which is the paper's own objective
// (max T_comp - min T_comp) once the iteration time can go no lower. B_i = 0 takes a worker out:
// it happens when even one sample on it is slower than the optimum (Sec. 3.1.4), and also when
// leaving a worker out reaches the same slowest time with a smaller spread among the others, since
// the spread is over participants: three identical workers t = 50 + 0.1 B and B = 4 get [0, 2, 2]
// (spread 0), not [2, 1, 1] (0.1 ms), both at 50.2 ms. The iteration time is the same either way.
//
// BOA solves the same min-max integer programme, so it calls this too (LB-BSP splits in proportion
// to measured speeds instead, lb_bsp_policy.hpp).
#pragma once

#include <vector>

#include "env/sim/batch_time_model.hpp"
#include "lbb/worker_time_model.hpp"

namespace lbb {

struct BatchAllocation {
  std::vector<int> batch_sizes;      // B_i, in worker order
  std::vector<double> predicted_ms;  // t_i(B_i); 0 for a worker taken out
  double iteration_ms = 0;           // max_i t_i(B_i), the value Eq. 3 minimizes
  double spread_ms = 0;              // max - min of t_i(B_i) over workers with B_i > 0
  int participants = 0;              // workers with B_i > 0
};

// Exact for nondecreasing time functions, in both the min-max value and the spread tie-break.
// Ties left after both (e.g. identical workers) go to the lower worker index, so the result is
// deterministic. Throws std::invalid_argument when global_batch <= 0, a max_batch is negative, a
// time function is missing or not finite, or the max batches sum to less than global_batch.
BatchAllocation solve_min_max(const std::vector<WorkerTimeModel>& workers, int global_batch);

// Convenience for fitted models (LBB Eq. 1); models[i] is evaluated with BatchTimeModel::eval.
BatchAllocation solve_min_max(const std::vector<env::BatchTimeModel>& models,
                              const std::vector<int>& max_batch, int global_batch);

}  // namespace lbb
