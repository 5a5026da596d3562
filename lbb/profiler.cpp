#include "lbb/profiler.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/errors.hpp"

namespace lbb {

std::vector<int> profile_batches(int up_to) {
  std::vector<int> batches;
  if (up_to <= 0) return batches;
  if (up_to == 1) return {1};
  for (long long b = 2; b < up_to; b *= 2) batches.push_back(static_cast<int>(b));
  batches.push_back(up_to);
  return batches;
}

double trimmed_mean(std::vector<double> samples, double trim_fraction) {
  if (samples.empty()) throw std::invalid_argument("trimmed_mean: no samples");
  if (!(trim_fraction >= 0.0 && trim_fraction <= 0.5))
    throw std::invalid_argument("trimmed_mean: trim fraction must be in [0, 0.5], got " +
                                std::to_string(trim_fraction));
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  const std::size_t cut =
      std::min(static_cast<std::size_t>(std::floor(static_cast<double>(n) * trim_fraction)), (n - 1) / 2);
  double sum = 0.0;
  for (std::size_t i = cut; i < n - cut; ++i) sum += samples[i];
  return sum / static_cast<double>(n - 2 * cut);
}

WorkerProfile profile_worker(const std::function<double(int worker, int batch)>& probe, int worker, int up_to,
                             const ProfileOptions& options) {
  if (!probe) throw std::invalid_argument("profile_worker: the cluster has no probe_step_ms");
  if (up_to <= 0)
    throw std::invalid_argument("profile_worker: worker " + std::to_string(worker) +
                                " has nothing to profile (max batch " + std::to_string(up_to) + ")");
  if (options.repetitions < 1)
    throw std::invalid_argument("profile_worker: repetitions must be >= 1, got " +
                                std::to_string(options.repetitions));
  WorkerProfile profile;
  for (int batch : profile_batches(up_to)) {
    std::vector<double> times;
    for (int r = 0; r < options.repetitions; ++r) {
      const double ms = probe(worker, batch);
      // An internal invariant: probes come from validated time models or the wall clock.
      if (!std::isfinite(ms) || ms < 0)
        throw std::runtime_error("profiling worker " + std::to_string(worker) + " at batch " + std::to_string(batch) +
                                 ": the probe returned " + std::to_string(ms) + " ms");
      times.push_back(ms);
    }
    profile.points.push_back({static_cast<double>(batch), trimmed_mean(std::move(times), options.trim_fraction)});
  }
  profile.model = env::BatchTimeModel::fit(profile.points, options.fit_degree);
  return profile;
}

MemoryBoundProfile profile_until_out_of_memory(const FallibleProbe& probe, int up_to, const ProfileOptions& options) {
  if (!probe) throw std::invalid_argument("profile_until_out_of_memory: no probe");
  if (up_to <= 0) throw std::invalid_argument("profile_until_out_of_memory: the batch limit must be positive, got " + std::to_string(up_to));
  if (options.repetitions < 1)
    throw std::invalid_argument("profile_until_out_of_memory: repetitions must be >= 1, got " + std::to_string(options.repetitions));
  if (options.fit_degree < 1 || options.fit_degree > 3)
    throw std::invalid_argument("profile_until_out_of_memory: fit degree must be 1, 2 or 3, got " + std::to_string(options.fit_degree));
  MemoryBoundProfile out;
  // One untimed step first: a process's first step pays for allocation, caches and the thread
  // pool's start (2-20x a steady step here), which the trimmed mean of a few repetitions kept in
  // the smallest batch's time, bending the fitted curve. Alg. 1 times steady steps.
  if (!probe(profile_batches(up_to).front()))
    throw common::SystemError("profiling: not even a batch of " + std::to_string(profile_batches(up_to).front()) + " fits in memory");
  for (int batch : profile_batches(up_to)) {
    std::vector<double> times;
    for (int r = 0; r < options.repetitions && !out.hit_memory_limit; ++r) {
      const std::optional<double> ms = probe(batch);
      if (!ms) {
        out.hit_memory_limit = true;  // Alg. 1 lines 10-12: B_lim is the batch before
        break;
      }
      if (!std::isfinite(*ms) || *ms < 0)  // an internal invariant: a measured time
        throw std::runtime_error("profiling at batch " + std::to_string(batch) + ": the probe returned " + std::to_string(*ms) + " ms");
      times.push_back(*ms);
    }
    if (out.hit_memory_limit) break;
    out.profile.points.push_back({static_cast<double>(batch), trimmed_mean(std::move(times), options.trim_fraction)});
    out.max_batch = batch;
  }
  if (out.profile.points.empty())
    throw common::SystemError("profiling: not even a batch of " + std::to_string(profile_batches(up_to).front()) +
                              " fits in memory");
  for (int degree = options.fit_degree; degree >= 1; --degree) {
    out.profile.model = env::BatchTimeModel::fit(out.profile.points, degree);
    if (out.profile.model.eval(1) >= 0) return out;
  }
  // Even the line crosses zero before batch 1: the least-squares line through the origin, which
  // cannot (the times are >= 0).
  double bt = 0.0, bb = 0.0;
  for (const auto& p : out.profile.points) bt += p.batch * p.ms, bb += p.batch * p.batch;
  out.profile.model = env::BatchTimeModel({0.0, bt / bb}, out.profile.points.back().batch);
  return out;
}

}  // namespace lbb
