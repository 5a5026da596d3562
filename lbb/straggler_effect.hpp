// The straggler effect of LBB Eq. 4: SE = (max_i t_i - min_i t_i) / mean_i t_i, the share of an
// iteration lost to waiting for the slowest worker. The dynamic tuner (Alg. 2) compares it with
// its thresholds FT and RT.
#pragma once

#include <vector>

namespace lbb {

// SE over all the given compute times. 0 for fewer than two times or a mean <= 0.
double straggler_effect(const std::vector<double>& compute_ms);

// SE over the workers that took part (batch_sizes[i] > 0): a worker taken out (B_i = 0) does no
// work and waits for nobody, so it neither shortens the min nor lowers the mean.
// Throws std::invalid_argument when the two vectors differ in length.
double straggler_effect(const std::vector<double>& compute_ms, const std::vector<int>& batch_sizes);

}  // namespace lbb
