#include "experiments/runner/cluster_distribution_config.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/errors.hpp"
#include "common/limits.hpp"

namespace experiments {
orchestra::Range read_range(common::YamlReader& r, const std::string& key, orchestra::Range fallback, double min, double max) {
  const YAML::Node node = r.raw(key);
  if (!node || node.IsNull()) return fallback;
  const auto number = [&](const YAML::Node& n) {
    double v = 0;
    try {
      v = n.as<double>();
    } catch (const YAML::Exception&) {
      common::YamlReader::fail_at(n, r.file(), r.key_path(key), "expected a number, got '" + n.Scalar() + "'");
    }
    if (!std::isfinite(v) || !(v >= min && v <= max))
      common::YamlReader::fail_at(n, r.file(), r.key_path(key), "expected a number in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + n.Scalar());
    return v;
  };
  orchestra::Range out = fallback;
  if (node.IsScalar()) {
    out.lo = out.hi = number(node);
  } else if (node.IsSequence() && node.size() == 2 && node[0].IsScalar() && node[1].IsScalar()) {
    out.lo = number(node[0]);
    out.hi = number(node[1]);
    if (out.lo > out.hi) r.fail(key, "expected [lo, hi] with lo <= hi");
  } else {
    r.fail(key, "expected [lo, hi] or one number");
  }
  if (out.log && out.lo <= 0) r.fail(key, "expected values > 0 (drawn log-uniformly)");
  return out;
}

namespace {

orchestra::IntRange read_int_range(common::YamlReader& r, const std::string& key, orchestra::IntRange fallback) {
  const orchestra::Range real = read_range(r, key, {static_cast<double>(fallback.lo), static_cast<double>(fallback.hi)}, 1, common::kMaxWorkers);
  orchestra::IntRange out{static_cast<int>(real.lo), static_cast<int>(real.hi)};
  if (out.lo != real.lo || out.hi != real.hi) r.fail(key, "expected whole numbers");
  return out;
}

orchestra::GpuProfile read_gpu(const YAML::Node& node, const std::string& file, const std::string& path, std::size_t index) {
  common::YamlReader g(node, file, path);
  orchestra::GpuProfile p;
  p.name = g.name("name", "gpu" + std::to_string(index));  // part of the drawn workers' names
  common::YamlReader model = g.child("time_model");
  p.coefficients = model.reals("coefficients", -common::kStepMs.max, common::kStepMs.max);
  if (p.coefficients.empty() || p.coefficients.size() > 4) model.fail("coefficients", "expected 1 to 4 coefficients (a0 + a1 B + a2 B^2 + a3 B^3, ms)");
  model.reject_unknown_keys();
  p.max_batch = static_cast<int>(g.integer("max_batch", p.max_batch, 1, common::kMaxBatch));
  g.reject_unknown_keys();
  return p;
}

}  // namespace

orchestra::ClusterDistribution read_cluster_distribution(common::YamlReader r) {
  orchestra::ClusterDistribution d;
  d.servers = read_int_range(r, "servers", d.servers);
  d.workers_per_server = read_int_range(r, "workers_per_server", d.workers_per_server);
  d.total_workers = read_int_range(r, "total_workers", d.total_workers);
  const auto gpus = r.sequence("gpus");
  for (std::size_t i = 0; i < gpus.size(); ++i) d.profiles.push_back(read_gpu(gpus[i], r.file(), r.key_path("gpus") + "[" + std::to_string(i) + "]", i));
  d.mixed_servers = r.real("mixed_servers", d.mixed_servers, 0.0, 1.0);
  d.equal_workers = r.real("equal_workers", d.equal_workers, 0.0, 1.0);
  d.a0_ms = read_range(r, "a0_ms", d.a0_ms, 0.0, common::kStepMs.max);
  d.a1_ms = read_range(r, "a1_ms", d.a1_ms, 0.0, common::kStepMs.max);
  d.max_batch = static_cast<int>(r.integer("max_batch", d.max_batch, 1, common::kMaxBatch));
  d.speed_jitter = read_range(r, "speed_jitter", d.speed_jitter, 1e-6, 1e6);
  d.inter_gbps = read_range(r, "inter_bandwidth_gbps", d.inter_gbps, 1e-6, 1e6);
  d.intra_gbps = read_range(r, "intra_bandwidth_gbps", d.intra_gbps, 1e-6, 1e6);
  d.inter_latency_us = read_range(r, "inter_latency_us", d.inter_latency_us, 1e-6, 1e9);
  d.intra_latency_us = read_range(r, "intra_latency_us", d.intra_latency_us, 1e-6, 1e9);
  d.message_mb = read_range(r, "message_mb", d.message_mb, 1e-6, 1e9);
  d.noise = read_range(r, "noise", d.noise, 0.0, 10.0);
  {
    common::YamlReader s = r.child("slowdown");
    d.slowdown_probability = s.real("probability", d.slowdown_probability, 0.0, 1.0);
    d.slowdown = read_range(s, "factor", d.slowdown, 1.0, 1e6);
    d.slowdown_start = read_range(s, "start_epochs", d.slowdown_start, 0.0, 1e6);
    d.slowdown_duration = read_range(s, "duration_epochs", d.slowdown_duration, 1e-6, 1e6);
    s.reject_unknown_keys();
  }
  {
    common::YamlReader c = r.child("cyclic");
    d.cyclic_probability = c.real("probability", d.cyclic_probability, 0.0, 1.0);
    d.cyclic_slowdown = read_range(c, "factor", d.cyclic_slowdown, 1.0, 1e6);
    d.cyclic_period = read_range(c, "period_rounds", d.cyclic_period, 1e-6, 1e6);
    c.reject_unknown_keys();
  }
  r.reject_unknown_keys();
  try {
    orchestra::validate(d);
  } catch (const std::invalid_argument& e) {
    throw common::ConfigError(common::where(r.raw("servers"), r.file()) + ": " + r.path() + ": " + e.what());
  }
  return d;
}

}  // namespace experiments
