// The policy registry: one table of every barrier policy the toolkit knows, from which the name
// list, `orchestra run --help`, the README's policy table (checked by a test) and the factory all
// come. To add a policy: implement env::BarrierPolicy, write a maker that reads its keys, and add
// one row to the table in policy_registry.cpp (docs/ARCHITECTURE.md "Adding a policy").
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/yaml_reader.hpp"
#include "env/barrier_policy.hpp"
#include "experiments/config/config.hpp"

namespace experiments {

// Reads the policy's keys from `r` (errors name file:line and the key) and builds it; the
// registry rejects unknown keys afterwards.
using PolicyMaker = std::unique_ptr<env::BarrierPolicy> (*)(common::YamlReader& r, const ExperimentConfig& config);

struct PolicyKind {
  const char* name;     // as written in `policies:`
  const char* summary;  // one line for --help and the README
  PolicyMaker make;
  // Model-averaging policies also take `weighting: uniform | all_workers | samples | fednova` and
  // `outer: {lr, momentum, nesterov}` (env/round_plan.hpp), read by make_policy for all of them.
  env::Aggregation aggregation = env::Aggregation::ModelAverage;
  std::vector<std::string> list_keys = {};  // keys whose value is a list (not a sweep)
};

// Every policy, in the order --help and the README list them.
const std::vector<PolicyKind>& policy_registry();

// The registry's names, in order.
std::vector<std::string> policy_names();

// "  name           summary" lines, one per policy, for --help.
std::string policy_help();

struct BuiltPolicy {
  std::unique_ptr<env::BarrierPolicy> policy;
  nlohmann::json resolved;  // the parameters with defaults filled in
};

// Sweeps: a list where a policy key expects one value gives one policy per value, labelled
// `<label>-<key>=<value>` (`fixed-t-T_ms=200`); several list keys give their product, in the
// order written. Labels must stay unique; an empty list is an error. Run before make_policy
// (resolve_experiment does, once, when the experiment is read); a config without lists is left
// as it is. Sized before it is expanded: past common::kMaxRuns runs (policies times seeds), one error.
void expand_sweeps(ExperimentConfig& config);

// Builds a policy from its config entry; every parameter error names file:line and the key.
BuiltPolicy make_policy(const PolicyConfig& entry, const ExperimentConfig& config);

}  // namespace experiments
