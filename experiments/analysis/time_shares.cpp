#include "experiments/analysis/time_shares.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "experiments/results/round_series.hpp"

namespace experiments {

TimeShares time_shares(const PolicyResults& p) {
  TimeShares s;
  const double clock_s = p.sim_time_s;
  if (!(clock_s > 0)) return s;
  s.compute = std::isfinite(p.mean_utilization) ? p.mean_utilization : 0.0;
  if (!p.idle_s_per_worker.empty())
    s.idle = std::accumulate(p.idle_s_per_worker.begin(), p.idle_s_per_worker.end(), 0.0) /
             static_cast<double>(p.idle_s_per_worker.size()) / clock_s;
  if (!p.rounds_csv.empty()) {
    const RoundSeries rounds = read_rounds_csv(p.rounds_csv);
    double comm_ms = 0;
    for (const double c : rounds.comm_ms)
      if (std::isfinite(c)) comm_ms += c;
    s.comm = comm_ms / 1000.0 / clock_s;
    s.comm_known = std::any_of(rounds.comm_ms.begin(), rounds.comm_ms.end(), [](double c) { return std::isfinite(c); });
  }
  s.other = std::max(0.0, 1.0 - s.compute - s.idle - s.comm);
  return s;
}

}  // namespace experiments
