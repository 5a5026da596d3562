#include "orchestra/cluster_distribution.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>

#include "orchestra/lcm_heuristic.hpp"

namespace orchestra {
namespace {

[[noreturn]] void bad(const std::string& field, const std::string& message) {
  throw std::invalid_argument("cluster distribution: " + field + ": " + message);
}

void check(const Range& r, const std::string& field, double floor = 0.0) {
  if (!(std::isfinite(r.lo) && std::isfinite(r.hi)) || r.lo > r.hi)
    bad(field, "expected [lo, hi] with lo <= hi, got [" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + "]");
  if (r.lo < floor) bad(field, "expected values >= " + std::to_string(floor) + ", got " + std::to_string(r.lo));
  if (r.log && r.lo <= 0) bad(field, "a log-uniform range needs lo > 0, got " + std::to_string(r.lo));
}

void check(const IntRange& r, const std::string& field) {
  if (r.lo < 1 || r.lo > r.hi) bad(field, "expected [lo, hi] with 1 <= lo <= hi, got [" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + "]");
}

void check_probability(double p, const std::string& field) {
  if (!(p >= 0 && p <= 1)) bad(field, "expected a probability in [0, 1], got " + std::to_string(p));
}

// Uniform doubles from 53 random bits, so one seed gives one cluster with any standard library.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : rng_(seed) {}
  double unit() { return static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0); }
  double in(const Range& r) {
    const double u = unit();
    if (r.log) return std::exp(std::log(r.lo) + u * (std::log(r.hi) - std::log(r.lo)));
    return r.lo + u * (r.hi - r.lo);
  }
  int in(const IntRange& r) { return r.lo + static_cast<int>(rng_() % static_cast<std::uint64_t>(r.hi - r.lo + 1)); }
  std::size_t index(std::size_t size) { return static_cast<std::size_t>(rng_() % size); }
  bool chance(double p) { return unit() < p; }

 private:
  std::mt19937_64 rng_;
};

GpuProfile drawn_gpu(const ClusterDistribution& d, Draws& draws) {
  GpuProfile g;
  g.name = "gpu";
  g.coefficients = {draws.in(d.a0_ms), draws.in(d.a1_ms)};
  g.max_batch = d.max_batch;
  return g;
}

GpuProfile pick_gpu(const ClusterDistribution& d, Draws& draws) {
  return d.profiles.empty() ? drawn_gpu(d, draws) : d.profiles[draws.index(d.profiles.size())];
}

}  // namespace

void validate(const ClusterDistribution& d) {
  check(d.servers, "servers");
  check(d.workers_per_server, "workers_per_server");
  check(d.total_workers, "total_workers");
  if (d.total_workers.lo > d.servers.hi * d.workers_per_server.hi || d.total_workers.hi < d.servers.lo * d.workers_per_server.lo)
    bad("total_workers", "no draw of servers x workers_per_server falls inside it");
  for (std::size_t i = 0; i < d.profiles.size(); ++i) {
    const auto& p = d.profiles[i];
    if (p.coefficients.empty() || p.coefficients.size() > 4) bad("profiles[" + std::to_string(i) + "]", "expected 1 to 4 coefficients");
    if (p.max_batch < 1) bad("profiles[" + std::to_string(i) + "].max_batch", "expected an integer >= 1");
  }
  check_probability(d.mixed_servers, "mixed_servers");
  check_probability(d.equal_workers, "equal_workers");
  check(d.a0_ms, "a0_ms");
  check(d.a1_ms, "a1_ms");
  check(d.speed_jitter, "speed_jitter", 1e-9);
  check(d.inter_gbps, "inter_gbps", 1e-9);
  check(d.intra_gbps, "intra_gbps", 1e-9);
  check(d.inter_latency_us, "inter_latency_us");
  check(d.intra_latency_us, "intra_latency_us");
  check(d.message_mb, "message_mb", 1e-9);
  check(d.noise, "noise");
  check_probability(d.slowdown_probability, "slowdown_probability");
  check(d.slowdown, "slowdown", 1.0);
  check(d.slowdown_start, "slowdown_start");
  check(d.slowdown_duration, "slowdown_duration", 1e-9);
  check_probability(d.cyclic_probability, "cyclic_probability");
  check(d.cyclic_slowdown, "cyclic_slowdown", 1.0);
  check(d.cyclic_period, "cyclic_period", 1e-9);
  if (d.max_batch < 1) bad("max_batch", "expected an integer >= 1");
}

double draw_in(const Range& range, std::uint64_t seed) {
  Draws draws(seed);
  return draws.in(range);
}

