#include "experiments/surrogate/barrier_planner.hpp"

#include <sstream>

#include "experiments/analysis/controller_evaluation.hpp"
#include "experiments/runner/evaluation.hpp"
#include "experiments/runner/progress.hpp"
#include "experiments/runner/simulated_cluster.hpp"
#include "experiments/surrogate/surrogate_pick.hpp"
#include "orchestra/barrier_controller.hpp"

namespace experiments {

BarrierPlan plan_barrier_on_surrogate(const ExperimentConfig& config, const BarrierPlanRequest& request) {
  ExperimentConfig surrogate = config;
  surrogate.training_backend = TrainingBackend::Surrogate;
  surrogate.surrogate = request.surrogate;
  surrogate.surrogate_file = request.surrogate_file;
  surrogate.budget.stop_at_target = true;  // as evaluate runs the sweep: the time to target is all it reads
  BarrierPlan plan;
  plan.sweep_ms = barrier_sweep(surrogate, request.sweep_points);
  Progress quiet(Progress::Style::Quiet, stderr);
  std::vector<ControllerRun> runs;
  for (double ms : plan.sweep_ms) {
    std::ostringstream label;
    label << "fixed-t-T_ms=" << ms;
    PolicyConfig entry;
    entry.kind = "fixed-t";
    entry.label = label.str();
    for (std::uint64_t seed : request.seeds) {
      surrogate.seed = seed;
      orchestra::BarrierControllerOptions options = request.sweep_options;
      options.source = orchestra::BarrierSource::Fixed;
      options.fixed_barrier_ms = ms;
      orchestra::BarrierController policy(options);
      const PolicyOutcome outcome = run_simulated_policy(surrogate, entry, policy, nullptr, quiet);
      ControllerRun run;
      run.cluster = config.name;
      run.seed = seed;
      run.controller = entry.label;
      run.role = ControllerRole::Sweep;
      run.barrier_ms = ms;
      run.time_to_target_s = outcome.time_to_target_s;
      run.run_time_s = outcome.sim_time_s;
      run.final_accuracy = outcome.final_accuracy;
      runs.push_back(run);
    }
  }
  const StaticPick pick = pick_static_barriers(runs).front();
  plan.barrier_ms = pick.pick().barrier_ms;
  plan.surrogate_time_s = pick.pick().time_s;
  plan.accuracy = pick.pick().accuracy;
  plan.misses = pick.pick().misses;
  plan.seeds = pick.pick().seeds;
  return plan;
}

void use_surrogate_barrier_planner() { set_barrier_planner(&plan_barrier_on_surrogate); }

}  // namespace experiments
