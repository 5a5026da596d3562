// Bounds the config reader and the command line accept, named once so that every key and flag
// that means the same thing has the same limit.
#pragma once

#include <cstdint>
#include <limits>

namespace common {

// A per-worker or global batch, in samples (2^24: far above any GPU's memory for one step).
inline constexpr std::int64_t kMaxBatch = std::int64_t{1} << 24;
// Local steps between averages (H, H1, H2, tau, M).
inline constexpr std::int64_t kMaxLocalSteps = std::int64_t{1} << 20;
// Rounds or iterations held in an int (LBB's tuning window).
inline constexpr std::int64_t kMaxRounds = std::int64_t{1} << 24;
// Counts with no natural bound (samples, rounds, updates): what fits an int64.
inline constexpr std::int64_t kMaxCount = std::numeric_limits<std::int64_t>::max();
// Seeds: the same range in configs, `run --seed` and `launch --seed`.
inline constexpr std::int64_t kMaxSeed = std::numeric_limits<std::int64_t>::max();
// Workers in one cluster (checked before replicated servers are expanded).
inline constexpr std::int64_t kMaxWorkers = 100000;

}  // namespace common