DrawnCluster draw_cluster(const ClusterDistribution& d, std::uint64_t seed, int global_batch, std::int64_t train_samples) {
  validate(d);
  if (global_batch < 1) bad("global_batch", "expected a positive integer");
  Draws draws(seed);
  DrawnCluster out;
  int servers = 0, per_server = 0;
  do {  // the bounds were checked to admit a draw
    servers = draws.in(d.servers);
    per_server = draws.in(d.workers_per_server);
  } while (servers * per_server < d.total_workers.lo || servers * per_server > d.total_workers.hi);

  // Drawn only when asked for, so that a distribution without it keeps its clusters seed for seed.
  const bool one_speed = d.equal_workers > 0 && draws.chance(d.equal_workers);
  const GpuProfile cluster_gpu = one_speed ? pick_gpu(d, draws) : GpuProfile{};
  const double cluster_jitter = one_speed ? draws.in(d.speed_jitter) : 1.0;
  for (int s = 0; s < servers; ++s) {
    const std::string server = "s" + std::to_string(s);
    out.cluster.server_names.push_back(server);
    const bool mixed = !one_speed && draws.chance(d.mixed_servers);
    const GpuProfile shared = one_speed ? cluster_gpu : pick_gpu(d, draws);
    for (int w = 0; w < per_server; ++w) {
      const GpuProfile gpu = mixed ? pick_gpu(d, draws) : shared;
      const double jitter = one_speed ? cluster_jitter : draws.in(d.speed_jitter);
      std::vector<double> coefficients = gpu.coefficients;
      for (double& c : coefficients) c *= jitter;
      env::WorkerSpec worker;
      worker.name = server + "." + gpu.name + "-" + std::to_string(w);
      worker.time_model = std::make_shared<const env::BatchTimeModel>(coefficients);
      worker.max_batch = gpu.max_batch;
      worker.noise = draws.in(d.noise);
      worker.server = s;
      out.cluster.workers.push_back(std::move(worker));
    }
  }

  const auto to_link = [](double gbps, double latency_us) {
    env::LinkSpec link;
    link.bytes_per_ms = gbps * 1e9 / 8.0 / 1000.0;
    link.alpha_ms = latency_us / 1000.0;
    return link;
  };
  out.network.inter_server = to_link(draws.in(d.inter_gbps), draws.in(d.inter_latency_us));
  out.network.intra_server = to_link(draws.in(d.intra_gbps), draws.in(d.intra_latency_us));
  out.network.message_bytes = draws.in(d.message_mb) * 1e6;

  // The reference times: LCM's round on the nominal batch times (see the header).
  const int n = out.cluster.num_workers();
  const int equal = std::max(1, global_batch / n);
  std::vector<double> batch_ms;
  double samples_per_round = 0;
  for (const auto& w : out.cluster.workers) batch_ms.push_back(w.time_model->eval(std::min(equal, w.max_batch)));
  const env::LinkSpec& link = servers > 1 ? out.network.inter_server : out.network.intra_server;
  const double comm_ms = env::ring_allreduce_ms(n, out.network.message_bytes, link);
  const LcmResult lcm = lcm_barrier(batch_ms, LcmOptions{8, 64, LcmObjective::Utilization, comm_ms});
  for (int i = 0; i < n; ++i)
    samples_per_round += static_cast<double>(lcm.local_steps[static_cast<std::size_t>(i)]) *
                         std::min(equal, out.cluster.workers[static_cast<std::size_t>(i)].max_batch);
  out.reference_barrier_ms = lcm.barrier_ms;
  out.reference_comm_ms = comm_ms;
  out.reference_round_s = (lcm.barrier_ms + comm_ms) / 1000.0;
  out.reference_epoch_s = std::ceil(static_cast<double>(std::max<std::int64_t>(train_samples, 1)) / samples_per_round) * out.reference_round_s;

  if (draws.chance(d.slowdown_probability)) {
    env::Perturbation p;
    p.worker = static_cast<int>(draws.index(static_cast<std::size_t>(n)));
    p.slowdown = draws.in(d.slowdown);
    p.start_s = draws.in(d.slowdown_start) * out.reference_epoch_s;
    p.end_s = p.start_s + draws.in(d.slowdown_duration) * out.reference_epoch_s;
    out.cluster.perturbations.push_back(p);
  }
  if (draws.chance(d.cyclic_probability)) {
    env::Perturbation p;
    p.worker = static_cast<int>(draws.index(static_cast<std::size_t>(n)));
    p.slowdown = draws.in(d.cyclic_slowdown);
    p.period_s = draws.in(d.cyclic_period) * out.reference_round_s;
    p.active_s = p.period_s / 2;
    out.cluster.perturbations.push_back(p);
  }
  return out;
}

}  // namespace orchestra
