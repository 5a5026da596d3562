#include "experiments/calibration/calibrated_config.hpp"

#include <cmath>

#include "experiments/results/round_csv.hpp"

namespace experiments::calibration {
namespace {

using experiments::csv_number;

std::string numbers(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + csv_number(v[i]);
  return out + "]";
}

// A JSON value is YAML in flow style; compact, one line.
std::string flow(const nlohmann::json& j) { return j.dump(); }

}  // namespace

std::string calibrated_config_yaml(const Calibration& c, const RealRun& real) {
  const nlohmann::json& cfg = real.config;
  std::string y;
  y += kCalibratedMarker + c.real_dir + "` from a real run (orchestra launch): " + std::to_string(c.policies.size()) +
       " policies, " + std::to_string(c.rounds) + " rounds of rounds.csv.\n";
  y += "# The same experiment as the real run (data, model, training, runtime, policies, perturbations) on a\n";
  y += "# simulated cluster whose times were fitted to what the real run measured. Each fitted number\n";
  y += "# says where it came from. Clocks: the real run's is wall time spent training (profiling\n";
  y += "# included; evaluation and result writing excluded); this one's is the cost model's, which charges\n";
  y += "# compute, all-reduces and the round overhead below, and nothing for evaluation either.\n";
  y += "name: " + flow(cfg.value("name", real.name) + "-calibrated") + "\n";
  y += "seed: " + flow(cfg.value("seed", 1)) + "\n";
  for (const char* section : {"data", "model", "training", "runtime", "output"})
    if (cfg.contains(section)) y += std::string(section) + ": " + flow(cfg[section]) + "\n";

  y += "cluster:\n  mode: simulated\n  workers:\n";
  for (const auto& w : c.workers) {
    const auto& f = w.fit;
    y += "    # " + w.name + ": LBB Eq. 1, " + form_name(f.form) + " (lower BIC: linear " + csv_number(f.bic_linear) +
         (std::isnan(f.bic_cubic) ? ", cubic not a candidate: under 4 distinct batches" : ", cubic " + csv_number(f.bic_cubic)) +
         ")" + (f.through_origin ? " through the origin (the free line's intercept was negative)" : "") +
         (f.flat ? " flat at the mean (the free line fell: the batch's effect is below the noise)" : "") + ", least squares over " +
         std::to_string(f.points) +
         (w.source == PointSource::Profile ? " points of `orchestra profile` (" + w.profile_file + ")"
                                           : " (local batch, compute_ms / local_steps) points of the real rounds.csv, perturbations divided out") +
         "; batches " + csv_number(f.distinct_batches.front()) + ".." + csv_number(f.distinct_batches.back()) + "; residual RMS " +
         csv_number(f.rms_ms) + " ms (" + csv_number(100 * f.rms_relative) + "%).\n";
    y += "    # noise: the log-normal sigma of the same residuals (each point weighted by its local steps).\n";
    y += "    - {name: " + flow(w.name) + ", server: " + flow(w.server) + ", max_batch: " + std::to_string(w.max_batch) +
         ", noise: " + csv_number(f.noise_sigma) + ", time_model: {coefficients: " + numbers(f.coefficients) + "}}\n";
  }
  const nlohmann::json cluster = cfg.value("cluster", nlohmann::json::object());
  if (cluster.contains("perturbations") && !cluster["perturbations"].empty()) {
    y += "  # The real run's perturbations, as given: its measured steps include them, the fits above do not.\n";
    y += "  perturbations: " + flow(cluster["perturbations"]) + "\n";
  }
  const auto& o = c.overhead;
  y += "  # What a real round costs besides compute and the all-reduce (plan broadcast, gathering the times,\n";
  y += "  # optimizer step, data loading, the run loop between rounds): per round, round_ms - comm_ms - the\n";
  y += "  # slowest compute_ms, least squares on that worker's local steps over " + std::to_string(o.rounds) +
       " rounds (residual RMS " + csv_number(o.rms_ms) + " ms),\n";
  y += "  # plus the median gap between one round's end and the next one's start (" + csv_number(o.median_gap_ms) + " ms).\n";
  y += "  round_overhead: {fixed_ms: " + csv_number(o.overhead.fixed_ms) + ", per_step_ms: " + csv_number(o.overhead.per_step_ms) + "}\n";

  nlohmann::json network = cfg.value("network", nlohmann::json::object());
  const auto& n = c.network;
  const std::string latency = c.intra_server ? "intra_latency_us" : "latency_us", bandwidth = c.intra_server ? "intra_bandwidth_gbps" : "bandwidth_gbps";
  network[latency] = n.link.alpha_ms * 1000.0;
  network[bandwidth] = n.link.bytes_per_ms * 8.0 * 1000.0 / 1e9;
  y += "# network: " + latency + " and " + bandwidth + " from the alpha-beta ring model (2(N-1) alpha + 2(N-1)/N bytes / beta)\n";
  y += "# fitted to the comm_ms of " + std::to_string(n.rounds) + " all-reduces of " + csv_number(c.message_bytes) + " bytes (mean " +
       csv_number(n.mean_ms) + " ms, residual RMS " + csv_number(n.rms_ms) + " ms); " +
       (n.kind == NetworkFitKind::AlphaOnly ? "one message size and rank count leave alpha and beta inseparable, so the bandwidth is the real run's configured one and the latency takes the rest"
                                            : "both fitted") +
       ". The other link's keys are the real run's.\n";
  y += "network: " + flow(network) + "\n";
  y += "policies:\n";
  for (const auto& p : real.policies) y += "  - " + flow(policy_entry(p.policy)) + "\n";
  return y;
}

std::vector<std::pair<std::string, std::string>> step_traces(const RealRun& real, const experiments::ExperimentConfig& config) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& p : real.policies) {
    std::string csv = kTraceHeader;
    for (std::size_t i = 0; i < config.cluster.workers.size(); ++i) {
      const std::string& name = config.cluster.workers[i].name;
      RealRun one{real.dir, real.name, real.config, {p}};
      const auto steps = measured_steps(one, config, static_cast<int>(i));
      // Rows per worker in order; the round's start clock stands for each of its steps, advanced by the steps before.
      const experiments::WorkerSeries* w = nullptr;
      for (const auto& s : p.rounds.workers)
        if (s.name == name) w = &s;
      std::size_t k = 0;
      for (std::size_t r = 0; w && r < p.rounds.round.size() && k < steps.size(); ++r) {
        if (!(w->local_steps[r] >= 1) || !(w->batch_size[r] >= 1) || !std::isfinite(w->compute_ms[r])) continue;
        const MeasuredStep& m = steps[k++];
        double clock = std::isfinite(p.rounds.clock_ms[r]) && std::isfinite(p.rounds.round_ms[r]) ? p.rounds.clock_ms[r] - p.rounds.round_ms[r] : 0.0;
        for (int s = 0; s < m.steps; ++s, clock += m.ms)
          csv += name + ',' + csv_number(clock) + ',' + csv_number(m.batch) + ',' + csv_number(m.ms) + '\n';
      }
    }
    out.emplace_back(p.label, csv);
  }
  return out;
}

}  // namespace experiments::calibration
