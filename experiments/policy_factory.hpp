// Builds a policy from its config entry; every parameter error names file:line and the key.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "env/barrier_policy.hpp"
#include "experiments/config.hpp"

namespace experiments {

struct BuiltPolicy {
  std::unique_ptr<env::BarrierPolicy> policy;
  nlohmann::json resolved;  // the parameters with defaults filled in
};

BuiltPolicy make_policy(const PolicyConfig& entry, const ExperimentConfig& config);

// Names `make_policy` knows, for --help and error messages.
std::vector<std::string> policy_names();

}  // namespace experiments
