// The batch-balancing policies of lbb/ (LBB, BOA, LB-BSP) built from their YAML entries. Kept
// apart from policy_registry.cpp so that each family's keys, defaults and checks sit in one place.
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
#include "common/yaml_reader.hpp"
#include "experiments/config/config.hpp"

namespace experiments {

// Makers for the registry (policy_registry.hpp).
std::unique_ptr<env::BarrierPolicy> make_lbb(common::YamlReader& r, const ExperimentConfig& config);
std::unique_ptr<env::BarrierPolicy> make_boa(common::YamlReader& r, const ExperimentConfig& config);
std::unique_ptr<env::BarrierPolicy> make_lb_bsp(common::YamlReader& r, const ExperimentConfig& config);

}  // namespace experiments
