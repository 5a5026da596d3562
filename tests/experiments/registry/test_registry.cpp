// The policy registry is the one list of policies: the README's table and `orchestra run --help`
// name exactly its policies, in its order, and the factory builds each of them.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "experiments/config/config.hpp"
#include "agents/policy_file.hpp"
#include "experiments/registry/a3c_policy.hpp"
#include "experiments/registry/planned_barrier.hpp"
#include "experiments/registry/policy_registry.hpp"
#include "orchestra/barrier_controller.hpp"
#include "test_helpers.hpp"

namespace {

// The rows of the README's policy table (between its markers): "name: what it does".
std::vector<std::string> readme_policy_rows() {
  const std::string readme = testing::read_text(std::string(ORCHESTRA_SOURCE_DIR) + "/README.md");
  const auto begin = readme.find("<!-- policies -->"), end = readme.find("<!-- /policies -->");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::istringstream lines(readme.substr(begin, end - begin));
  std::vector<std::string> rows;
  const std::regex row(R"(^\| `([a-z0-9-]+)` \| (.*) \|$)");
  std::smatch m;
  for (std::string line; std::getline(lines, line);)
    if (std::regex_search(line, m, row)) rows.push_back(m[1].str() + ": " + m[2].str());
  return rows;
}

// What `orchestra run --help` says of each policy: "name: what it does".
std::vector<std::string> help_policy_rows() {
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " run --help");
  REQUIRE(r.exit_code == 0);
  const auto at = r.output.find("\npolicies");
  REQUIRE(at != std::string::npos);
  std::istringstream lines(r.output.substr(at + 1));
  std::string line;
  std::getline(lines, line);  // the heading
  std::vector<std::string> rows;
  const std::regex row(R"(^  ([a-z0-9-]+) +(.*)$)");
  std::smatch m;
  while (std::getline(lines, line) && std::regex_search(line, m, row)) rows.push_back(m[1].str() + ": " + m[2].str());
  return rows;
}

// The names of "name: what it does" rows.
std::vector<std::string> names_of(const std::vector<std::string>& rows) {
  std::vector<std::string> names;
  for (const auto& row : rows) names.push_back(row.substr(0, row.find(": ")));
  return names;
}

}  // namespace

TEST_CASE("registry: the README's policy table lists exactly the registry's policies, in order") {
  CHECK(names_of(readme_policy_rows()) == experiments::policy_names());
}

TEST_CASE("registry: orchestra run --help lists exactly the registry's policies, in order") {
  CHECK(names_of(help_policy_rows()) == experiments::policy_names());
}

// The README said BOA was "balanced once from profiling, never tuned" after BOA had come to
// rebalance at every epoch: what each policy does is said once, in the registry.
TEST_CASE("registry: the README's table says of each policy what orchestra run --help says") {
  const auto readme = readme_policy_rows(), help = help_policy_rows();
  REQUIRE(readme.size() == experiments::policy_names().size());
  CHECK(readme == help);
}

TEST_CASE("registry: names are unique, and an unknown name is a config error listing every known one") {
  auto names = experiments::policy_names();
  CHECK(names.size() == 14);
  std::sort(names.begin(), names.end());
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  const auto config = experiments::parse_config(R"(cluster:
  workers:
    - {name: a, time_model: {coefficients: [1, 0.1]}}
policies:
  - {name: lbbb}
)",
                                                "x.yaml");
  std::string known;
  for (const auto& n : experiments::policy_names()) known += (known.empty() ? "" : ", ") + n;
  CHECK_THROWS_WITH_AS(experiments::make_policy(config.policies[0], config),
                       ("x.yaml:5: policies[0].name: unknown policy 'lbbb' (known: " + known + ")").c_str(), common::ConfigError);
}

