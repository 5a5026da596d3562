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

// Applies `overrides`, expands the sweeps and builds every policy (every error names file:line and
// the key, before anything runs).
Experiment resolve_experiment(ExperimentConfig config, const Overrides& overrides = {});

// load_config, then resolve_experiment.
Experiment load_experiment(const std::string& path, const Overrides& overrides = {});

}  // namespace experiments
