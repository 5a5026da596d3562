#include "orchestra/lcm_heuristic.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

namespace orchestra {
namespace {

// Relative tolerance for "T is a multiple of t": floating-point multiples are off by a few ulps.
constexpr double kRelativeTolerance = 1e-9;

double tolerance(double barrier_ms) { return kRelativeTolerance * barrier_ms; }

void validate(const std::vector<double>& batch_ms, const LcmOptions& options) {
  if (batch_ms.empty()) throw std::invalid_argument("lcm_barrier: no batch times (expected one per worker)");
  for (std::size_t n = 0; n < batch_ms.size(); ++n) {
    if (!std::isfinite(batch_ms[n]) || batch_ms[n] <= 0)
      throw std::invalid_argument("lcm_barrier: batch time of worker " + std::to_string(n) +
                                  " must be a positive finite number of ms, got " + std::to_string(batch_ms[n]));
  }
  if (options.max_step_spread < 0)
    throw std::invalid_argument("lcm_barrier: max_step_spread (M) must be >= 0, got " +
                                std::to_string(options.max_step_spread));
  if (options.max_local_steps < 1)
    throw std::invalid_argument("lcm_barrier: max_local_steps must be >= 1, got " +
                                std::to_string(options.max_local_steps));
  if (!std::isfinite(options.comm_ms) || options.comm_ms < 0)
    throw std::invalid_argument("lcm_barrier: comm_ms must be a finite number of ms >= 0, got " +
                                std::to_string(options.comm_ms));
}

// (t_W + C) / (T + C): the share of a round the least busy worker does not compute.
double round_waste(double idle_ms, double barrier_ms, double comm_ms) {
  return (idle_ms + comm_ms) / (barrier_ms + comm_ms);
}

// The result at a given T: tau, per-worker idle (snapped to 0 inside the tolerance) and spread.
LcmResult evaluate(double barrier_ms, const std::vector<double>& batch_ms, double comm_ms) {
  LcmResult result;
  result.barrier_ms = barrier_ms;
  const std::size_t n_workers = batch_ms.size();
  result.local_steps.resize(n_workers);
  result.idle_ms.resize(n_workers);
  int lo = std::numeric_limits<int>::max();
  int hi = 0;
  for (std::size_t n = 0; n < n_workers; ++n) {
    const int tau = steps_within(barrier_ms, batch_ms[n]);
    double idle = barrier_ms - tau * batch_ms[n];
    if (idle <= tolerance(barrier_ms)) idle = 0;
    result.local_steps[n] = tau;
    result.idle_ms[n] = idle;
    result.max_idle_ms = std::max(result.max_idle_ms, idle);
    lo = std::min(lo, tau);
    hi = std::max(hi, tau);
  }
  result.step_spread = hi - lo;
  result.round_waste = round_waste(result.max_idle_ms, barrier_ms, comm_ms);
  return result;
}

}  // namespace

int steps_within(double barrier_ms, double batch_ms) {
  const double q = std::floor((barrier_ms + tolerance(barrier_ms)) / batch_ms);
  if (q >= static_cast<double>(std::numeric_limits<int>::max())) return std::numeric_limits<int>::max();
  return q < 0 ? 0 : static_cast<int>(q);
}

LcmResult lcm_barrier(const std::vector<double>& batch_ms, const LcmOptions& options) {
  validate(batch_ms, options);
  const std::size_t n_workers = batch_ms.size();
  // tau_n = floor(T/t_n) is non-increasing in t_n, so the spread is tau(fastest) - tau(slowest).
  const auto [fastest_it, slowest_it] = std::minmax_element(batch_ms.begin(), batch_ms.end());
  const auto fastest = static_cast<std::size_t>(fastest_it - batch_ms.begin());
  const auto slowest = static_cast<std::size_t>(slowest_it - batch_ms.begin());

  // Orchestra 3.1.1 step (1): T starts at the largest batch time.
  double barrier = *slowest_it;
  std::vector<int> tau(n_workers);
  std::vector<double> finish(n_workers);  // tau_n t_b^n: when worker n's last whole step ends
  std::multiset<double> finishes;         // its minimum gives t_W = T - min_n finish_n
  using Event = std::pair<double, std::size_t>;  // (next multiple of t_b^n, n)
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> next;
  for (std::size_t n = 0; n < n_workers; ++n) {
    tau[n] = steps_within(barrier, batch_ms[n]);
    finish[n] = tau[n] * batch_ms[n];
    finishes.insert(finish[n]);
    next.emplace((tau[n] + 1) * batch_ms[n], n);
  }

  const auto within_limits = [&] {
    return tau[fastest] - tau[slowest] <= options.max_step_spread && tau[fastest] <= options.max_local_steps;
  };
  if (!within_limits()) {
    LcmResult result = evaluate(barrier, batch_ms, options.comm_ms);
    result.constraints_met = false;
    result.candidates = 1;
    return result;
  }

  const bool by_idle = options.objective == LcmObjective::Idle;
  // The objective at T for an idle time t_W: t_W itself, or the round's non-computing share.
  const auto score = [&](double idle, double at) { return by_idle ? idle : round_waste(idle, at, options.comm_ms); };
  // "Strictly better": by more than the tolerance of a multiple (Idle, in ms) or by more than
  // rounding (Utilization, a ratio), so that ties go to the smaller T.
  const auto better = [&](double candidate, double best, double at) {
    return by_idle ? candidate < best - tolerance(at) : candidate < best * (1 - kRelativeTolerance);
  };
  double best_barrier = barrier;
  double idle = std::max(0.0, barrier - *finishes.begin());
  if (idle <= tolerance(barrier)) idle = 0;
  double best_score = score(idle, barrier);
  std::int64_t candidates = 1;
  // A zero score cannot be beaten, and ties go to the smaller T: stop there. (With communication
  // the Utilization score is never 0: a larger T always amortizes C further.)
  while (best_score > 0) {
    // Step (3): the next candidate is the next multiple of any batch time; every worker whose
    // multiple falls on it (within the tolerance) gains a step.
    barrier = next.top().first;
    while (!next.empty() && next.top().first <= barrier + tolerance(barrier)) {
      const std::size_t n = next.top().second;
      next.pop();
      finishes.erase(finishes.find(finish[n]));
      ++tau[n];
      finish[n] = tau[n] * batch_ms[n];
      finishes.insert(finish[n]);
      next.emplace((tau[n] + 1) * batch_ms[n], n);
    }
    if (!within_limits()) break;
    ++candidates;
    // Step (2): t_W = max_n (T - tau_n t_b^n).
    idle = std::max(0.0, barrier - *finishes.begin());
    if (idle <= tolerance(barrier)) idle = 0;
    const double candidate = score(idle, barrier);
    if (better(candidate, best_score, barrier)) {
      best_score = candidate;
      best_barrier = barrier;
    }
  }

  LcmResult result = evaluate(best_barrier, batch_ms, options.comm_ms);
  result.candidates = candidates;
  return result;
}

}  // namespace orchestra
