// orchestra-lcm and fixed-t from experiment configs: their keys, defaults and errors (file:line and
// the key), the RL environment's config built from an experiment, and a tiny run through the runner.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "common/errors.hpp"
#include "experiments/config/config.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/registry/orchestra_options.hpp"
#include "experiments/registry/policy_registry.hpp"
#include "orchestra/barrier_controller.hpp"
#include "orchestra/rl/local_sgd_barrier_env.hpp"
#include "test_helpers.hpp"

using experiments::parse_config;

namespace {

// Line 20 is the first policy entry.
const std::string kBase = R"(name: tiny-orchestra
seed: 5
data:
  dataset: synthetic
  synthetic: {train: 240, test: 80, side: 8, noise: 2.0}
model: {arch: mlp, hidden: [16]}
training:
  global_batch: 24
  epochs: 2
  target_accuracy: 0.5
cluster:
  servers:
    - name: s0
      workers:
        - {name: fast, time_model: {coefficients: [2, 0.1]}, max_batch: 32}
    - name: s1
      workers:
        - {name: slow, count: 2, time_model: {coefficients: [4, 0.2]}, max_batch: 16}
policies:
)";

experiments::ExperimentConfig config_with(const std::string& policies) { return parse_config(kBase + policies, "x.yaml"); }

experiments::BuiltPolicy build(const std::string& policy) {
  const auto config = config_with("  - " + policy + "\n");
  return experiments::make_policy(config.policies.at(0), config);
}

void check_error(const std::string& policy, const std::string& expected) {
  CHECK_THROWS_WITH_AS(build(policy), doctest::Contains(expected.c_str()), common::ConfigError);
}

}  // namespace

TEST_CASE("orchestra-lcm: every key at its default, resolved into the results' config") {
  const auto built = build("orchestra-lcm");
  const auto* controller = dynamic_cast<const orchestra::BarrierController*>(built.policy.get());
  REQUIRE(controller != nullptr);
  const auto& o = controller->options();
  CHECK(o.source == orchestra::BarrierSource::Lcm);
  CHECK(o.lcm_objective == orchestra::LcmObjective::Utilization);
  CHECK(o.max_step_spread == 8);
  CHECK(o.max_local_steps == 64);
  CHECK(o.batch_sizes.empty());  // global_batch / N
  CHECK(o.partition == orchestra::DataPartition::Speed);
  CHECK(o.rerun_lcm_each_epoch);
  CHECK(o.horizon_epochs == 2);
  CHECK(built.resolved["objective"] == "utilization");
  CHECK(built.resolved["M"] == 8);
  CHECK(built.resolved["partition"] == "speed");
}

