#include "env/sim/averaging_round.hpp"

#include <algorithm>
#include <cmath>

#include "env/sim/round_rules.hpp"

namespace env {

double AverageGroup::weight_of(int worker) const {
  for (std::size_t m = 0; m < members.size(); ++m)
    if (members[m] == worker) return weights[m];
  return 0.0;
}

bool AverageGroup::contains(int worker) const { return std::find(members.begin(), members.end(), worker) != members.end(); }

double fednova_effective_steps(int steps, double rho) {
  if (steps <= 0) return 0.0;
  if (rho <= 0) return steps;
  // sum_{k=1..tau} (1 - rho^k) / (1 - rho): step k of momentum SGD from a zero buffer moves by
  // (1 - rho^k) / (1 - rho) gradients.
  return (steps - rho * (1.0 - std::pow(rho, steps)) / (1.0 - rho)) / (1.0 - rho);
}

std::vector<double> GlobalAverage::effective_steps(double rho) const {
  std::vector<double> a;
  for (int s : steps) a.push_back(fednova_effective_steps(s, rho));
  return a;
}

double GlobalAverage::tau_eff(double rho) const {
  double tau = 0;
  for (std::size_t m = 0; m < members.size(); ++m) tau += weights[m] * fednova_effective_steps(steps[m], rho);
  return tau;
}

AveragingRound describe_averaging_round(const RoundPlan& plan, const ClusterSpec& cluster, const EpochData& data) {
  const std::size_t n = plan.workers.size();
  AveragingRound round;
  round.steps.assign(n, 0);
  round.samples.assign(n, 0);
  std::int64_t longest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& w = plan.workers[i];
    const std::int64_t shard = data.shard_remaining(static_cast<int>(i));
    round.steps[i] = std::min<std::int64_t>(w.local_steps, batches_left(shard, w.batch_size));
    round.samples[i] = std::min<std::int64_t>(round.steps[i] * w.batch_size, shard);  // the last batch takes what is left
    longest = std::max(longest, round.steps[i]);
    if (round.steps[i] > 0) round.took_part.push_back(static_cast<int>(i));
  }

  // MLLSGD: local steps in chunks of H1, each but the last closed by an average inside every
  // server over its workers that stepped in the chunk, weight 1/m each.
  round.hierarchical = plan.server_average_every > 0;
  const std::int64_t chunk = round.hierarchical ? plan.server_average_every : std::max<std::int64_t>(longest, 1);
  for (std::int64_t first = 0; first < longest; first += chunk) {
    AveragingChunk c;
    c.first = first;
    c.end = first + chunk;
    if (round.hierarchical && c.end < longest)
      for (int server = 0; server < cluster.num_servers(); ++server) {
        AverageGroup g;
        for (std::size_t i = 0; i < n; ++i)
          if (cluster.workers[i].server == server && round.steps[i] > first) g.members.push_back(static_cast<int>(i));
        if (g.members.empty()) continue;
        g.weights.assign(g.members.size(), 1.0 / static_cast<double>(g.members.size()));
        c.server_averages.push_back(std::move(g));
      }
    round.chunks.push_back(std::move(c));
  }

  // The global average (Orchestra Eq. 2): the workers that took part, uniformly or by their
  // samples; under AllWorkers every worker with 1/N. FedNova's p_i are the sample shares, as
  // BySamples' weights (Wang et al. 2020, Eq. 6).
  if (round.took_part.empty()) return round;
  GlobalAverage& g = round.global;
  g.fednova = plan.weighting == AverageWeighting::FedNova;
  g.outer = plan.outer;
  if (plan.weighting == AverageWeighting::AllWorkers)
    for (std::size_t i = 0; i < n; ++i) g.members.push_back(static_cast<int>(i));
  else
    g.members = round.took_part;
  double total = 0;
  for (int m : round.took_part) total += static_cast<double>(round.samples[static_cast<std::size_t>(m)]);
  const bool by_samples = plan.weighting == AverageWeighting::BySamples || g.fednova;
  for (int m : g.members) {
    const auto i = static_cast<std::size_t>(m);
    g.weights.push_back(by_samples ? static_cast<double>(round.samples[i]) / total : 1.0 / static_cast<double>(g.members.size()));
    g.steps.push_back(static_cast<int>(round.steps[i]));
  }
  return round;
}

}  // namespace env
