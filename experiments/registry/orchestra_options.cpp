#include "experiments/registry/orchestra_options.hpp"

#include <limits>
#include <string>

#include "common/errors.hpp"
#include "common/limits.hpp"
#include "orchestra/barrier_env.hpp"

namespace experiments {
namespace {

using common::kMaxBatch;
constexpr std::int64_t kMaxSteps = common::kMaxLocalSteps;
// A barrier is a time on the clock: at most common::kClockS (10^9 s), in ms.
constexpr double kMaxBarrierMs = common::kClockS.max * 1000.0;

std::vector<int> read_batch_sizes(common::YamlReader& r, const ExperimentConfig& config) {
  const auto& workers = config.cluster.workers;
  if (r.has("batch") && r.has("batch_sizes")) r.fail("batch_sizes", "give either batch (every worker) or batch_sizes (one per worker), not both");
  const auto batch = r.integer("batch", 0, 0, kMaxBatch);
  const auto listed = r.integers("batch_sizes", {}, 1, kMaxBatch);
  std::vector<int> sizes;
  if (!listed.empty()) {
    if (listed.size() != workers.size())
      r.fail("batch_sizes", "expected " + std::to_string(workers.size()) + " entries (one per worker), got " + std::to_string(listed.size()));
    sizes.assign(listed.begin(), listed.end());
  } else if (batch > 0) {
    sizes.assign(workers.size(), static_cast<int>(batch));
  }
  // The controller would only find out at start(); here the message can point at the key.
  for (std::size_t n = 0; n < sizes.size(); ++n)
    if (sizes[n] > workers[n].max_batch)
      r.fail(listed.empty() ? "batch" : "batch_sizes", "batch " + std::to_string(sizes[n]) + " exceeds worker " + workers[n].name +
                                                           "'s max_batch " + std::to_string(workers[n].max_batch));
  return sizes;
}

}  // namespace

env::AverageWeighting read_weighting(common::YamlReader& r, env::AverageWeighting fallback) {
  std::vector<std::pair<const char*, env::AverageWeighting>> spellings;
  for (auto w : env::kAverageWeightings) spellings.emplace_back(env::weighting_name(w), w);
  return r.option("weighting", fallback, spellings);
}

orchestra::BarrierControllerOptions read_barrier_options(common::YamlReader& r, orchestra::BarrierSource source,
                                                         const ExperimentConfig& config) {
  return read_barrier_options(r, source, config, orchestra::BarrierControllerOptions{});
}

orchestra::BarrierControllerOptions read_barrier_options(common::YamlReader& r, orchestra::BarrierSource source,
                                                         const ExperimentConfig& config, orchestra::BarrierControllerOptions o) {
  o.source = source;
  if (source == orchestra::BarrierSource::Fixed) o.fixed_barrier_ms = 1.0;
  if (source == orchestra::BarrierSource::Fixed) {
    // T_ms, or T_x_comm: T as a multiple of the all-reduce time (BarrierSource::CommMultiple).
    if (r.has("T_ms") && r.has("T_x_comm")) r.fail("T_x_comm", "give either T_ms or T_x_comm, not both");
    if (r.has("T_x_comm")) {
      o.source = orchestra::BarrierSource::CommMultiple;
      o.comm_multiple = r.real("T_x_comm", 0.0, 0.0, 1e6, true);
    } else {
      if (!r.has("T_ms")) r.fail("T_ms", "required key is missing (fixed-t needs the barrier T in ms, e.g. T_ms: 250, or T_x_comm: 1)");
      o.fixed_barrier_ms = r.real("T_ms", 0.0, 0.0, kMaxBarrierMs, true);
    }
  }
  o.batch_sizes = read_batch_sizes(r, config);
  o.max_step_spread = static_cast<int>(r.integer("M", o.max_step_spread, 0, kMaxSteps));
  o.max_local_steps = static_cast<int>(r.integer("max_local_steps", o.max_local_steps, 1, kMaxSteps));
  // Keys that belong to one kind of move or interval are read (and so resolved into config.json)
  // only for that kind: a resolved config, read back (calibrate writes one), stays valid.
  o.move = r.option("move", o.move, {{"additive", orchestra::BarrierMove::Additive}, {"multiplicative", orchestra::BarrierMove::Multiplicative}});
  if (o.move == orchestra::BarrierMove::Additive) {
    o.action_unit_ms = r.real("unit_ms", o.action_unit_ms, 0.0, kMaxBarrierMs);
    if (r.has("factor")) r.fail("factor", "only a multiplicative move has a factor (move: multiplicative)");
  } else {
    o.move_factor = r.real("factor", o.move_factor, 1.0, 1e6, /*min_exclusive=*/true);
    if (r.has("unit_ms")) r.fail("unit_ms", "only an additive move has a unit (move: additive)");
  }
  o.max_move = static_cast<int>(r.integer("max_move", o.max_move, 1, orchestra::kMaxBarrierMove));
  o.interval = r.option("interval", o.interval, {{"epoch", orchestra::DecisionInterval::Epoch}, {"rounds", orchestra::DecisionInterval::Rounds}});
  if (o.interval == orchestra::DecisionInterval::Rounds)
    o.interval_rounds = static_cast<int>(r.integer("interval_rounds", o.interval_rounds, 1, kMaxSteps));
  else if (r.has("interval_rounds"))
    r.fail("interval_rounds", "needs interval: rounds");
  o.min_barrier_ms = r.real("min_T_ms", o.min_barrier_ms, 0.0, kMaxBarrierMs);
  o.max_barrier_ms = r.real("max_T_ms", o.max_barrier_ms, 0.0, kMaxBarrierMs);
  if (o.min_barrier_ms > 0 && o.max_barrier_ms > 0 && o.max_barrier_ms < o.min_barrier_ms) r.fail("max_T_ms", "must not be below min_T_ms");
  o.min_barrier_x_start = r.real("min_T_x_start", o.min_barrier_x_start, 0.0, 1.0);
  o.max_barrier_x_start = r.real("max_T_x_start", o.max_barrier_x_start, 0.0, 1e6);
  if (o.max_barrier_x_start > 0 && o.max_barrier_x_start < 1) r.fail("max_T_x_start", "expected a factor >= 1 (0: none)");
  o.floor_cap_steps = r.real("floor_cap_steps", o.floor_cap_steps, 0.0, kMaxSteps);
  if (o.floor_cap_steps > 0 && o.min_barrier_x_start == 0) r.fail("floor_cap_steps", "caps min_T_x_start's floor, which is not set");
  o.min_barrier_steps = r.real("min_T_steps", o.min_barrier_steps, 0.0, kMaxSteps);
  if (source == orchestra::BarrierSource::Lcm) {
    // Utilization by default: the literal idle rule picks tau = 2 / 1 and averages after every slow
    // step, DSGD's communication rate (see orchestra/lcm_heuristic.hpp); `objective: idle` keeps it.
    o.lcm_objective = r.option("objective", orchestra::LcmObjective::Utilization,
                               {{"utilization", orchestra::LcmObjective::Utilization}, {"idle", orchestra::LcmObjective::Idle}});
    o.rerun_lcm_each_epoch = r.boolean("rerun_lcm", o.rerun_lcm_each_epoch);
    o.lcm_multiple = r.real("T_x_lcm", o.lcm_multiple, 0.0, 1e6, /*min_exclusive=*/true);
    o.lcm_cap_steps = r.real("T_cap_steps", o.lcm_cap_steps, 0.0, kMaxSteps);
    o.lcm_cap_x_comm = r.real("T_cap_x_comm", o.lcm_cap_x_comm, 0.0, 1e6);
    o.lcm_cap_above_steps = r.real("T_cap_above_steps", o.lcm_cap_above_steps, 0.0, kMaxSteps);
    if (o.lcm_cap_above_steps > 0 && o.lcm_cap_steps == 0 && o.lcm_cap_x_comm == 0)
      r.fail("T_cap_above_steps", "limits T_cap_steps / T_cap_x_comm, which are not set");
  }
  o.whole_cluster_windows = r.boolean("whole_cluster_windows", o.whole_cluster_windows);
  o.partition = r.option("partition", o.partition, {{"speed", orchestra::DataPartition::Speed}, {"steps", orchestra::DataPartition::Steps}});
  o.probe_repetitions = static_cast<int>(r.integer("probes", o.probe_repetitions, 1, 1000));
  o.weighting = read_weighting(r, o.weighting);
  {
    std::vector<std::pair<const char*, orchestra::StateFeatures>> spellings;
    for (auto f : orchestra::kStateFeatures) spellings.emplace_back(orchestra::state_features_name(f), f);
    o.state_features = r.option("state", o.state_features, spellings);
  }
  o.horizon_epochs = config.budget.epochs;  // the RL state's progress entry
  return o;
}

orchestra::LocalSgdBarrierEnvConfig barrier_env_config(const ExperimentConfig& config,
                                                        const orchestra::BarrierControllerOptions& controller) {
  if (config.training.timing_only)
    throw common::ConfigError(config.file + ": training.timing_only: the barrier-tuning RL environment needs test accuracy for "
                           "its reward (Orchestra Eq. 1) and its target; set timing_only: false");
  orchestra::LocalSgdBarrierEnvConfig c;
  c.cluster = config.cluster;
  c.network = config.network;
  c.training = config.training;
  c.data = config.data;
  c.global_batch = config.global_batch;
  c.data_seed = config.seed;
  c.budget.max_epochs = config.budget.epochs;
  c.budget.max_sim_seconds = config.budget.max_sim_seconds;
  c.budget.target_accuracy = config.budget.target_accuracy;
  c.controller = controller;
  c.surrogate = config.surrogate;  // runtime.training: surrogate trains the RL environment on it too
  return c;
}

}  // namespace experiments
