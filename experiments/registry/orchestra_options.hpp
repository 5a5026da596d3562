// Orchestra's policies (orchestra-lcm, fixed-t) from their YAML entries, and the barrier-tuning RL
// environment's config from an experiment, so `orchestra run` and `orchestra train` read the same
// keys with the same checks (errors name file:line and the key).
//
// Policy keys (all optional except fixed-t's T_ms; defaults are BarrierControllerOptions'):
//   batch: 64               B_n of every worker (0 = global_batch / N, capped by each max_batch)
//   batch_sizes: [..]       B_n per worker instead, one entry per worker in cluster order
//   M: 8                    3.1.1's bound on max tau - min tau
//   max_local_steps: 64     cap on every tau_n
//   move: additive          how an action moves T: additive (3.1.3: by unit_ms) or multiplicative (by factor)
//   unit_ms: 0              additive: ms per action step (0 = the fastest worker's probed batch time)
//   factor: 2               multiplicative: T times or divided by this (> 1)
//   interval: epoch         when an agent decides and tau_n is re-estimated: every epoch (3.1.3), or
//   interval_rounds: 1      with interval: rounds, every K rounds (and at every epoch's start)
//   min_T_ms: 0             bounds on T (0: the fastest worker's batch time, and max_local_steps times the
//   max_T_ms: 0             slowest one)
//   min_T_x_start: 0        and within these factors of the starting T (0: none)
//   max_T_x_start: 0
//   objective: utilization  orchestra-lcm only: what T* minimizes, utilization ((t_W + C) / (T + C),
//                           the all-reduce counted) or idle (3.1.1's t_W read literally); see
//                           orchestra/lcm_heuristic.hpp for why utilization is the default here
//   rerun_lcm: true         orchestra-lcm only: re-run the heuristic on each epoch's measured times
//   T_x_lcm: 1              orchestra-lcm only: T is this multiple of the heuristic's T* (a learned
//                           controller's start and the anchor of its bounds move with it)
//   partition: speed        speed (3.1.2, shares proportional to samples/s) or steps (B_n * tau_n)
//   probes: 5               probes per worker at the start; t_b^n is their median
//   weighting: uniform      the model average (env/round_plan.hpp): uniform over the workers that took
//                           part, all_workers (Eq. 2 with N fixed), samples or fednova
//   T_ms: 250               fixed-t only, required: the barrier in ms
#pragma once

#include "experiments/config/config.hpp"
#include "common/errors.hpp"
#include "common/yaml_reader.hpp"
#include "orchestra/barrier_controller.hpp"
#include "orchestra/rl/local_sgd_barrier_env.hpp"

namespace experiments {

// `weighting:` of a model-averaging policy, with its spellings (env::weighting_name).
env::AverageWeighting read_weighting(common::YamlReader& r, env::AverageWeighting fallback);

// Reads the keys above from a policy entry; `source` says which policy (Lcm: orchestra-lcm, Fixed:
// fixed-t). Checks batch sizes against the cluster's max_batch. Throws common::ConfigError.
orchestra::BarrierControllerOptions read_barrier_options(common::YamlReader& r, orchestra::BarrierSource source,
                                                         const ExperimentConfig& config);
// The same keys on top of `defaults` (a trained policy's recorded move and interval, say): a key
// the entry does not give keeps the default's value.
orchestra::BarrierControllerOptions read_barrier_options(common::YamlReader& r, orchestra::BarrierSource source,
                                                         const ExperimentConfig& config, orchestra::BarrierControllerOptions defaults);

// The RL environment on the experiment's cluster, network, model, optimizer and data: one episode
// is at most budget.epochs epochs (and budget.max_sim_seconds), terminated at budget.target_accuracy;
// the data set is seeded with the experiment's seed; with runtime.training: surrogate it runs on the
// surrogate of training instead of libtorch. Throws common::ConfigError for a timing-only
// experiment (the environment needs accuracy, see orchestra/rl/local_sgd_barrier_env.hpp).
orchestra::LocalSgdBarrierEnvConfig barrier_env_config(const ExperimentConfig& config,
                                                        const orchestra::BarrierControllerOptions& controller);

}  // namespace experiments
