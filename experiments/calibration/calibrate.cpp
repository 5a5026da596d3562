#include "experiments/calibration/calibrate.hpp"

#include <cmath>
#include <cstdio>

#include "common/errors.hpp"
#include "common/number_text.hpp"

namespace experiments::calibration {
namespace {

// A real worker's step that took `ms` at run time `clock_ms` took ms as measured, then every
// perturbation active then applied t -> t * slowdown + add_ms in config order; undo them in
// reverse order.
double without_perturbations(double ms, double clock_ms, int worker, const std::vector<env::Perturbation>& perturbations) {
  for (auto it = perturbations.rbegin(); it != perturbations.rend(); ++it)
    if (it->worker == worker && it->active_at(clock_ms / 1000.0)) ms = std::max(0.0, (ms - it->add_ms) / it->slowdown);
  return ms;
}

const experiments::WorkerSeries* series_of(const experiments::RoundSeries& rounds, const std::string& name) {
  for (const auto& w : rounds.workers)
    if (w.name == name) return &w;
  return nullptr;
}

std::string fmt(double v, const char* f = "%.3g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::vector<MeasuredStep> measured_steps(const RealRun& run, const experiments::ExperimentConfig& config, int worker) {
  std::vector<MeasuredStep> out;
  const std::string& name = config.cluster.workers[static_cast<std::size_t>(worker)].name;
  for (const auto& p : run.policies) {
    const experiments::WorkerSeries* w = series_of(p.rounds, name);
    if (!w) continue;
    for (std::size_t r = 0; r < p.rounds.round.size(); ++r) {
      const double steps = w->local_steps[r], batch = w->batch_size[r], compute = w->compute_ms[r];
      if (!(steps >= 1) || !(batch >= 1) || !std::isfinite(compute)) continue;
      // No worker takes more than its max_batch: a larger batch is a damaged rounds.csv.
      const int most = config.cluster.workers[static_cast<std::size_t>(worker)].max_batch;
      if (most > 0 && batch > most)
        throw common::DataError(p.dir + "/rounds.csv: round " + std::to_string(p.rounds.round[r]) + ", worker " + name + ": batch_size " +
                                common::shortest_number_text(batch) + " above its max_batch " + std::to_string(most) + ": a damaged file is not fitted");
      // The perturbations were evaluated at the step's start; the round's start stands for it.
      const double start = std::isfinite(p.rounds.clock_ms[r]) && std::isfinite(p.rounds.round_ms[r]) ? p.rounds.clock_ms[r] - p.rounds.round_ms[r] : 0.0;
      out.push_back({batch, without_perturbations(compute / steps, start, worker, config.cluster.perturbations), static_cast<int>(steps)});
    }
  }
  return out;
}

Calibration calibrate(const RealRun& run, const experiments::ExperimentConfig& config, const CalibrateOptions& options) {
  Calibration c;
  c.real_dir = run.dir;
  c.message_bytes = options.message_bytes;
  for (const auto& p : run.policies) {
    c.policies.push_back(p.label);
    c.rounds += p.rounds.round.size();
  }
  for (const auto& [name, points] : options.profiles) {
    bool known = false;
    for (const auto& w : config.cluster.workers) known = known || w.name == name;
    if (!known) throw common::DataError("--profile " + name + ": no worker named '" + name + "' in the real run's cluster");
  }
  for (std::size_t i = 0; i < config.cluster.workers.size(); ++i) {
    const env::WorkerSpec& spec = config.cluster.workers[i];
    WorkerCalibration w;
    w.name = spec.name;
    w.server = config.cluster.server_names[static_cast<std::size_t>(spec.server)];
    w.max_batch = spec.max_batch;
    const auto profile = options.profiles.find(spec.name);
    if (profile != options.profiles.end()) {
      w.source = PointSource::Profile;
      w.profile_file = options.profile_files.count(spec.name) ? options.profile_files.at(spec.name) : "";
      w.fit = fit_time_model(profile->second, spec.max_batch, "worker '" + spec.name + "' (profile " + w.profile_file + ")", options.need);
    } else {
      const auto points = measured_steps(run, config, static_cast<int>(i));
      if (!enough_batches(points, options.need)) {
        try {
          fit_time_model(points, spec.max_batch, "worker '" + spec.name + "'", options.need);
        } catch (const common::DataError& e) {
          throw common::DataError(std::string(e.what()) + ". Run a policy that moves batches (lbb) in the real run, or measure the curve on that worker with `orchestra profile --config CONFIG --name " +
                                  spec.name + " > " + spec.name + ".json` and pass --profile " + spec.name + "=" + spec.name + ".json");
        }
      }
      w.fit = fit_time_model(points, spec.max_batch, "worker '" + spec.name + "'", options.need);
    }
    c.workers.push_back(std::move(w));
  }

  c.intra_server = config.cluster.num_servers() == 1;
  std::vector<MeasuredAllReduce> reduces;
  std::vector<MeasuredRound> rounds;
  for (const auto& p : run.policies) {
    const auto& s = p.rounds;
    for (std::size_t r = 0; r < s.round.size(); ++r) {
      MeasuredAllReduce a;
      MeasuredRound m;
      m.slowest_compute_ms = 0;
      for (const auto& w : s.workers) {
        if (w.local_steps[r] >= 1) ++a.participants;
        if (std::isfinite(w.compute_ms[r]) && w.compute_ms[r] >= m.slowest_compute_ms) {
          m.slowest_compute_ms = w.compute_ms[r];
          m.slowest_steps = std::isfinite(w.local_steps[r]) ? static_cast<int>(w.local_steps[r]) : 0;
        }
      }
      a.bytes = options.message_bytes;
      a.ms = s.comm_ms[r];
      reduces.push_back(a);
      m.round_ms = s.round_ms[r];
      m.comm_ms = s.comm_ms[r];
      if (r > 0) m.gap_before_ms = s.clock_ms[r] - s.round_ms[r] - s.clock_ms[r - 1];
      rounds.push_back(m);
    }
  }
  c.network = fit_network(reduces, c.intra_server ? config.network.intra_server : config.network.inter_server);
  c.overhead = fit_overhead(rounds);
  return c;
}

std::string calibration_report(const Calibration& c) {
  std::string out = "calibrated from " + c.real_dir + ": " + std::to_string(c.policies.size()) + " policies, " + std::to_string(c.rounds) + " rounds\n";
  for (const auto& w : c.workers) {
    const auto& f = w.fit;
    std::string coefficients;
    for (std::size_t k = 0; k < f.coefficients.size(); ++k) coefficients += (k ? ", " : "") + fmt(f.coefficients[k], "%.4g");
    out += "worker " + w.name + ": " + form_name(f.form) + " [" + coefficients + "] ms from " + std::to_string(f.points) +
           (w.source == PointSource::Profile ? " profiled points (" + w.profile_file + ")" : " measured rounds") + ", batches " +
           fmt(f.distinct_batches.front(), "%.0f") + ".." + fmt(f.distinct_batches.back(), "%.0f") + " (" + std::to_string(f.distinct_batches.size()) +
           " distinct); BIC linear " + fmt(f.bic_linear, "%.1f") + (std::isnan(f.bic_cubic) ? "" : ", cubic " + fmt(f.bic_cubic, "%.1f")) +
           "; residual RMS " + fmt(f.rms_ms) + " ms (" + fmt(100 * f.rms_relative, "%.1f") + "%), noise sigma " + fmt(f.noise_sigma) + "\n";
    if (f.flat)
      out += "  note: its time does not grow measurably with the batch (the free line fell); modelled flat at the mean. "
             "Profile it over more batch sizes for a slope (--profile " + w.name + "=FILE from orchestra profile)\n";
  }
  const auto& n = c.network;
  out += std::string("network (") + (c.intra_server ? "intra-server" : "inter-server") + " link): latency " + fmt(n.link.alpha_ms * 1000.0) +
         " us, bandwidth " + fmt(n.link.bytes_per_ms * 8.0 * 1000.0 / 1e9) + " Gbit/s" +
         (n.kind == NetworkFitKind::AlphaOnly ? " (kept as configured: one message size, latency fitted alone)" : " (both fitted)") + "; " +
         std::to_string(n.rounds) + " all-reduces, mean " + fmt(n.mean_ms) + " ms, residual RMS " + fmt(n.rms_ms) + " ms\n";
  const auto& o = c.overhead;
  out += "round overhead: fixed " + fmt(o.overhead.fixed_ms) + " ms (" + fmt(o.round_fixed_ms) + " in the round + median gap " +
         fmt(o.median_gap_ms) + " between rounds), per step " + fmt(o.overhead.per_step_ms) + " ms; residual RMS " + fmt(o.rms_ms) +
         " ms over " + std::to_string(o.rounds) + " rounds\n";
  return out;
}

}  // namespace experiments::calibration
