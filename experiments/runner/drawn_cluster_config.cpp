#include "experiments/runner/drawn_cluster_config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "common/errors.hpp"
#include "common/yaml_file.hpp"
#include "common/number_text.hpp"
#include "env/train/dataset.hpp"
#include "experiments/config/config.hpp"
#include "experiments/config/config_copy.hpp"

namespace experiments {
namespace {

// The shortest text that reads back to the same double.
std::string number(double v) { return common::shortest_number_text(v); }

std::string coefficients(const std::vector<double>& c) {
  std::string out = "[";
  for (std::size_t i = 0; i < c.size(); ++i) out += (i ? ", " : "") + number(c[i]);
  return out + "]";
}

// A name as a YAML scalar: plain when it reads back as the same text, else double-quoted (JSON's
// quoting is YAML's). Names are checked when read (common/names.hpp), but `: ` or `#` in one
// would still end a flow mapping's plain scalar.
std::string yaml_name(const std::string& name) {
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  static const char* const kWords[] = {"null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE",
                                       "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "n", "Y", "N"};
  const bool word = std::find(std::begin(kWords), std::end(kWords), name) != std::end(kWords);
  if (plain && !word && name.front() != '-' && name.front() != '.') return name;
  std::string quoted = "\"";
  for (const char c : name) quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return quoted + "\"";
}

// The drawn servers, workers and perturbations in the config's `cluster:` form.
std::string cluster_yaml(const env::ClusterSpec& c) {
  std::ostringstream y;
  y << "cluster:\n  servers:\n";
  for (int s = 0; s < c.num_servers(); ++s) {
    y << "    - name: " << yaml_name(c.server_names[static_cast<std::size_t>(s)]) << "\n      workers:\n";
    for (const auto& w : c.workers) {
      if (w.server != s) continue;
      y << "        - {name: " << yaml_name(w.name) << ", time_model: {coefficients: " << coefficients(w.time_model->coefficients())
        << "}, max_batch: " << w.max_batch << ", noise: " << number(w.noise) << "}\n";
    }
  }
  if (!c.perturbations.empty()) {
    y << "  perturbations:\n";
    for (const auto& p : c.perturbations) {
      y << "    - {worker: " << yaml_name(c.workers[static_cast<std::size_t>(p.worker)].name) << ", start_s: " << number(p.start_s);
      if (std::isfinite(p.end_s)) y << ", end_s: " << number(p.end_s);
      y << ", slowdown: " << number(p.slowdown);
      if (p.add_ms > 0) y << ", add_ms: " << number(p.add_ms);
      if (p.period_s > 0) y << ", period_s: " << number(p.period_s) << ", active_s: " << number(p.active_s);
      y << "}\n";
    }
  }
  return y.str();
}

// The config's units: Gbit/s and microseconds (config.cpp read_network is the inverse).
std::string network_yaml(const env::NetworkSpec& n) {
  const auto gbps = [](const env::LinkSpec& l) { return number(l.bytes_per_ms * 1000.0 * 8.0 / 1e9); };
  const auto us = [](const env::LinkSpec& l) { return number(l.alpha_ms * 1000.0); };
  std::ostringstream y;
  y << "network:\n"
    << "  bandwidth_gbps: " << gbps(n.inter_server) << "\n"
    << "  latency_us: " << us(n.inter_server) << "\n"
    << "  intra_bandwidth_gbps: " << gbps(n.intra_server) << "\n"
    << "  intra_latency_us: " << us(n.intra_server) << "\n"
    << "  message_mb: " << number(n.message_bytes / 1e6) << "\n";
  return y.str();
}

// One line describing the cluster, for the file's header: what a reader wants to know first.
std::string summary(const orchestra::DrawnCluster& d) {
  std::ostringstream s;
  s << d.cluster.num_workers() << " workers on " << d.cluster.num_servers() << " server" << (d.cluster.num_servers() > 1 ? "s" : "");
  s << "; reference round " << number(std::round(d.reference_round_s * 1000.0) / 1000.0) << " s, epoch "
    << number(std::round(d.reference_epoch_s * 10.0) / 10.0) << " s";
  for (const auto& p : d.cluster.perturbations)
    s << (p.period_s > 0 ? "; a cyclic disturbance" : "; a slowdown") << " of x" << number(std::round(p.slowdown * 100.0) / 100.0);
  return s.str();
}

}  // namespace

std::string drawn_cluster_yaml(const orchestra::DrawnCluster& drawn, const std::string& workload_path, const std::string& name,
                               const std::string& provenance) {
  const YAML::Node workload = common::read_yaml_file(workload_path);
  // Everything of the workload but what the draw replaces.
  YAML::Node rest(YAML::NodeType::Map);
  for (const auto& kv : workload) {
    const std::string key = kv.first.Scalar();
    if (key != "name" && key != "cluster" && key != "network") rest[key] = kv.second;
  }
  anchor_relative_paths(rest, workload_path);  // the drawn config is written in draw's --out folder
  YAML::Emitter emitted;
  emitted << rest;
  std::ostringstream y;
  y << "# " << provenance << "\n# " << summary(drawn) << ".\n"
    << "name: " << name << "\n"
    << emitted.c_str() << "\n"
    << cluster_yaml(drawn.cluster) << network_yaml(drawn.network);
  return y.str();
}

std::vector<DrawnClusterConfig> draw_cluster_configs(const TrainConfig& config, std::uint64_t first_seed, int count,
                                                     const DrawFilter& filter) {
  if (!config.distribution) throw common::ConfigError(config.file + ": clusters: the config has no cluster distribution to draw from");
  if (config.experiments.empty()) throw common::ConfigError(config.file + ": experiments: no workload to run the drawn clusters on");
  const std::string& workload = config.experiments.front();
  const ExperimentConfig exp = load_config(workload);
  // The training environment draws with the workload's global batch and training-set size.
  const std::int64_t samples = env::load_dataset(exp.data, exp.seed).train.size();
  const auto keep = [&](const orchestra::DrawnCluster& c) {
    return c.reference_comm_ms >= filter.min_comm_over_barrier * c.reference_barrier_ms;
  };
  const std::uint64_t max_tries = static_cast<std::uint64_t>(std::max(count, 0)) * static_cast<std::uint64_t>(std::max(filter.max_tries_per_cluster, 1));
  std::vector<DrawnClusterConfig> out;
  for (std::uint64_t tried = 0; static_cast<int>(out.size()) < count; ++tried) {
    if (tried >= max_tries) {
      std::ostringstream msg;
      msg << config.file << ": clusters: only " << out.size() << " of " << tried << " clusters drawn from seed " << first_seed
          << " have an all-reduce of at least " << filter.min_comm_over_barrier << " times LCM's T*; " << count
          << " were asked for (a lower ratio, or a distribution with slower networks or larger messages)";
      throw common::ConfigError(msg.str());
    }
    DrawnClusterConfig d;
    d.seed = first_seed + tried;
    d.name = "drawn-" + std::to_string(d.seed);
    d.cluster = orchestra::draw_cluster(*config.distribution, d.seed, exp.global_batch, samples);
    if (!keep(d.cluster)) continue;
    d.yaml = drawn_cluster_yaml(d.cluster, workload, d.name,
                                std::string(kDrawnConfigMarker + 2) + config.file + " (clusters:, seed " + std::to_string(d.seed) +
                                    ") on the workload of " + workload + " (orchestra draw).");
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace experiments
