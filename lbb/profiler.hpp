// The profiling phase of LBB Alg. 1: time a few training steps of each worker at batch sizes
// 2^p, p >= 1, fit its performance model (Eq. 1) to the points. BOA profiles the same way.
#pragma once

#include <functional>
#include <vector>

#include "env/batch_time_model.hpp"

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
// returns a negative or non-finite time.
WorkerProfile profile_worker(const std::function<double(int worker, int batch)>& probe, int worker, int up_to,
                             const ProfileOptions& options);

}  // namespace lbb
