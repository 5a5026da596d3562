// A real run's results read back for calibration: its resolved config (config.json) and, per
// policy, every round of rounds.csv. Only the results of `orchestra launch` qualify: their clock
// is wall time and their config.json says `real:`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/results/round_series.hpp"

namespace experiments::calibration {

struct RealPolicyRun {
  std::string label;
  std::string dir;
  nlohmann::json policy;  // the policy's resolved keys (config.json "policy")
  experiments::RoundSeries rounds;
};

struct RealRun {
  std::string dir;
  std::string name;
  nlohmann::json config;  // the experiment's resolved config, as its first policy's config.json has it
  std::vector<RealPolicyRun> policies;
};

// Throws common::DataError naming the folder when it holds no results, more than one experiment,
// a simulated run, a config.json without the resolved sections calibration needs, or no rounds.csv.
RealRun read_real_run(const std::string& dir);

// A policy's resolved keys as a config entry: keys whose value is an empty list are left out (an
// empty list is the default, and written back beside its alternative, as orchestra-lcm's
// batch_sizes beside batch, it would be read as giving both).
nlohmann::json policy_entry(const nlohmann::json& resolved);

// The experiment config of `run` as YAML-readable text (JSON is YAML): the resolved sections and
// every policy, for experiments::parse_config to validate and resolve.
std::string real_config_text(const RealRun& run);

}  // namespace experiments::calibration
