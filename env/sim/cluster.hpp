// A simulated heterogeneous cluster: workers with batch-time models (LBB Eq. 1), memory limits,
// seeded multiplicative noise and scheduled perturbations, grouped into servers.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "env/sim/batch_time_model.hpp"
#include "env/sim/step_trace.hpp"

namespace env {

// A scheduled change of one worker's speed. A step that starts within [start_s, end_s) takes
// t * slowdown + add_ms. With period_s > 0 the perturbation is periodic inside that interval: it
// is on for the first active_s seconds of every period (LBB Sec. 4.4's cyclic +50 ms disturbance).
// A step is slowed whole or not at all, by the time it starts (a simulated and a real worker
// alike, env/real/real_worker.cpp): a window shorter than a step, or between two steps' starts,
// slows nothing, and a step that starts just before the window's end is slowed whole.
struct Perturbation {
  int worker = 0;
  double start_s = 0;
  double end_s = std::numeric_limits<double>::infinity();
  double slowdown = 1.0;
  double add_ms = 0.0;
  double period_s = 0.0;
  double active_s = 0.0;

  bool active_at(double time_s) const;
};

struct WorkerSpec {
  std::string name;
  std::shared_ptr<const BatchTimeModel> time_model;  // shared by workers of the same kind
  int max_batch = 1024;                              // B_lim: the largest batch its memory holds
  double noise = 0.0;  // sigma of the multiplicative log-normal noise on every step (mean 1)
  int server = 0;      // index into ClusterSpec::server_names
  // Trace replay (step_trace.hpp): when set, training steps take the trace's times in order and
  // time_model is the trace's fitted line, which probes use.
  std::shared_ptr<const StepTrace> trace;
};

// What a real round costs besides compute and the all-reduce (`cluster.round_overhead`, fitted by
// `orchestra calibrate`): the plan broadcast and the gathering of the workers' times, the
// optimizer step after the all-reduce, and each step's data loading. A real run pays these on its
// wall clock; a simulated one only where they are given here (0 by default).
struct RoundOverhead {
  double fixed_ms = 0;     // once per round, after the all-reduce
  double per_step_ms = 0;  // on each worker's timeline, per local step (data loading), not counted as compute
};

struct ClusterSpec {
  std::vector<WorkerSpec> workers;
  std::vector<std::string> server_names;  // at least one
  std::vector<Perturbation> perturbations;
  RoundOverhead overhead;

  int num_workers() const { return static_cast<int>(workers.size()); }
  int num_servers() const { return static_cast<int>(server_names.size()); }
};

// The simulated compute side of the clock: the time of one step of a worker at a simulated time.
// Each worker draws its noise from its own generator seeded from (seed, worker index), so the
// times do not depend on the order in which workers are asked.
class SimulatedCluster {
 public:
  SimulatedCluster(ClusterSpec spec, std::uint64_t seed);

  // Compute time (ms) of one training step of `batch` samples on `worker`, starting at `now_ms`.
  // A worker with a trace takes its next replayed time.
  double step_ms(int worker, int batch, double now_ms);
  // The same for a profiling probe (LBB Alg. 1): from the time model, so that probes, which a
  // recorded trace does not contain, leave the trace's order alone.
  double probe_ms(int worker, int batch, double now_ms);

  const ClusterSpec& spec() const { return spec_; }

 private:
  ClusterSpec spec_;
  std::vector<std::mt19937_64> rngs_;
  std::vector<std::vector<Perturbation>> perturbations_of_;  // per worker, for a quick scan
  // One distribution per worker: std::normal_distribution caches every second draw, and a shared
  // one would hand one worker's draw to another.
  std::vector<std::normal_distribution<double>> normals_;
  std::vector<std::size_t> trace_steps_;  // per worker: trace rows replayed so far

  double perturbed(int worker, double base_ms, double now_ms);
};

// SplitMix64: derives independent seeds from one config seed (one seed drives everything).
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream);

}  // namespace env
