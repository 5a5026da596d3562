// The batch-balancing policies of lbb/ (LBB, BOA, LB-BSP) built from their YAML entries. Kept
// apart from policy_factory.cpp so that each family's keys, defaults and checks sit in one place.
//
//   - {name: lbb, profiling: true, dynamic_tuning: true, FT: 0.05, RT: 0.3, step: 1, window: 10,
//      repetitions: 5, trim: 0.2}
//   - {name: boa, profiling: true, repetitions: 5, trim: 0.2}
//   - {name: lb-bsp, smoothing: 0.5}
//
// See lbb/lbb_policy.hpp, lbb/boa_policy.hpp and lbb/lb_bsp_policy.hpp for what each key does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "env/barrier_policy.hpp"
#include "experiments/yaml_reader.hpp"

namespace experiments {

// The kinds make_balancing_policy knows.
std::vector<std::string> balancing_policy_names();

// Reads the policy's keys from `r` (errors name file:line and the key) and builds it; null when
// `kind` is not one of balancing_policy_names(). The caller rejects unknown keys afterwards.
std::unique_ptr<env::BarrierPolicy> make_balancing_policy(const std::string& kind, YamlReader& r);

}  // namespace experiments
