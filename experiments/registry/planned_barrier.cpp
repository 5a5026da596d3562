#include "experiments/registry/planned_barrier.hpp"

#include <atomic>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "env/surrogate/surrogate_file.hpp"
#include "env/train/workload_task.hpp"
#include "experiments/config/workload_surrogate.hpp"
#include "experiments/registry/orchestra_options.hpp"

namespace experiments {

namespace {

std::atomic<BarrierPlanner> installed_planner{nullptr};

constexpr std::int64_t kMaxSweepPoints = 64;
constexpr std::int64_t kMaxPlanningSeeds = 1000;

// As `orchestra-a3c` finds its policy file: as given, else beside the config.
std::string surrogate_path(common::YamlReader& r, const ExperimentConfig& config) {
  std::string path = r.text("surrogate", ORCHESTRA_PRETRAINED_SURROGATE);
  if (!std::filesystem::exists(path) && !std::filesystem::path(path).is_absolute()) {
    const auto beside = std::filesystem::path(config.file).parent_path() / path;
    if (std::filesystem::exists(beside)) path = beside.string();
  }
  return path;
}

}  // namespace

std::vector<std::uint64_t> default_planning_seeds() {
  std::vector<std::uint64_t> seeds;
  for (std::uint64_t s = 101; s <= 110; ++s) seeds.push_back(s);
  return seeds;
}

void set_barrier_planner(BarrierPlanner planner) { installed_planner.store(planner); }

std::string why_default_plan_unavailable(const common::YamlReader& r, const ExperimentConfig& config) {
  if (installed_planner.load() && (r.has("surrogate") || r.has("planning_seeds") || r.has("sweep"))) return "";
  return why_default_plan_unavailable(config);
}

std::string why_default_plan_unavailable(const ExperimentConfig& config) {
  if (!installed_planner.load()) return "this program does not include the surrogate of training (the orchestra command line and the Python module do)";
  std::shared_ptr<const env::SurrogateModel> surrogate;
  try {
    surrogate = env::read_surrogate(ORCHESTRA_PRETRAINED_SURROGATE);
  } catch (const common::DataError&) {
    return "";  // the plan names the broken file
  }
  const std::string why = env::task_mismatch(surrogate->task, env::wanted_task(config.data, config.training, config.global_batch));
  return why.empty() ? "" : "the pretrained surrogate does not know this workload (" + why + ")";
}

BarrierPlan plan_entry_barrier(common::YamlReader& r, const ExperimentConfig& config, orchestra::BarrierControllerOptions sweep_options,
                               bool falls_back_on_guess, const std::string& fallback_name) {
  const BarrierPlanner planner = installed_planner.load();
  if (!planner) {
    // Named by the key that asked for the plan: planned-t's name, or orchestra-a3c's start: planned
    // (planned-t has no start key).
    const bool asked_by_start = r.has("start");
    r.fail(asked_by_start ? "start" : "name", std::string(asked_by_start ? "a planned start" : "planned-t") +
                                                  " plans on the surrogate of training, which this program does not include (the "
                                                  "orchestra command line and the Python module do)");
  }
  BarrierPlanRequest request;
  request.surrogate_file = surrogate_path(r, config);
  request.surrogate = read_workload_surrogate(r, "surrogate", request.surrogate_file, config);
  // The default seeds never hold the run's own (a run on seed 101: `surrogate pick` sweeps on the
  // default seeds, and a planned policy among its runs plans on them too): it gives way to the
  // seed after the last. Seeds given by planning_seeds are the user's, and refused below.
  std::vector<std::int64_t> fallback_seeds;
  for (auto s : default_planning_seeds()) fallback_seeds.push_back(static_cast<std::int64_t>(s));
  for (auto& s : fallback_seeds)
    if (static_cast<std::uint64_t>(s) == config.seed) s = static_cast<std::int64_t>(default_planning_seeds().back()) + 1;
  const std::vector<std::int64_t> seeds = r.integers("planning_seeds", fallback_seeds, 0, std::numeric_limits<std::int64_t>::max());
  if (seeds.empty()) r.fail("planning_seeds", "list at least one seed");
  if (static_cast<std::int64_t>(seeds.size()) > kMaxPlanningSeeds) r.fail("planning_seeds", "at most " + std::to_string(kMaxPlanningSeeds) + " seeds");
  for (auto s : seeds) {
    // A seed fixes the simulated cluster's batch-time noise and data order: a plan on the run's own
    // seed has seen the draws it is judged on.
    if (static_cast<std::uint64_t>(s) == config.seed)
      r.fail("planning_seeds", "holds the run's own seed " + std::to_string(config.seed) + ": plan on seeds the run does not use");
    request.seeds.push_back(static_cast<std::uint64_t>(s));
  }
  request.sweep_points = static_cast<int>(r.integer("sweep", 8, 2, kMaxSweepPoints));
  r.raw("plan");  // what config.json records (below); a resolved entry read back plans afresh
  request.sweep_options = std::move(sweep_options);
  request.sweep_options.source = orchestra::BarrierSource::Fixed;

  const BarrierPlan plan = planner(config, request);
  nlohmann::json recorded;
  recorded["T_ms"] = plan.barrier_ms;
  recorded["by"] = !plan.reached_everywhere() && falls_back_on_guess ? fallback_name : "surrogate";
  recorded["sweep_ms"] = plan.sweep_ms;
  recorded["surrogate_time_s"] = plan.surrogate_time_s;
  recorded["surrogate_accuracy"] = plan.accuracy;
  recorded["misses"] = plan.misses;
  recorded["seeds"] = plan.seeds;
  r.resolved()["plan"] = recorded;
  return plan;
}

std::unique_ptr<env::BarrierPolicy> make_planned_t_policy(common::YamlReader& r, const ExperimentConfig& config) {
  const PlanFallback fallback = r.option("fallback", PlanFallback::OrchestraLcm, {{"orchestra-lcm", PlanFallback::OrchestraLcm}, {"none", PlanFallback::None}});
  // The orchestra-lcm keys, for the fallback; the sweep's runs and the planned T share them.
  const orchestra::BarrierControllerOptions lcm = read_barrier_options(r, orchestra::BarrierSource::Lcm, config);
  const BarrierPlan plan = plan_entry_barrier(r, config, lcm, fallback == PlanFallback::OrchestraLcm, "orchestra-lcm");
  const bool falls_back = !plan.reached_everywhere() && fallback == PlanFallback::OrchestraLcm;
  if (falls_back) {
    // orchestra-lcm as the registry runs it: its heuristic re-run on each epoch's measured times
    // (3.1.1), whatever window the planned T's re-estimates were given. Re-run on every round's
    // window its T* follows each round's noise: on the two clusters of the sixteenth and seventeenth
    // suites where the plan is a guess that took 1.16x and 1.15x the oracle, orchestra-lcm 1.00x
    // and 0.98x.
    orchestra::BarrierControllerOptions fallback_lcm = lcm;
    fallback_lcm.interval = orchestra::DecisionInterval::Epoch;
    fallback_lcm.interval_rounds = 1;
    return std::make_unique<orchestra::BarrierController>(fallback_lcm);
  }
  orchestra::BarrierControllerOptions fixed = lcm;
  fixed.source = orchestra::BarrierSource::Fixed;
  fixed.fixed_barrier_ms = plan.barrier_ms;
  return std::make_unique<orchestra::BarrierController>(fixed);
}

}  // namespace experiments
