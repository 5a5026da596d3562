// The config `orchestra calibrate` writes: the real run's experiment (data, model, training,
// runtime, policies, perturbations) on a `cluster.mode: simulated` cluster whose numbers come from
// a Calibration, each with a comment naming where it came from. Same inputs, same text.
#pragma once

#include <string>

#include "experiments/calibration/calibrate.hpp"

namespace experiments::calibration {

// How every config calibrate writes begins, and every trace: `orchestra calibrate` replaces only a
// file that begins so.
inline constexpr const char* kCalibratedMarker = "# Calibrated by `orchestra calibrate ";
inline constexpr const char* kTraceHeader = "worker,clock_ms,batch,ms\n";

// `real` is the run the calibration was made from (its resolved config and policies).
std::string calibrated_config_yaml(const Calibration& c, const RealRun& real);

// Each policy's measured step times as traces (env/sim/step_trace.hpp: worker, clock_ms, batch,
// ms; perturbations divided out, as the fitted models), one file text per policy label, so that a
// simulation can replay them with time_model: {trace: FILE.csv}.
std::vector<std::pair<std::string, std::string>> step_traces(const RealRun& real, const experiments::ExperimentConfig& config);

}  // namespace experiments::calibration
