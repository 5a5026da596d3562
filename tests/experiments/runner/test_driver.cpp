// The one experiment driver (issue 42): the experiment resolved once (overrides, sweeps, every
// policy built once), prepared once by its cluster before any policy runs, each outcome handed to
// the one writer, which alone writes; the cluster is the only difference between a simulated and
// a real run.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "experiments/registry/policy_registry.hpp"
#include "experiments/registry/resolved_experiment.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/simulated_cluster.hpp"
#include "test_helpers.hpp"

namespace fs = std::filesystem;

namespace {

const char* kConfig = R"(name: driver
seed: 3
data: {dataset: synthetic, synthetic: {train: 64, test: 32, side: 4}}
training: {global_batch: 8, epochs: 1, timing_only: true, train_samples: 64}
cluster:
  workers:
    - {name: a, time_model: {coefficients: [1, 0.1]}, max_batch: 64}
policies:
  - dsgd
  - {name: fixed-t, T_ms: [10, 20]}
)";

// A cluster that records what the driver asks of it, and makes an outcome of its own per policy.
class RecordingCluster : public experiments::ExperimentCluster {
 public:
  explicit RecordingCluster(bool writes) : writes_(writes) {}
  void prepare(experiments::Experiment& experiment) override {
    calls.push_back("prepare");
    experiment.config.resolved["noted_by_cluster"] = true;
  }
  bool writes_results() const override { return writes_; }
  void run(const experiments::Experiment&, experiments::ExperimentPolicy& policy, experiments::Progress&,
           experiments::ResultsWriter& writer) override {
    calls.push_back("run " + policy.entry.label);
    policies.push_back(policy.policy.get());
    if (!writes_) return;
    experiments::PolicyOutcome outcome;
    outcome.label = policy.entry.label;
    outcome.kind = policy.entry.kind;
    outcome.params = policy.params;
    outcome.timing_only = true;
    outcome.sim_time_s = 1.0 + static_cast<double>(calls.size());
    writer.write_finished(outcome);
  }
  std::vector<std::string> calls;
  std::vector<const env::BarrierPolicy*> policies;

 private:
  bool writes_;
};

}  // namespace

TEST_CASE("resolve once: overrides applied to the config and its resolved copy, sweeps expanded, every policy built") {
  experiments::Overrides overrides;
  overrides.seed = 9;
  overrides.threads = 2;
  const experiments::Experiment e = experiments::resolve_experiment(experiments::parse_config(kConfig, "driver.yaml"), overrides);
  CHECK(e.config.seed == 9);
  CHECK(e.config.threads == 2);
  CHECK(e.config.resolved["seed"] == 9);
  CHECK(e.config.resolved["runtime"]["threads"] == 2);
  REQUIRE(e.policies.size() == 3);
  CHECK(e.config.policies.size() == 3);
  CHECK(e.policies[1].entry.label == "fixed-t-T_ms=10");
  CHECK(e.policies[2].params["T_ms"] == 20.0);
  for (const auto& p : e.policies) CHECK(p.policy != nullptr);
  // The config part alone (a --seeds run's folder plans) resolves to the same config.
  const experiments::ExperimentConfig c = experiments::resolve_config(experiments::parse_config(kConfig, "driver.yaml"), overrides);
  CHECK(c.resolved == e.config.resolved);
  CHECK(c.policies.size() == 3);
}

TEST_CASE("the driver: prepared once, each policy's own object run in order, outcomes written by the one writer") {
  testing::TempDir dir;
  experiments::Experiment e = experiments::resolve_experiment(experiments::parse_config(kConfig, "driver.yaml"));
  std::vector<const env::BarrierPolicy*> built;
  for (const auto& p : e.policies) built.push_back(p.policy.get());
  experiments::RunOptions options;
  options.out_dir = dir / "out";
  options.quiet = true;
  RecordingCluster cluster(true);
  const auto result = experiments::run_experiment(e, cluster, options);
  CHECK(cluster.calls == std::vector<std::string>{"prepare", "run dsgd", "run fixed-t-T_ms=10", "run fixed-t-T_ms=20"});
  CHECK(cluster.policies == built);  // the objects resolved once, not rebuilt
  REQUIRE(result.outcomes.size() == 3);
  for (const char* label : {"dsgd", "fixed-t-T_ms=10", "fixed-t-T_ms=20"}) {
    CAPTURE(label);
    const auto config = nlohmann::json::parse(testing::read_text(dir / ("out/" + std::string(label) + "/config.json")));
    CHECK(config["noted_by_cluster"] == true);  // the resolved config after the cluster prepared it
    CHECK(config["policy"]["label"] == label);
    const auto summary = nlohmann::json::parse(testing::read_text(dir / ("out/" + std::string(label) + "/summary.json")));
    CHECK(summary["speedup_reference"] == "dsgd");
  }
  CHECK(fs::exists(dir / "out/comparison.md"));

  // A rank that does not write results: nothing is written, nothing returned.
  experiments::Experiment again = experiments::resolve_experiment(experiments::parse_config(kConfig, "driver.yaml"));
  RecordingCluster follower(false);
  options.out_dir = dir / "follower";
  CHECK(experiments::run_experiment(again, follower, options).outcomes.empty());
  CHECK(follower.calls.size() == 4);
  CHECK_FALSE(fs::exists(dir / "follower"));
}

