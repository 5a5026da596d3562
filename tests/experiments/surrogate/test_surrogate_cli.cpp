// The surrogate's commands end to end, as a researcher runs them: `orchestra surrogate log` on a
// tiny workload, `orchestra surrogate fit` on its logs, then `orchestra run` of an experiment with
// runtime.training: surrogate, which writes the usual results files, the same for the same seed.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "env/surrogate/surrogate_file.hpp"
#include "test_helpers.hpp"

namespace {

const std::string kBinary = ORCHESTRA_BINARY;

const char* kTask = R"(name: task
seed: 3
data: {dataset: synthetic, synthetic: {train: 480, test: 160, side: 8, noise: 2.0}}
model: {arch: mlp, hidden: [16]}
training: {global_batch: 48, lr: 0.05, epochs: 2, target_accuracy: 0.5, eval_every_rounds: 1}
cluster:
  servers:
    - {name: s1, workers: [{name: fast, time_model: {coefficients: [2, 0.1]}, max_batch: 64}]}
    - {name: s2, workers: [{name: slow, count: 2, time_model: {coefficients: [4, 0.2]}, max_batch: 64}]}
network: {bandwidth_gbps: 1, message_mb: 0.5}
policies:
  - orchestra-lcm
  - {name: fixed-t, T_ms: [20, 80]}
)";

const char* kTrain = R"(name: tiny
environment: local-sgd
experiments: [task.yaml]
clusters: {servers: [1, 2], workers_per_server: [1, 2], total_workers: [2, 3], message_mb: [0.1, 1], slowdown: {probability: 0}, cyclic: {probability: 0}}
controller: {move: multiplicative, factor: 2, interval: rounds, interval_rounds: 1, min_T_x_start: 0.125, max_T_x_start: 32}
a3c: {agents: 1, total_updates: 1}
)";

}  // namespace

TEST_CASE("orchestra surrogate log, fit, then run on the surrogate: the usual results files, the same per seed") {
  testing::TempDir dir;
  testing::write_text(dir / "task.yaml", kTask);
  testing::write_text(dir / "train.yaml", kTrain);
  const auto log = testing::run_command(kBinary + " surrogate log " + (dir / "train.yaml") + " --episodes 10 --chunk 5 --after-target 0.2 --out " +
                                        (dir / "log") + " --quiet");
  REQUIRE_MESSAGE(log.exit_code == 0, log.output);
  const auto fit = testing::run_command(kBinary + " surrogate fit " + (dir / "log") + " --out " + (dir / "s.json") +
                                        " --draws 2 --iterations 20 --quiet");
  REQUIRE_MESSAGE(fit.exit_code == 0, fit.output);
  const auto surrogate = env::read_surrogate(dir / "s.json");
  CHECK(surrogate->task.model == "mlp [16]");
  const auto report = nlohmann::json::parse(testing::read_text(dir / "s.json"))["fit"];
  CHECK(report["episodes"] == 10);
  CHECK(report["forms"].contains("progress-noise"));
  CHECK(report["forms"].contains("sample-clock"));

  std::string config = kTask;
  config += "runtime: {training: surrogate, surrogate: s.json}\n";
  testing::write_text(dir / "on_surrogate.yaml", config);
  for (const char* out : {"r1", "r2"}) {
    const auto run = testing::run_command(kBinary + " run " + (dir / "on_surrogate.yaml") + " --out " + (dir / out) + " --quiet");
    REQUIRE_MESSAGE(run.exit_code == 0, run.output);
  }
  CHECK(std::filesystem::exists(dir / "r1/comparison.md"));
  for (const char* policy : {"orchestra-lcm", "fixed-t-T_ms=20", "fixed-t-T_ms=80"}) {
    for (const char* file : {"rounds.csv", "iterations.csv", "epochs.csv", "evals.csv", "config.json"}) {
      const std::string a = dir / (std::string("r1/") + policy + "/" + file), b = dir / (std::string("r2/") + policy + "/" + file);
      REQUIRE_MESSAGE(std::filesystem::exists(a), a);
      CHECK_MESSAGE(testing::read_text(a) == testing::read_text(b), a);
    }
    const auto summary = nlohmann::json::parse(testing::read_text(dir / (std::string("r1/") + policy + "/summary.json")));
    CHECK(summary["epochs"] == 2);
    CHECK(summary["final_accuracy"].get<double>() > 0);
    const auto evals = testing::csv_column(dir / (std::string("r1/") + policy + "/evals.csv"), "accuracy");
    // eval_every_rounds: 1: one evaluation after every round (the last of an epoch is the epoch's).
    const auto rounds = testing::csv_column(dir / (std::string("r1/") + policy + "/rounds.csv"), "round");
    REQUIRE(!rounds.empty());
    CHECK(evals.size() == static_cast<std::size_t>(rounds.back()) + 1);
  }
  const auto resolved = nlohmann::json::parse(testing::read_text(dir / "r1/orchestra-lcm/config.json"));
  CHECK(resolved["runtime"]["training"] == "surrogate");
}
