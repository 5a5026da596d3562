// The profiling phase of LBB Alg. 1: time a few training steps of each worker at batch sizes
// 2^p, p >= 1, fit its performance model (Eq. 1) to the points. BOA profiles the same way.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "env/sim/batch_time_model.hpp"

namespace lbb {

struct ProfileOptions {
  int repetitions = 5;         // probes per batch size; Alg. 1 takes one, more tame the noise
  double trim_fraction = 0.2;  // share of probes dropped at each end before averaging; 0 = plain
                               // mean, 0.5 = median. 5 probes at 0.2: the mean of the middle 3
  int fit_degree = 3;          // Eq. 1: cubic during profiling (BOA uses 1, a linear model)
};

// What profiling learned about one worker.
struct WorkerProfile {
  std::vector<env::BatchTimePoint> points;  // one (batch, trimmed time) per batch size probed
  env::BatchTimeModel model;                // fitted to the points, valid up to the largest batch
};

// Batch sizes probed for a worker that can take up to `up_to` samples: 2, 4, 8, ... below up_to,
// then up_to itself (Alg. 1 line 5; the limit is probed too so the fit covers the whole range).
// {1} for up_to == 1, empty for up_to <= 0.
std::vector<int> profile_batches(int up_to);

// Mean after dropping floor(n * trim_fraction) samples at each end (at least one sample is kept;
// for an even count with full trimming, the mean of the two middle ones, the median).
// Throws std::invalid_argument for no samples or a fraction outside [0, 0.5].
double trimmed_mean(std::vector<double> samples, double trim_fraction);

// Profiles `worker` with probe(worker, batch) -> ms (ClusterView::probe_step_ms) up to `up_to`.
// Throws std::invalid_argument for up_to <= 0 or bad options, std::runtime_error when a probe
// returns a negative or non-finite time (an internal invariant: probes come from validated time
// models or the wall clock).
WorkerProfile profile_worker(const std::function<double(int worker, int batch)>& probe, int worker, int up_to,
                             const ProfileOptions& options);

// A probe on real hardware, which can run out of memory: the step time in ms, or nullopt when the
// batch could not be allocated (Alg. 1 line 10, "if OOM occur").
using FallibleProbe = std::function<std::optional<double>(int batch)>;

struct MemoryBoundProfile {
  WorkerProfile profile;          // the batches that ran, and the model fitted to them
  int max_batch = 0;              // B_lim: the largest batch that ran (Alg. 1 lines 11 and 18)
  bool hit_memory_limit = false;  // a batch failed to allocate before `up_to` was reached
};

// Alg. 1 for this machine: probes profile_batches(up_to) in order until one fails to allocate;
// the batch before it is B_lim. The fit lowers its degree below options.fit_degree while the
// model would predict a negative time at batch 1 (a cubic through points from 2 up can dip there,
// and a negative time means nothing to the solver); if even a line does, the line through the
// origin is used. Throws std::invalid_argument for up_to <= 0 or
// bad options, common::SystemError when not even the first batch fits in memory, and
// std::runtime_error when a probe returns a negative or non-finite time (an internal invariant).
MemoryBoundProfile profile_until_out_of_memory(const FallibleProbe& probe, int up_to, const ProfileOptions& options);

}  // namespace lbb