// Each policy is built once and started for the preflight and again for its run
// (env/barrier_policy.hpp: start forgets everything an earlier start learned). The same resolved
// experiment run twice, on policies that have already been through a whole run, must write the
// same files: a policy whose start kept state (a random stream, a tuned period, a moved barrier)
// would plan differently the second time.
TEST_CASE("every policy, started again after a whole run, runs as it did the first time") {
  const char* config = R"(name: again
seed: 11
data:
  dataset: synthetic
  synthetic: {train: 384, test: 96, side: 6, noise: 1.0}
model: {arch: mlp, hidden: [8]}
training: {global_batch: 24, epochs: 2, eval_every_rounds: 3}
cluster:
  servers:
    - name: s0
      workers:
        - {name: fast, time_model: {coefficients: [1, 0.1]}, max_batch: 64, noise: 0.05}
        - {name: slow, time_model: {coefficients: [3, 0.4]}, max_batch: 64, noise: 0.05}
    - name: s1
      workers:
        - {name: other, time_model: {coefficients: [2, 0.2]}, max_batch: 64, noise: 0.05}
policies:
  - dsgd
  - {name: local-sgd, H: 3}
  - {name: mllsgd, H1: 2, H2: 4}
  - osa
  - {name: adacomm, interval_s: 0.02}
  - qsr
  - {name: lbb, repetitions: 2, window: 4}
  - boa
  - lb-bsp
  - orchestra-lcm
  - {name: fixed-t, T_ms: 20}
  - orchestra-a3c
  - {name: orchestra-a3c, label: sampled, actions: sampled, seed: 3}
  - orchestra-random
)";
  testing::TempDir dir;
  experiments::Experiment e = experiments::resolve_experiment(experiments::parse_config(config, "again.yaml"));
  // Every policy of the registry is here, so that a new one is checked too; but planned-t, whose
  // object is one of two already here (fixed-t at the planned T, or orchestra-lcm) and which needs
  // a surrogate fitted on this workload (its runs: test_surrogate).
  std::set<std::string> kinds;
  for (const auto& p : e.policies) kinds.insert(p.entry.kind);
  for (const auto& name : experiments::policy_names())
    if (name != "planned-t") CHECK_MESSAGE(kinds.count(name) == 1, name);
  experiments::RunOptions options;
  options.quiet = true;
  for (const char* out : {"first", "second"}) {
    options.out_dir = dir / out;
    experiments::SimulatedCluster cluster;
    experiments::run_experiment(e, cluster, options);
  }
  for (const auto& p : e.policies)
    for (const std::string file : {"rounds.csv", "epochs.csv", "evals.csv"}) {
      CAPTURE(p.entry.label);
      CAPTURE(file);
      const std::string first = testing::read_text(fs::path(dir / "first") / p.entry.label / file);
      CHECK(first.find('\n') < first.size() - 1);  // a header and rows
      CHECK(first == testing::read_text(fs::path(dir / "second") / p.entry.label / file));
    }
}

// Where each command answers a config it cannot run, before any policy is built or worker started:
// `run` sends a real cluster's config to launch and `launch` a simulated one to run (even with a
// bad policy key in them), and `launch` names a bad policy key once, itself, with nothing written.
TEST_CASE("run answers a real config with launch first, launch names a bad policy key before any worker starts") {
  testing::TempDir dir;
  testing::write_text(dir / "real.yaml", R"(name: real_bad
seed: 1
data: {dataset: synthetic, synthetic: {train: 64, test: 32, side: 4}}
training: {global_batch: 8, epochs: 1}
cluster:
  mode: real
  workers:
    - {name: a, time_model: {coefficients: [1, 0.1]}, max_batch: 64}
policies:
  - {name: local-sgd, H: 0}
)");
  const auto run = testing::run_command(std::string(ORCHESTRA_BINARY) + " run " + (dir / "real.yaml") + " --quiet --out " + (dir / "run"));
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("real.yaml:6: cluster.mode: real: run it on processes with orchestra launch --nproc 1") != std::string::npos);
  const auto launch = testing::run_command(std::string(ORCHESTRA_BINARY) + " launch --nproc 1 " + (dir / "real.yaml") + " --quiet --out " + (dir / "launch"));
  CHECK(launch.exit_code == 2);
  CHECK(launch.output.find("real.yaml:10: policies[0].H: expected a positive integer, got 0") != std::string::npos);
  CHECK(launch.output.find("worker") == std::string::npos);  // said by launch, not by a worker
  CHECK_FALSE(fs::exists(dir / "run"));
  CHECK_FALSE(fs::exists(dir / "launch"));
  // And launch answers a simulated config with run, the bad key notwithstanding.
  std::string simulated = testing::read_text(dir / "real.yaml");
  simulated.replace(simulated.find("  mode: real\n"), 13, "");
  testing::write_text(dir / "sim.yaml", simulated);
  const auto sim = testing::run_command(std::string(ORCHESTRA_BINARY) + " launch --nproc 1 " + (dir / "sim.yaml") + " --quiet --out " + (dir / "sim"));
  CHECK(sim.exit_code == 2);
  CHECK(sim.output.find("sim.yaml: cluster.mode: launch runs real clusters; this config is simulated") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "sim"));
}