TEST_CASE("registry: the factory builds every policy that needs no file") {
  for (const auto& kind : experiments::policy_registry()) {
    const std::string name = kind.name;
    if (name == "orchestra-a3c") continue;  // needs a trained policy file (tests/agents)
    if (name == "planned-t") continue;      // plans with the runner, installed by the program (below; tests/experiments/surrogate)
    const std::string entry = name == "fixed-t" ? "{name: fixed-t, T_ms: 100}" : "{name: " + name + "}";
    const auto config = experiments::parse_config("cluster:\n  workers:\n    - {name: a, time_model: {coefficients: [1, 0.1]}}\n"
                                                  "policies:\n  - " + entry + "\n",
                                                  "x.yaml");
    INFO(name);
    const auto built = experiments::make_policy(config.policies[0], config);
    CHECK(built.policy != nullptr);
    CHECK(built.resolved["name"] == name);
  }
}

namespace {

// A planner that answers T = 123 ms with `stub_misses` misses, and remembers what it was asked.
int stub_misses = 0;
experiments::BarrierPlanRequest stub_asked;
experiments::BarrierPlan stub_planner(const experiments::ExperimentConfig&, const experiments::BarrierPlanRequest& request) {
  stub_asked = request;
  experiments::BarrierPlan plan;
  plan.sweep_ms = {50, 123, 300};
  plan.barrier_ms = 123;
  plan.misses = stub_misses;
  plan.seeds = static_cast<int>(request.seeds.size());
  return plan;
}

// A drawn held-out cluster (the pretrained surrogate's workload) with one policy entry.
experiments::ExperimentConfig drawn_config_with(const std::string& entry) {
  YAML::Node root = YAML::LoadFile(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/heldout_eighteenth/drawn-100001.yaml");
  root["policies"] = YAML::Load("[" + entry + "]");
  root["seed"] = 1;
  YAML::Emitter out;
  out << root;
  return experiments::parse_config(out.c_str(), std::string(ORCHESTRA_SOURCE_DIR) + "/configs/heldout_eighteenth/planned.yaml");
}

// The options of a built policy that is Orchestra's barrier controller.
orchestra::BarrierControllerOptions controller(const experiments::BuiltPolicy& built) {
  const auto* c = dynamic_cast<const orchestra::BarrierController*>(built.policy.get());
  REQUIRE(c != nullptr);
  return c->options();
}

// With the stub planner, `config`'s one entry as the shipped policy deploys: from the planned
// 123 ms within [T/4, T]; where the plan is a guess, from LCM's T* within the trained [T*/8, 32 T*].
experiments::BuiltPolicy check_start_at_plan_in_quarter(const experiments::ExperimentConfig& config) {
  stub_misses = 0;
  auto planned = experiments::make_policy(config.policies[0], config);
  CHECK(controller(planned).source == orchestra::BarrierSource::Fixed);
  CHECK(controller(planned).fixed_barrier_ms == 123);
  CHECK(controller(planned).min_barrier_x_start == 0.25);
  CHECK(controller(planned).max_barrier_x_start == 1);
  CHECK(planned.resolved["min_T_x_start"] == 0.25);
  CHECK(planned.resolved["plan"]["by"] == "surrogate");
  stub_misses = 1;
  const auto guessed = experiments::make_policy(config.policies[0], config);
  CHECK(controller(guessed).source == orchestra::BarrierSource::Lcm);
  CHECK(controller(guessed).min_barrier_x_start == 0.125);
  CHECK(controller(guessed).max_barrier_x_start == 32);
  stub_misses = 0;
  return planned;
}

}  // namespace

TEST_CASE("registry: planned-t runs the planned T where the plan reached the target on every planning seed, orchestra-lcm where not") {
  experiments::set_barrier_planner(&stub_planner);
  const auto config = drawn_config_with("{name: planned-t, interval: rounds, interval_rounds: 1, planning_seeds: [7, 8]}");
  stub_misses = 0;
  const auto planned = experiments::make_policy(config.policies[0], config);
  CHECK(stub_asked.seeds == std::vector<std::uint64_t>{7, 8});
  CHECK(stub_asked.sweep_points == 8);
  // The default surrogate is the calibrated fit (configs/heldout_twentieth/README.md's rule).
  CHECK(std::filesystem::path(stub_asked.surrogate_file).filename() == "surrogate-controller-task-calibrated.json");
  CHECK(stub_asked.sweep_options.source == orchestra::BarrierSource::Fixed);
  CHECK(stub_asked.sweep_options.interval == orchestra::DecisionInterval::Rounds);  // the sweep runs as the planned T will
  CHECK(controller(planned).source == orchestra::BarrierSource::Fixed);
  CHECK(controller(planned).fixed_barrier_ms == 123);
  CHECK(controller(planned).interval == orchestra::DecisionInterval::Rounds);
  CHECK(planned.resolved["plan"]["by"] == "surrogate");
  CHECK(planned.resolved["plan"]["T_ms"] == 123);
  // A guess: orchestra-lcm as the registry's, its heuristic and re-estimates every epoch (3.1.1).
  stub_misses = 1;
  const auto guess = experiments::make_policy(config.policies[0], config);
  CHECK(controller(guess).source == orchestra::BarrierSource::Lcm);
  CHECK(controller(guess).interval == orchestra::DecisionInterval::Epoch);
  CHECK(controller(guess).lcm_objective == orchestra::LcmObjective::Utilization);
  CHECK(guess.resolved["plan"]["by"] == "orchestra-lcm");
  const auto kept = drawn_config_with("{name: planned-t, fallback: none}");
  CHECK(controller(experiments::make_policy(kept.policies[0], kept)).fixed_barrier_ms == 123);
  CHECK(stub_asked.seeds == experiments::default_planning_seeds());  // 101-110
  // A run on one of the default seeds plans on the others and the one after them.
  auto on_103 = drawn_config_with("{name: planned-t}");
  on_103.seed = 103;
  experiments::make_policy(on_103.policies[0], on_103);
  CHECK(stub_asked.seeds == std::vector<std::uint64_t>{101, 102, 111, 104, 105, 106, 107, 108, 109, 110});
  // The run's own seed among the planning seeds, and a surrogate fitted on another workload.
  const auto own = drawn_config_with("{name: planned-t, planning_seeds: [1, 2]}");
  CHECK_THROWS_WITH_AS(experiments::make_policy(own.policies[0], own), doctest::Contains("planning_seeds: holds the run's own seed 1"),
                       common::ConfigError);
  const auto other = experiments::parse_config("cluster:\n  workers:\n    - {name: a, time_model: {coefficients: [1, 0.1]}}\n"
                                               "policies:\n  - {name: planned-t}\n",
                                               "x.yaml");
  CHECK_THROWS_WITH_AS(experiments::make_policy(other.policies[0], other), doctest::Contains("x.yaml:5: policies[0].surrogate: "),
                       common::ConfigError);
  experiments::set_barrier_planner(nullptr);
}

TEST_CASE("registry: orchestra-a3c with start: planned moves T from the planned T, from LCM's T* where the plan is a guess") {
  experiments::set_barrier_planner(&stub_planner);
  stub_asked = {};
  const auto by_lcm = drawn_config_with("{name: orchestra-a3c, start: lcm}");
  CHECK(controller(experiments::make_policy(by_lcm.policies[0], by_lcm)).source == orchestra::BarrierSource::Lcm);
  CHECK(stub_asked.seeds.empty());  // no plan unless asked
  const auto config = drawn_config_with("{name: orchestra-a3c, start: planned, planning_seeds: [7, 8], sweep: 5}");
  stub_misses = 0;
  const auto planned = experiments::make_policy(config.policies[0], config);
  CHECK(stub_asked.seeds == std::vector<std::uint64_t>{7, 8});
  CHECK(stub_asked.sweep_points == 5);
  CHECK(stub_asked.sweep_options.source == orchestra::BarrierSource::Fixed);
  // The sweep runs with the network's recorded interval (every round), as `orchestra evaluate`'s does.
  CHECK(stub_asked.sweep_options.interval == orchestra::DecisionInterval::Rounds);
  CHECK(controller(planned).source == orchestra::BarrierSource::Fixed);
  CHECK(controller(planned).fixed_barrier_ms == 123);
  CHECK(planned.resolved["plan"]["by"] == "surrogate");
  CHECK(planned.resolved["start"] == "planned");
  stub_misses = 2;
  const auto guess = experiments::make_policy(config.policies[0], config);
  CHECK(controller(guess).source == orchestra::BarrierSource::Lcm);
  CHECK(guess.resolved["plan"]["by"] == "lcm");
  // The planning keys belong to start: planned; the run's own seed is refused as planned-t refuses it.
  const auto stray = drawn_config_with("{name: orchestra-a3c, start: lcm, planning_seeds: [7]}");
  CHECK_THROWS_AS(experiments::make_policy(stray.policies[0], stray), common::ConfigError);
  const auto own = drawn_config_with("{name: orchestra-a3c, start: planned, planning_seeds: [1]}");
  CHECK_THROWS_WITH_AS(experiments::make_policy(own.policies[0], own), doctest::Contains("planning_seeds: holds the run's own seed 1"),
                       common::ConfigError);
  experiments::set_barrier_planner(nullptr);
  // Without a planner the error names the key that asked for the plan.
  const auto unplanned = drawn_config_with("{name: orchestra-a3c, start: planned}");
  CHECK_THROWS_WITH_AS(experiments::make_policy(unplanned.policies[0], unplanned),
                       doctest::Contains("policies[0].start: a planned start plans on the surrogate of training, which this program does not include"),
                       common::ConfigError);
}

TEST_CASE("registry: orchestra-a3c starts where its policy file says: the shipped one at the plan, LCM's T* where it cannot plan, recorded") {
  // The shipped policy records start: planned and bounds [T/4, T] around a planned start
  // (BENCHMARKS.md, the twenty-second suite).
  const auto shipped = agents::A3cPolicy::load(experiments::pretrained_policy_path());
  CHECK(shipped.control().start == agents::BarrierStart::Planned);
  experiments::set_barrier_planner(&stub_planner);
  stub_asked = {};
  const auto config = drawn_config_with("{name: orchestra-a3c}");
  // From the plan in the file's bounds; where the plan is a guess, as the network was trained.
  const auto planned = check_start_at_plan_in_quarter(config);
  CHECK(stub_asked.seeds == experiments::default_planning_seeds());
  CHECK(planned.resolved["start"] == "planned");
  // Bounds the config gives win over the file's around the plan.
  const auto given = drawn_config_with("{name: orchestra-a3c, max_T_x_start: 2}");
  CHECK(controller(experiments::make_policy(given.policies[0], given)).max_barrier_x_start == 2);
  CHECK_FALSE(planned.resolved.contains("start_fallback"));
  // A workload the pretrained surrogate was not fitted on (the quickstart's model): LCM's T*, said.
  YAML::Node root = YAML::LoadFile(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/quickstart.yaml");
  root["policies"] = YAML::Load("[orchestra-a3c]");
  YAML::Emitter out;
  out << root;
  const auto quickstart = experiments::parse_config(out.c_str(), std::string(ORCHESTRA_SOURCE_DIR) + "/configs/quickstart.yaml");
  stub_asked = {};
  const auto unknown = experiments::make_policy(quickstart.policies[0], quickstart);
  CHECK(stub_asked.seeds.empty());
  CHECK(controller(unknown).source == orchestra::BarrierSource::Lcm);
  CHECK(controller(unknown).max_barrier_x_start == 32);  // as trained
  CHECK(unknown.resolved["start"] == "lcm");
  CHECK(unknown.resolved["start_fallback"].get<std::string>().find("does not know this workload (the surrogate was fitted on model mlp [64]") !=
        std::string::npos);
  // Asked for by the config, a plan that cannot be made is refused.
  YAML::Node explicit_root = YAML::Load(out.c_str());
  explicit_root["policies"] = YAML::Load("[{name: orchestra-a3c, start: planned}]");
  YAML::Emitter explicit_out;
  explicit_out << explicit_root;
  const auto explicit_start = experiments::parse_config(explicit_out.c_str(), "q.yaml");
  CHECK_THROWS_WITH_AS(experiments::make_policy(explicit_start.policies[0], explicit_start), doctest::Contains("policies[0].surrogate: "),
                       common::ConfigError);
  // A program without a planner (this suite, once uninstalled): LCM's T*, said; read back, the
  // resolved entry runs the same.
  experiments::set_barrier_planner(nullptr);
  const auto unplanned = experiments::make_policy(config.policies[0], config);
  CHECK(controller(unplanned).source == orchestra::BarrierSource::Lcm);
  CHECK(unplanned.resolved["start_fallback"].get<std::string>().find("this program does not include the surrogate of training") != std::string::npos);
  nlohmann::json entry = unplanned.resolved;
  entry.erase("batch_sizes");  // recorded empty beside batch, as config.json has them
  const auto again = drawn_config_with(entry.dump());
  const auto read_back = experiments::make_policy(again.policies[0], again);
  CHECK(read_back.resolved["start"] == "lcm");
  CHECK(read_back.resolved["start_fallback"] == unplanned.resolved["start_fallback"]);
}

TEST_CASE("registry: orchestra-random with start: planned moves T at random from the plan, in its own bounds around it") {
  experiments::set_barrier_planner(&stub_planner);
  stub_asked = {};
  stub_misses = 0;
  const auto by_lcm = drawn_config_with("{name: orchestra-random, move: multiplicative, factor: 4, min_T_x_start: 0.125, max_T_x_start: 32}");
  const auto from_lcm = experiments::make_policy(by_lcm.policies[0], by_lcm);
  CHECK(controller(from_lcm).source == orchestra::BarrierSource::Lcm);
  CHECK(stub_asked.seeds.empty());  // no plan unless asked
  // As orchestra evaluate writes it for a policy that starts at the plan: the trained bounds, and
  // the planned ones that win over them from the plan.
  const auto config = drawn_config_with(
      "{name: orchestra-random, move: multiplicative, factor: 4, min_T_x_start: 0.125, max_T_x_start: 32, start: planned, "
      "planned_min_T_x_start: 0.25, planned_max_T_x_start: 1}");
  // Where the plan is a guess: LCM's T* in the trained bounds, the keys' min/max_T_x_start.
  check_start_at_plan_in_quarter(config);
  CHECK(stub_asked.seeds == experiments::default_planning_seeds());
  // Planned bounds without a planned start, and a ceiling below the plan, are refused at their key.
  const auto stray = drawn_config_with("{name: orchestra-random, planned_max_T_x_start: 1}");
  CHECK_THROWS_WITH_AS(experiments::make_policy(stray.policies[0], stray),
                       doctest::Contains("policies[0].planned_max_T_x_start: bounds T around a planned start: it needs start: planned"),
                       common::ConfigError);
  const auto low = drawn_config_with("{name: orchestra-random, start: planned, planned_max_T_x_start: 0.5}");
  CHECK_THROWS_WITH_AS(experiments::make_policy(low.policies[0], low), doctest::Contains("planned_max_T_x_start: expected a factor >= 1"),
                       common::ConfigError);
  // Why a planned start fell back (orchestra evaluate writes it): kept in config.json, and only
  // beside a start at LCM's T*.
  const auto noted = drawn_config_with("{name: orchestra-random, start_fallback: no plan here}");
  CHECK(experiments::make_policy(noted.policies[0], noted).resolved["start_fallback"] == "no plan here");
  const auto contradicted = drawn_config_with("{name: orchestra-random, start: planned, start_fallback: no plan here}");
  CHECK_THROWS_WITH_AS(experiments::make_policy(contradicted.policies[0], contradicted),
                       doctest::Contains("policies[0].start_fallback: says why a planned start fell back to LCM's T*: it goes with start: lcm"),
                       common::ConfigError);
  experiments::set_barrier_planner(nullptr);
}

TEST_CASE("registry: planned-t in a program that installed no planner is one config error at its entry") {
  // This suite links no planner (the orchestra binary and the Python module install one).
  const auto config = experiments::parse_config("cluster:\n  workers:\n    - {name: a, time_model: {coefficients: [1, 0.1]}}\n"
                                                "policies:\n  - {name: planned-t}\n",
                                                "x.yaml");
  CHECK_THROWS_WITH_AS(experiments::make_policy(config.policies[0], config),
                       doctest::Contains("x.yaml:5: policies[0].name: planned-t plans on the surrogate of training, which this program does not include"),
                       common::ConfigError);
}

namespace {

experiments::ExperimentConfig with_policies(const std::string& policies) {
  return experiments::parse_config("cluster:\n  workers:\n    - {name: a, time_model: {coefficients: [1, 0.1]}}\npolicies:\n" + policies,
                                   "x.yaml");
}

// The config error building a one-policy config gives ("" when it builds).
std::string error_of(const std::string& entry) {
  auto c = with_policies("  - " + entry + "\n");
  try {
    experiments::make_policy(c.policies[0], c);
  } catch (const common::ConfigError& e) {
    return std::string(e.what());
  }
  return std::string();
}

std::vector<std::string> labels_of(const experiments::ExperimentConfig& config) {
  std::vector<std::string> labels;
  for (const auto& p : config.policies) labels.push_back(p.label);
  return labels;
}

}  // namespace

TEST_CASE("sweeps: a list for a one-value key gives one policy per value, several lists their product") {
  auto config = with_policies("  - dsgd\n  - {name: fixed-t, T_ms: [200, 400]}\n  - {name: local-sgd, H: [2, 4], weighting: [uniform, samples]}\n");
  experiments::expand_sweeps(config);
  CHECK(labels_of(config) == std::vector<std::string>{"dsgd", "fixed-t-T_ms=200", "fixed-t-T_ms=400", "local-sgd-H=2-weighting=uniform",
                                                      "local-sgd-H=2-weighting=samples", "local-sgd-H=4-weighting=uniform",
                                                      "local-sgd-H=4-weighting=samples"});
  const auto built = experiments::make_policy(config.policies[2], config);
  CHECK(built.resolved["T_ms"] == 400.0);
  CHECK(built.resolved["label"] == "fixed-t-T_ms=400");
  CHECK(experiments::make_policy(config.policies[6], config).resolved["weighting"] == "samples");
  // A labelled entry keeps its label as the stem; expanding twice changes nothing.
  auto labelled = with_policies("  - {name: fixed-t, label: short, T_ms: [100, 300]}\n");
  experiments::expand_sweeps(labelled);
  experiments::expand_sweeps(labelled);
  CHECK(labels_of(labelled) == std::vector<std::string>{"short-T_ms=100", "short-T_ms=300"});
  CHECK(experiments::make_policy(labelled.policies[1], labelled).resolved["label"] == "short-T_ms=300");
}

TEST_CASE("sweeps: a key that takes a list is not a sweep, an empty or nested sweep and clashing labels are config errors") {
  auto lists = with_policies("  - {name: orchestra-lcm, batch_sizes: [32, 64]}\n");
  experiments::expand_sweeps(lists);
  CHECK(labels_of(lists) == std::vector<std::string>{"orchestra-lcm"});
  auto empty = with_policies("  - {name: fixed-t, T_ms: []}\n");
  CHECK_THROWS_WITH_AS(experiments::expand_sweeps(empty), "x.yaml:5: policies[0].T_ms: an empty sweep: list at least one value", common::ConfigError);
  auto nested = with_policies("  - {name: fixed-t, T_ms: [[1, 2]]}\n");
  CHECK_THROWS_WITH_AS(experiments::expand_sweeps(nested), "x.yaml:5: policies[0].T_ms[0]: a sweep takes plain values", common::ConfigError);
  auto twice = with_policies("  - {name: fixed-t, T_ms: [200, 200]}\n");
  CHECK_THROWS_WITH_AS(experiments::expand_sweeps(twice), doctest::Contains("two policies labelled 'fixed-t-T_ms=200'"), common::ConfigError);
  // A key given twice is refused before the expansion, which would keep one of the two lists.
  auto repeated = with_policies("  - {name: fixed-t, T_ms: [100], T_ms: [200]}\n");
  CHECK_THROWS_WITH_AS(experiments::expand_sweeps(repeated), "x.yaml:5: policies[0].T_ms: duplicate key (first given on line 5)",
                       common::ConfigError);
}

TEST_CASE("configs/baselines.yaml: 5 seeds, and every policy, the fixed-t sweep expanded, builds") {
  auto config = experiments::load_config(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/baselines.yaml");
  CHECK(config.seeds == std::vector<std::uint64_t>{1, 2, 3, 4, 5});
  experiments::expand_sweeps(config);
  const auto labels = labels_of(config);
  CHECK(labels.size() == 13);
  CHECK(labels.back() == "fixed-t-T_ms=1600");
  for (const auto& entry : config.policies) {
    INFO(entry.label);
    CHECK(experiments::make_policy(entry, config).policy != nullptr);
  }
}

TEST_CASE("averaging options: weighting and outer on model-averaging policies, config errors elsewhere") {
  auto config = with_policies(
      "  - {name: local-sgd, H: 4, weighting: fednova, outer: {lr: 0.7, momentum: 0.9, nesterov: true}}\n"
      "  - {name: orchestra-lcm, weighting: samples}\n");
  const auto built = experiments::make_policy(config.policies[0], config);
  CHECK(built.resolved["weighting"] == "fednova");
  CHECK(built.resolved["outer"]["lr"] == 0.7);
  CHECK(built.resolved["outer"]["nesterov"] == true);
  env::ClusterView view;
  view.num_workers = 1;
  view.global_batch = 32;
  view.worker_names = {"a"};
  view.max_batch = {64};
  view.server_of = {0};
  built.policy->start(view);
  const env::RoundPlan plan = built.policy->plan({});
  CHECK(plan.weighting == env::AverageWeighting::FedNova);
  REQUIRE(plan.outer.has_value());
  CHECK(plan.outer->momentum == 0.9);
  // Without the keys nothing changes: no wrapper, plain uniform averaging.
  auto plain = with_policies("  - {name: local-sgd, H: 4}\n");
  const auto unchanged = experiments::make_policy(plain.policies[0], plain);
  unchanged.policy->start(view);
  CHECK(unchanged.policy->plan({}).weighting == env::AverageWeighting::Uniform);
  CHECK_FALSE(unchanged.policy->plan({}).outer.has_value());
  CHECK_FALSE(unchanged.resolved.contains("outer"));

  CHECK(error_of("{name: dsgd, outer: {lr: 0.7}}").find("x.yaml:5: policies[0].outer: dsgd all-reduces gradients every step") == 0);
  CHECK(error_of("{name: lbb, weighting: fednova}").find("x.yaml:5: policies[0].weighting: lbb all-reduces") == 0);
  CHECK(error_of("{name: local-sgd, outer: {lr: 0}}") == "x.yaml:5: policies[0].outer.lr: expected a number > 0 and <= 100, got 0");
  CHECK(error_of("{name: local-sgd, outer: {mu: 0.9}}").find("x.yaml:5: policies[0].outer.mu: unknown key") == 0);
  CHECK(error_of("{name: local-sgd, outer: 0.7}") == "x.yaml:5: policies[0].outer: expected a mapping of keys, got '0.7'");
  CHECK(error_of("{name: local-sgd, weighting: nova}") ==
        "x.yaml:5: policies[0].weighting: expected one of uniform, all_workers, samples, fednova, got 'nova'");

  // Eq. 2 with N fixed, on Orchestra's own policies as on the others.
  auto all = with_policies("  - {name: orchestra-lcm, weighting: all_workers}\n  - {name: fixed-t, T_ms: 50, weighting: all_workers}\n"
                           "  - {name: local-sgd, H: 4, weighting: all_workers}\n");
  view.probe_step_ms = [](int, int batch) { return 1.0 + 0.1 * batch; };  // Orchestra's policies probe at start
  view.allreduce_ms = [](int) { return 5.0; };
  for (const auto& entry : all.policies) {
    INFO(entry.label);
    const auto made = experiments::make_policy(entry, all);
    made.policy->start(view);
    CHECK(made.policy->plan({}).weighting == env::AverageWeighting::AllWorkers);
    CHECK(made.resolved["weighting"] == "all_workers");
  }
}

TEST_CASE("adacomm and qsr: their keys are read with defaults, and bad values name file:line and key") {
  auto config = with_policies("  - adacomm\n  - {name: qsr, H_base: 8, alpha: 0.2}\n");
  const auto adacomm = experiments::make_policy(config.policies[0], config);
  CHECK(adacomm.resolved["H0"] == 16);
  CHECK(adacomm.resolved["interval_s"] == 10.0);
  const auto qsr = experiments::make_policy(config.policies[1], config);
  CHECK(qsr.resolved["H_base"] == 8);
  CHECK(qsr.resolved["alpha"] == 0.2);
  CHECK(error_of("{name: adacomm, H0: 0}") == "x.yaml:5: policies[0].H0: expected a positive integer, got 0");
  CHECK(error_of("{name: adacomm, interval_s: -1}") == "x.yaml:5: policies[0].interval_s: expected a number > 0 and <= 1e+09, got -1");
  CHECK(error_of("{name: qsr, alpha: x}") == "x.yaml:5: policies[0].alpha: expected a number > 0 and <= 1e+06, got 'x'");
  CHECK(error_of("{name: qsr, H: 4}").find("x.yaml:5: policies[0].H: unknown key") == 0);
}

// Issue 39: a sweep of 10^6 points printed nothing and grew past 6 GB; now it is sized before it is
// expanded, and a label it would make that is no name is refused at the value.
TEST_CASE("sweeps are sized before they are expanded: past 10,000 runs one clear error with the count") {
  std::string values;
  for (int k = 1; k <= 1000; ++k) values += (k > 1 ? ", " : "") + std::to_string(k);
  auto huge = with_policies("  - dsgd\n  - {name: local-sgd, H: [" + values + "], batch: [" + values + "]}\n");
  CHECK_THROWS_WITH_AS(experiments::expand_sweeps(huge),
                       "x.yaml:6: policies[1]: this entry gives 1000000 runs (H: 1000 values x batch: 1000 values), and the experiment 1000001 up to "
                       "here; an experiment runs at most 10000 (its policies, sweeps expanded, times its seeds)",
                       common::ConfigError);
  CHECK(huge.policies.size() == 2);  // nothing was expanded
  // The limit counts seeds: 2,001 points on 5 seeds is over it, on 4 seeds not.
  std::string many;
  for (int k = 1; k <= 2001; ++k) many += (k > 1 ? ", " : "") + std::to_string(k);
  auto seeds = with_policies("  - {name: fixed-t, T_ms: [" + many + "]}\n");
  seeds.seeds = {1, 2, 3, 4, 5};
  CHECK_THROWS_WITH_AS(experiments::expand_sweeps(seeds), doctest::Contains("this entry gives 2001 runs (T_ms: 2001 values), times 5 seeds"), common::ConfigError);
  seeds.seeds = {1, 2, 3, 4};
  experiments::expand_sweeps(seeds);
  CHECK(seeds.policies.size() == 2001);
  // A swept value that would make a label no name (a policy file's path) is refused at the value.
  auto paths = with_policies("  - {name: fixed-t, T_ms: [100, \"1/2\"]}\n");
  CHECK_THROWS_WITH_AS(experiments::expand_sweeps(paths), doctest::Contains("x.yaml:5: policies[0].T_ms[1]: the sweep's label 'fixed-t-T_ms=1/2' holds '/'"),
                       common::ConfigError);
}