TEST_CASE("orchestra-lcm and fixed-t: keys set from YAML") {
  const auto lcm = build("{name: orchestra-lcm, objective: idle, M: 3, max_local_steps: 12, unit_ms: 2.5, rerun_lcm: false, "
                         "partition: steps, probes: 3, batch_sizes: [16, 8, 8]}");
  const auto& o = dynamic_cast<const orchestra::BarrierController&>(*lcm.policy).options();
  CHECK(o.lcm_objective == orchestra::LcmObjective::Idle);
  CHECK(o.max_step_spread == 3);
  CHECK(o.max_local_steps == 12);
  CHECK(o.action_unit_ms == 2.5);
  CHECK_FALSE(o.rerun_lcm_each_epoch);
  CHECK(o.partition == orchestra::DataPartition::Steps);
  CHECK(o.probe_repetitions == 3);
  CHECK(o.batch_sizes == std::vector<int>{16, 8, 8});
  CHECK(o.lcm_multiple == 1);
  CHECK(lcm.resolved["T_x_lcm"] == 1);
  const auto scaled = build("{name: orchestra-lcm, T_x_lcm: 2.5}");
  CHECK(dynamic_cast<const orchestra::BarrierController&>(*scaled.policy).options().lcm_multiple == 2.5);
  CHECK(o.lcm_cap_steps == 0);
  CHECK(o.lcm_cap_x_comm == 0);
  const auto capped = build("{name: orchestra-lcm, T_cap_steps: 4, T_cap_x_comm: 0.5, T_cap_above_steps: 12}");
  CHECK(dynamic_cast<const orchestra::BarrierController&>(*capped.policy).options().lcm_cap_above_steps == 12);
  CHECK(dynamic_cast<const orchestra::BarrierController&>(*capped.policy).options().lcm_cap_steps == 4);
  CHECK(dynamic_cast<const orchestra::BarrierController&>(*capped.policy).options().lcm_cap_x_comm == 0.5);
  CHECK_FALSE(o.whole_cluster_windows);
  CHECK(lcm.resolved["whole_cluster_windows"] == false);
  const auto whole = build("{name: orchestra-lcm, whole_cluster_windows: true}");
  CHECK(dynamic_cast<const orchestra::BarrierController&>(*whole.policy).options().whole_cluster_windows);

  const auto moves = build("{name: orchestra-lcm, move: multiplicative, factor: 1.5, interval: rounds, interval_rounds: 4, "
                           "min_T_ms: 5, max_T_ms: 900, min_T_x_start: 0.25, max_T_x_start: 8, floor_cap_steps: 3, min_T_steps: 1}");
  const auto& m = dynamic_cast<const orchestra::BarrierController&>(*moves.policy).options();
  CHECK(m.move == orchestra::BarrierMove::Multiplicative);
  CHECK(m.move_factor == 1.5);
  CHECK(m.interval == orchestra::DecisionInterval::Rounds);
  CHECK(m.interval_rounds == 4);
  CHECK(m.min_barrier_ms == 5);
  CHECK(m.max_barrier_ms == 900);
  CHECK(m.min_barrier_x_start == 0.25);
  CHECK(m.max_barrier_x_start == 8);
  CHECK(m.floor_cap_steps == 3);
  CHECK(m.min_barrier_steps == 1);
  CHECK(m.max_move == 1);
  const auto two_sizes = build("{name: orchestra-lcm, move: multiplicative, factor: 2, max_move: 2}");
  CHECK(dynamic_cast<const orchestra::BarrierController&>(*two_sizes.policy).options().max_move == 2);
  CHECK(two_sizes.resolved["max_move"] == 2);

  const auto fixed = build("{name: fixed-t, T_ms: 30, batch: 8}");
  const auto& f = dynamic_cast<const orchestra::BarrierController&>(*fixed.policy);
  CHECK(f.options().source == orchestra::BarrierSource::Fixed);
  CHECK(f.options().fixed_barrier_ms == 30);
  CHECK(f.options().batch_sizes == std::vector<int>{8, 8, 8});

  const auto by_comm = build("{name: fixed-t, T_x_comm: 1.5}");
  const auto& c = dynamic_cast<const orchestra::BarrierController&>(*by_comm.policy);
  CHECK(c.options().source == orchestra::BarrierSource::CommMultiple);
  CHECK(c.options().comm_multiple == 1.5);
  CHECK(by_comm.resolved["T_x_comm"] == 1.5);
}

