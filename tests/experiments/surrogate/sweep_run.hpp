// One run of a static-T sweep point (fixed-t-T_ms=T), as orchestra evaluate's results read back,
// for the hand-made evaluations of the surrogate's fidelity and pick tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "experiments/analysis/controller_evaluation.hpp"

namespace testing {

// time: the time to target, or nullopt for a run that missed it (then run_s is its run time).
inline experiments::ControllerRun sweep_run(const std::string& cluster, std::uint64_t seed, double t_ms, std::optional<double> time,
                                            double run_s = 100, double accuracy = 0) {
  experiments::ControllerRun r;
  r.cluster = cluster;
  r.seed = seed;
  r.controller = "fixed-t-T_ms=" + std::to_string(static_cast<int>(t_ms));
  r.role = experiments::ControllerRole::Sweep;
  r.barrier_ms = t_ms;
  r.time_to_target_s = time;
  r.run_time_s = run_s;
  r.final_accuracy = accuracy;
  return r;
}

}  // namespace testing
