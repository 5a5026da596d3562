// `planned-t`: a static barrier planned before the run on the surrogate of training, from the
// config alone (no real run): `orchestra evaluate`'s static-T sweep simulated on planning seeds
// the run does not use, and its best point (experiments/surrogate/surrogate_pick.hpp's rule,
// `orchestra surrogate pick`'s T). Where no T of the sweep reached the target on every planning
// seed, the surrogate does not know this cluster (BENCHMARKS.md, "The surrogate's static T
// planned on other seeds": on one drawn cluster it ended below 77% at every T where real training
// reached 84%), and the policy falls back to orchestra-lcm (`fallback: orchestra-lcm`, the default)
// or keeps the most accurate point (`fallback: none`).
//
// Keys, besides the orchestra-lcm keys (orchestra_options.hpp: batch, interval, weighting, ...;
// the sweep's runs use them too, as the judged run does; the fallback takes them all but the
// interval: orchestra-lcm re-runs its heuristic every epoch, as 3.1.1 does):
//   surrogate: FILE          the surrogate (`orchestra surrogate fit`), relative to the config's
//                            folder unless absolute or found as given (default: the pretrained
//                            pretrained/surrogate-controller-task-calibrated.json, the fit with
//                            its drift calibrated on real sweeps; it planned better than the fit
//                            alone, blind on configs/heldout_twentieth/)
//   planning_seeds: [..]     the seeds the sweep runs on (default 101-110); the run's own seed may
//                            not be one: a seed fixes the simulated cluster's batch-time noise and
//                            data order, so a plan on it has seen the run's draws
//   sweep: 8                 the sweep's points, log-spaced from the slowest worker's batch time
//                            to 64 times it (`orchestra evaluate --sweep`)
//   fallback: orchestra-lcm  where the plan is a guess (above): orchestra-lcm, or none
// config.json records the plan: planned_T_ms, planned_by (surrogate or orchestra-lcm), the sweep
// and the surrogate's time at the planned T.
//
// The planning runs the experiments' runner, which is built on this registry: the program installs
// it (set_barrier_planner; the command line and the Python module do, with
// experiments/surrogate/barrier_planner.hpp), and without it the policy is refused with one line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/yaml_reader.hpp"
#include "env/barrier_policy.hpp"
#include "env/surrogate/surrogate_model.hpp"
#include "experiments/config/config.hpp"
#include "orchestra/barrier_controller.hpp"

namespace experiments {

// Planning seeds apart from `orchestra evaluate`'s default 1-3: 101-110.
std::vector<std::uint64_t> default_planning_seeds();

struct BarrierPlanRequest {
  std::shared_ptr<const env::SurrogateModel> surrogate;  // checked against the config's workload
  std::string surrogate_file;
  std::vector<std::uint64_t> seeds;
  int sweep_points = 8;
  orchestra::BarrierControllerOptions sweep_options;  // every sweep point's options, its T aside
};

struct BarrierPlan {
  std::vector<double> sweep_ms;
  double barrier_ms = 0;        // the sweep's best point on the surrogate
  double surrogate_time_s = 0;  // its time to target there, a geometric mean over the seeds (a miss at its run time)
  double accuracy = 0;          // its mean final accuracy there
  int misses = 0;               // planning seeds on which it missed the target
  int seeds = 0;
  bool reached_everywhere() const { return misses == 0; }
};

// Plans `config`'s barrier (the config as the run will have it: cluster, workload, budget).
using BarrierPlanner = BarrierPlan (*)(const ExperimentConfig& config, const BarrierPlanRequest& request);
void set_barrier_planner(BarrierPlanner planner);

// Reads an entry's planning keys (surrogate, planning_seeds, sweep; above) and plans `config`'s
// barrier with the installed planner, each sweep point run with `sweep_options` at its T. config.json
// records the plan under `plan`, with `by`: the surrogate, or `fallback_name` where the plan is a
// guess and the entry falls back on a guess (`falls_back_on_guess`). planned-t and `orchestra-a3c`
// with `start: planned` plan this way.
BarrierPlan plan_entry_barrier(common::YamlReader& r, const ExperimentConfig& config, orchestra::BarrierControllerOptions sweep_options,
                               bool falls_back_on_guess, const std::string& fallback_name);

// Why an entry that gives none of the planning keys (surrogate, planning_seeds, sweep) cannot plan
// with the defaults here, or "" where it can: no planner is installed in this program, or the
// pretrained surrogate was fitted on another workload than `config`'s (the quickstart's model,
// for one). `orchestra-a3c` starts from LCM's T* then where its policy file asks for a planned
// start; a config that asks for one itself is refused instead (plan_entry_barrier).
std::string why_default_plan_unavailable(const common::YamlReader& r, const ExperimentConfig& config);
// The same for an entry that gives none of those keys.
std::string why_default_plan_unavailable(const ExperimentConfig& config);

// What a plan falls back to where it is a guess.
enum class PlanFallback { OrchestraLcm, None };

std::unique_ptr<env::BarrierPolicy> make_planned_t_policy(common::YamlReader& r, const ExperimentConfig& config);

}  // namespace experiments
