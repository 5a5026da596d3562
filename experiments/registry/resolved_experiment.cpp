#include "experiments/registry/resolved_experiment.hpp"

#include "experiments/registry/policy_registry.hpp"

namespace experiments {

ExperimentConfig resolve_config(ExperimentConfig config, const Overrides& overrides) {
  apply_overrides(config, overrides);
  expand_sweeps(config);
  return config;
}

Experiment resolve_experiment(ExperimentConfig config, const Overrides& overrides) {
  config = resolve_config(std::move(config), overrides);
  Experiment experiment;
  for (const auto& entry : config.policies) {
    BuiltPolicy built = make_policy(entry, config);
    experiment.policies.push_back({entry, std::move(built.policy), std::move(built.resolved)});
  }
  experiment.config = std::move(config);
  return experiment;
}

Experiment load_experiment(const std::string& path, const Overrides& overrides) { return resolve_experiment(load_config(path), overrides); }

}  // namespace experiments
