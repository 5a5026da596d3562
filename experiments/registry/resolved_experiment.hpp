// An experiment resolved once, before anything runs: the config as read (experiments/config), the
// command line's overrides applied (--seed, --threads), its sweeps expanded (expand_sweeps), and
// each policy built from its entry, once. The runner runs what this holds and builds nothing
// itself; the preflight, the run and the results all use these same objects.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "env/barrier_policy.hpp"
#include "experiments/config/config.hpp"

namespace experiments {

struct ExperimentPolicy {
  PolicyConfig entry;
  std::unique_ptr<env::BarrierPolicy> policy;
  nlohmann::json params;  // its keys with defaults filled in (config.json's "policy")
};

struct Experiment {
  ExperimentConfig config;               // overrides applied, sweeps expanded
  std::vector<ExperimentPolicy> policies;  // in the config's order
};

// The config part of resolve_experiment, no policy built: `overrides` applied, the sweeps expanded
// (what a `run --seeds` claims for each seed's folder before any of them runs).
ExperimentConfig resolve_config(ExperimentConfig config, const Overrides& overrides = {});

// resolve_config, then every policy built (every error names file:line and the key, before
// anything runs).
Experiment resolve_experiment(ExperimentConfig config, const Overrides& overrides = {});

// load_config, then resolve_experiment.
Experiment load_experiment(const std::string& path, const Overrides& overrides = {});

}  // namespace experiments