TEST_CASE("orchestra-lcm and fixed-t: bad keys name file:line and the key") {
  check_error("{name: fixed-t}", "x.yaml:20: policies[0].T_ms: required key is missing");
  check_error("fixed-t", "policies[0].T_ms: required key is missing");
  check_error("{name: fixed-t, T_ms: 0}", "x.yaml:20: policies[0].T_ms: expected a number > 0 and <= 1e+12, got 0");
  // A barrier is a time on the clock: at most 10^9 s, as every other (1e300 ran).
  check_error("{name: fixed-t, T_ms: 1e300}", "x.yaml:20: policies[0].T_ms: expected a number > 0 and <= 1e+12, got 1e300");
  check_error("{name: orchestra-lcm, max_T_ms: 2e12}", "x.yaml:20: policies[0].max_T_ms: expected a number >= 0 and <= 1e+12, got 2e12");
  check_error("{name: fixed-t, T_ms: 30, rerun_lcm: true}", "policies[0].rerun_lcm: unknown key");
  check_error("{name: fixed-t, T_ms: 30, T_x_comm: 1}", "x.yaml:20: policies[0].T_x_comm: give either T_ms or T_x_comm, not both");
  check_error("{name: fixed-t, T_x_comm: 0}", "policies[0].T_x_comm: expected a number > 0 and <= 1e+06, got 0");
  check_error("{name: orchestra-lcm, T_x_comm: 1}", "policies[0].T_x_comm: unknown key");
  check_error("{name: fixed-t, T_ms: 30, objective: idle}", "policies[0].objective: unknown key");
  check_error("{name: orchestra-lcm, objective: fastest}",
              "policies[0].objective: expected one of utilization, idle, got 'fastest'");
  check_error("{name: orchestra-lcm, M: -1}", "x.yaml:20: policies[0].M: expected a non-negative integer, got -1");
  check_error("{name: orchestra-lcm, max_local_steps: 0}", "policies[0].max_local_steps: expected a positive integer, got 0");
  check_error("{name: orchestra-lcm, partition: random}", "policies[0].partition: expected one of speed, steps, got 'random'");
  check_error("{name: orchestra-lcm, batch: 32}", "policies[0].batch: batch 32 exceeds worker slow-0's max_batch 16");
  check_error("{name: orchestra-lcm, batch_sizes: [8, 8]}", "policies[0].batch_sizes: expected 3 entries (one per worker), got 2");
  check_error("{name: orchestra-lcm, batch: 8, batch_sizes: [8, 8, 8]}", "policies[0].batch_sizes: give either batch");
  check_error("{name: orchestra-lcm, unit_ms: -1}", "policies[0].unit_ms: expected a number >= 0");
  check_error("{name: orchestra-lcm, T_ms: 30}", "policies[0].T_ms: unknown key");
  check_error("{name: orchestra-lcm, move: exponential}", "policies[0].move: expected one of additive, multiplicative, got 'exponential'");
  check_error("{name: orchestra-lcm, factor: 2}", "x.yaml:20: policies[0].factor: only a multiplicative move has a factor");
  check_error("{name: orchestra-lcm, move: multiplicative, factor: 1}", "policies[0].factor: expected a number > 1");
  check_error("{name: orchestra-lcm, move: multiplicative, unit_ms: 5}", "policies[0].unit_ms: only an additive move has a unit");
  check_error("{name: orchestra-lcm, interval_rounds: 2}", "policies[0].interval_rounds: needs interval: rounds");
  check_error("{name: orchestra-lcm, interval: rounds, interval_rounds: 0}", "policies[0].interval_rounds: expected a positive integer");
  check_error("{name: orchestra-lcm, interval: weekly}", "policies[0].interval: expected one of epoch, rounds, got 'weekly'");
  check_error("{name: orchestra-lcm, min_T_ms: 50, max_T_ms: 20}", "policies[0].max_T_ms: must not be below min_T_ms");
  check_error("{name: orchestra-lcm, min_T_x_start: 2}", "policies[0].min_T_x_start: expected a number >= 0 and <= 1, got 2");
  check_error("{name: orchestra-lcm, T_x_lcm: 0}", "policies[0].T_x_lcm: expected a number > 0");
  check_error("{name: orchestra-lcm, whole_cluster_windows: maybe}", "policies[0].whole_cluster_windows:");
  check_error("{name: fixed-t, T_ms: 30, T_x_lcm: 2}", "policies[0].T_x_lcm: unknown key");
  check_error("{name: orchestra-lcm, T_cap_steps: -2}", "policies[0].T_cap_steps: expected a number >= 0");
  check_error("{name: orchestra-lcm, T_cap_above_steps: 12}", "policies[0].T_cap_above_steps: limits T_cap_steps / T_cap_x_comm, which are not set");
  check_error("{name: fixed-t, T_ms: 30, T_cap_x_comm: 1}", "policies[0].T_cap_x_comm: unknown key");
  check_error("{name: orchestra-lcm, max_T_x_start: 0.5}", "policies[0].max_T_x_start: expected a factor >= 1");
  check_error("{name: orchestra-lcm, floor_cap_steps: 4}", "policies[0].floor_cap_steps: caps min_T_x_start's floor, which is not set");
  check_error("{name: orchestra-lcm, min_T_x_start: 0.125, floor_cap_steps: -1}", "policies[0].floor_cap_steps: expected a number >= 0");
  check_error("{name: orchestra-lcm, min_T_steps: -1}", "policies[0].min_T_steps: expected a number >= 0");
  check_error("{name: orchestra-lcm, max_move: 5}", "x.yaml:20: policies[0].max_move: expected an integer <= 4, got 5");
  check_error("{name: orchestra-lcm, max_move: 0}", "policies[0].max_move: expected a positive integer, got 0");
  const auto names = experiments::policy_names();
  CHECK(std::count(names.begin(), names.end(), "orchestra-lcm") == 1);
  CHECK(std::count(names.begin(), names.end(), "fixed-t") == 1);
}

