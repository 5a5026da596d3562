// Bounds the config reader and the command line accept, named once so that every key and flag
// that means the same thing has the same limit.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

namespace common {

// A per-worker or global batch, in samples (2^24: far above any GPU's memory for one step).
inline constexpr std::int64_t kMaxBatch = std::int64_t{1} << 24;
// Local steps between averages (H, H1, H2, tau, M).
inline constexpr std::int64_t kMaxLocalSteps = std::int64_t{1} << 20;
// Rounds or iterations held in an int (LBB's tuning window).
inline constexpr std::int64_t kMaxRounds = std::int64_t{1} << 24;
// Counts with no natural bound (samples, rounds, updates): what fits an int64.
inline constexpr std::int64_t kMaxCount = std::numeric_limits<std::int64_t>::max();
// Samples an epoch of a timing-only run counts (training.train_samples): its sample order is held
// in memory, 8 bytes a sample, and a worker's samples in a round are an int. 2^30 is 8.6 GB of
// order and 800 times ImageNet's epoch; 1e11 was accepted and ended in std::bad_alloc.
inline constexpr std::int64_t kMaxTimingSamples = std::int64_t{1} << 30;
// Seeds: the same range in configs, `run --seed` and `launch --seed`.
inline constexpr std::int64_t kMaxSeed = std::numeric_limits<std::int64_t>::max();
// Workers in one cluster (checked before replicated servers are expanded).
inline constexpr std::int64_t kMaxWorkers = 100000;

// Times, coefficients and slowdowns: the same ranges for a YAML key and for a trace's column, so
// that a number read anywhere is finite and in range, and sums of them stay finite (a clock over
// thousands of rounds of the slowest step is far below the largest double).
struct Range {
  double min;
  double max;
  bool min_exclusive = false;
};
// One step's compute time (ms): a time model's value up to max_batch, each of its coefficients in
// magnitude, a trace's row, a perturbation's add_ms, a round overhead. 10^7 ms is 2.8 hours.
inline constexpr Range kStepMs{0.0, 1e7};
// A slowdown factor (a perturbation's, a trace's): > 0, at most 10^6.
inline constexpr Range kSlowdown{0.0, 1e6, true};
// A time on the run's clock (s): when a perturbation starts or ends, its period, a trace row's
// time_s, a time budget. 10^9 s is 31 years.
inline constexpr Range kClockS{0.0, 1e9};
// Network: latency (us) up to 1000 s; bandwidth (Gb/s) from 1 kb/s to 1 Pb/s; a message (MB) up
// to 1 PB.
inline constexpr Range kLatencyUs{0.0, 1e9};
inline constexpr Range kBandwidthGbps{1e-6, 1e6};
inline constexpr Range kMessageMb{0.0, 1e9};
// The policy runs one experiment may expand to (its policies, sweeps expanded, times its seeds):
// checked before a sweep is expanded, so a typo of a sweep cannot exhaust memory.
inline constexpr std::int64_t kMaxRuns = 10000;

// Why `v` is not in `r` ("expected a number >= 0 and <= 1e+07, got 1e+308"), or nullopt.
inline std::optional<std::string> range_problem(double v, const Range& r) {
  if (std::isfinite(v) && (r.min_exclusive ? v > r.min : v >= r.min) && v <= r.max) return std::nullopt;
  std::ostringstream s;
  s << "expected a number " << (r.min_exclusive ? "> " : ">= ") << r.min << " and <= " << r.max << ", got " << v;
  return s.str();
}

}  // namespace common
