// The planner behind the `planned-t` policy (experiments/registry/planned_barrier.hpp): the
// static-T sweep of `orchestra evaluate` run in memory on the surrogate of training, one run per
// T and planning seed, and the sweep's best point by the rule of `orchestra surrogate pick`
// (surrogate_pick.hpp): the same T that command writes for the config, with nothing written.
#pragma once

#include "experiments/config/config.hpp"
#include "experiments/registry/planned_barrier.hpp"

namespace experiments {

// Throws what a run throws (common::ConfigError for a config the surrogate cannot run).
BarrierPlan plan_barrier_on_surrogate(const ExperimentConfig& config, const BarrierPlanRequest& request);

// set_barrier_planner(plan_barrier_on_surrogate): what a program that builds policies from
// configs calls once at its start so that configs may name planned-t.
void use_surrogate_barrier_planner();

}  // namespace experiments