TEST_CASE("the RL environment's config from an experiment, and an episode on it") {
  auto config = config_with("  - {name: orchestra-lcm, M: 2}\n");
  common::YamlReader r(config.policies[0].params, config.file, config.policies[0].path);
  r.text("name", "");
  const auto options = experiments::read_barrier_options(r, orchestra::BarrierSource::Lcm, config);
  const auto rl = experiments::barrier_env_config(config, options);
  CHECK(rl.cluster.num_workers() == 3);
  CHECK(rl.global_batch == 24);
  CHECK(rl.data_seed == 5);
  CHECK(rl.budget.max_epochs == 2);
  CHECK(rl.budget.target_accuracy == 0.5);
  CHECK(rl.controller.max_step_spread == 2);
  CHECK(rl.data.dataset == "synthetic");

  orchestra::LocalSgdBarrierEnv environment(rl);
  const auto start = environment.reset(1);
  CHECK(start.info.barrier_ms == doctest::Approx(environment.controller().lcm().barrier_ms));
  const auto step = environment.step(orchestra::BarrierAction::Keep);
  CHECK(step.info.epoch == 1);
  CHECK(step.info.accuracy > start.info.accuracy);
  CHECK_THROWS_WITH_AS(environment.step(2), doctest::Contains("action must be -1, 0 or +1"), std::invalid_argument);

  // Moves of two sizes: +2 is the factor squared.
  auto wide = rl;
  wide.controller.move = orchestra::BarrierMove::Multiplicative;
  wide.controller.move_factor = 2;
  wide.controller.max_move = 2;
  orchestra::LocalSgdBarrierEnv two_sizes(wide);
  CHECK(two_sizes.max_move() == 2);
  const auto first = two_sizes.reset(1);
  const auto up = two_sizes.step(2);
  CHECK(up.info.barrier_ms == doctest::Approx(4 * first.info.barrier_ms));
  CHECK_THROWS_WITH_AS(two_sizes.step(-3), doctest::Contains("action must be in [-2, +2]"), std::invalid_argument);

  config.training.timing_only = true;
  CHECK_THROWS_WITH_AS(experiments::barrier_env_config(config, options), doctest::Contains("training.timing_only"),
                       common::ConfigError);
}

TEST_CASE("orchestra-lcm and fixed-t run through the runner, timing-only too") {
  for (const bool timing_only : {false, true}) {
    CAPTURE(timing_only);
    auto config = config_with("  - orchestra-lcm\n  - {name: fixed-t, T_ms: 40}\n");
    config.training.timing_only = timing_only;
    config.timing_train_samples = 240;
    testing::TempDir dir;
    experiments::RunOptions options;
    options.out_dir = dir / "results";
    options.quiet = true;
    const auto result = experiments::run_experiment(config, options);
    REQUIRE(result.outcomes.size() == 2);
    for (const auto& outcome : result.outcomes) {
      CHECK(outcome.epochs.size() == 2);
      CHECK(outcome.sim_time_s > 0);
      if (!timing_only) CHECK(outcome.final_accuracy > 0.3);
    }
    // fixed-t's barrier is echoed into every round: 40 ms.
    const std::string rounds = testing::read_text(dir / "results/fixed-t/rounds.csv");
    CHECK(rounds.find(",40\n") != std::string::npos);
  }
}
