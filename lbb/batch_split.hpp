// Splitting the global batch by weights under per-worker memory limits: the equal split of SSGD
// (LBB's start without profiling) and LB-BSP's split proportional to predicted speed.
#pragma once

#include <vector>

namespace lbb {

// Shares proportional to `weights`, capped at max_batch (what a capped worker cannot take is
// shared among the others in the same proportions), then integerized by largest remainder
// (ties to the lower index), so the result sums to global_batch exactly and respects the caps.
// Workers with weight 0 get nothing. Throws std::invalid_argument for sizes that differ, a
// negative or non-finite weight, global_batch <= 0, or when the workers with a positive weight
// cannot hold global_batch together.
std::vector<int> proportional_split(const std::vector<double>& weights, int global_batch,
                                    const std::vector<int>& max_batch);

// B / N each (the first B mod N workers one more), within the caps: SSGD's split.
std::vector<int> equal_split(int global_batch, const std::vector<int>& max_batch);

}  // namespace lbb
