#include "env/sim/cluster.hpp"

#include <algorithm>
#include <cmath>

namespace env {

std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

bool Perturbation::active_at(double time_s) const {
  if (time_s < start_s || time_s >= end_s) return false;
  if (period_s <= 0) return true;
  // The time into the current period. fmod(0.3 - 0.1, 0.1) is 0.0999...: a step at the very start
  // of a period (a multiple of period_s in decimal) read as the period's end. A time within 1e-9
  // periods below a boundary counts as the boundary.
  const double periods = (time_s - start_s) / period_s;
  const double into = std::max(0.0, (periods - std::floor(periods + 1e-9)) * period_s);
  return into < active_s;
}

SimulatedCluster::SimulatedCluster(ClusterSpec spec, std::uint64_t seed)
    : spec_(std::move(spec)), perturbations_of_(spec_.workers.size()), normals_(spec_.workers.size()), trace_steps_(spec_.workers.size(), 0) {
  rngs_.reserve(spec_.workers.size());
  for (std::size_t i = 0; i < spec_.workers.size(); ++i) rngs_.emplace_back(derive_seed(seed, 1000 + i));
  for (const auto& p : spec_.perturbations)
    if (p.worker >= 0 && p.worker < spec_.num_workers()) perturbations_of_[p.worker].push_back(p);
}

double SimulatedCluster::step_ms(int worker, int batch, double now_ms) {
  if (batch <= 0) return 0.0;
  const auto i = static_cast<std::size_t>(worker);
  const WorkerSpec& w = spec_.workers[i];
  return perturbed(worker, w.trace ? w.trace->step_ms(trace_steps_[i]++, batch) : w.time_model->eval(batch), now_ms);
}

double SimulatedCluster::probe_ms(int worker, int batch, double now_ms) {
  if (batch <= 0) return 0.0;
  return perturbed(worker, spec_.workers[static_cast<std::size_t>(worker)].time_model->eval(batch), now_ms);
}

double SimulatedCluster::perturbed(int worker, double base_ms, double now_ms) {
  const WorkerSpec& w = spec_.workers[static_cast<std::size_t>(worker)];
  double ms = base_ms;
  if (w.noise > 0) {
    // Log-normal with mean 1: exp(sigma z - sigma^2 / 2) never makes a step negative.
    const auto i = static_cast<std::size_t>(worker);
    const double z = normals_[i](rngs_[i]);
    ms *= std::exp(w.noise * z - 0.5 * w.noise * w.noise);
  }
  for (const auto& p : perturbations_of_[static_cast<std::size_t>(worker)])
    if (p.active_at(now_ms / 1000.0)) ms = ms * p.slowdown + p.add_ms;
  return ms;
}

}  // namespace env
