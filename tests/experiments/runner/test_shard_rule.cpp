// training.shards through the run loop, on every training backend: a worker slowed mid-epoch,
// under a barrier that re-measures speeds every round, takes fewer steps per round than its shard
// was sized for. Under `epoch` the others run out first and it trains the epoch's tail alone;
// under `rebalance` and `steal` (the slowed worker is the slower one) the epoch ends together, in
// fewer rounds.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "env/surrogate/surrogate_file.hpp"
#include "experiments/config/config.hpp"
#include "experiments/runner/experiment.hpp"
#include "test_helpers.hpp"

namespace {

const char* kSlowedMidEpoch = R"(name: slowed
seed: 4
data:
  dataset: synthetic
  synthetic: {train: 2048, test: 256, side: 6}
model: {arch: mlp, hidden: [16]}
training:
  global_batch: 32
  epochs: 1
  target_accuracy: 0.5
cluster:
  workers:
    - {name: a, time_model: {coefficients: [1, 0.1]}, max_batch: 64}
    - {name: b, time_model: {coefficients: [1, 0.1]}, max_batch: 64}
  perturbations:
    - {worker: b, start_s: 0.05, slowdown: 4}
policies:
  - {name: fixed-t, T_ms: 20, interval: rounds}
)";

struct Epoch {
  std::int64_t rounds = 0;
  int alone = 0;  // rounds in which worker a took no step
};

// One epoch of kSlowedMidEpoch under `shards`, with `training_keys` added to its training section
// and `extra` (a runtime section) to the config.
Epoch run_one_epoch(const std::string& shards, const std::string& training_keys, const std::string& extra, const std::string& dir) {
  std::string config = kSlowedMidEpoch;
  config.replace(config.find("  epochs: 1\n"), 12, "  epochs: 1\n  shards: " + shards + "\n" + training_keys);
  config += extra;
  experiments::RunOptions options;
  options.quiet = true;
  options.out_dir = dir + "/" + shards;
  const auto result = experiments::run_experiment(experiments::parse_config(config, dir + "/slowed.yaml"), options);
  REQUIRE(result.outcomes.size() == 1);
  Epoch e;
  e.rounds = result.outcomes[0].rounds;
  std::istringstream rows(result.outcomes[0].rounds_csv);  // round,epoch,worker,batch_size,local_steps,...
  std::string line;
  std::getline(rows, line);
  while (std::getline(rows, line)) {
    std::istringstream cells(line);
    std::string cell[5];
    for (auto& c : cell) std::getline(cells, c, ',');
    if (cell[2] == "a" && cell[4] == "0") ++e.alone;
  }
  return e;
}

}  // namespace

TEST_CASE("training.shards: rebalance and steal end an epoch together where fixed shards leave the slowed worker its tail, on every backend") {
  testing::TempDir dir;
  // A surrogate of this workload for the surrogate backend (its accuracy map does not matter here).
  env::SurrogateModel surrogate;
  surrogate.task = {"synthetic", 2048, 256, "mlp [16]", 1000, 32, 0.05, 0.9, 0.0005, "constant"};
  surrogate.accuracy.coefficients = {0.9, -0.3};
  env::write_surrogate(dir / "s.json", surrogate);
  struct Backend {
    std::string name;
    std::string training_keys, extra;
  };
  const Backend backends[] = {{"libtorch", "", ""},
                              {"timing-only", "  timing_only: true\n  train_samples: 2048\n", ""},
                              {"surrogate", "", "runtime:\n  training: surrogate\n  surrogate: " + (dir / "s.json") + "\n"}};
  for (const Backend& b : backends) {
    CAPTURE(b.name);
    const Epoch fixed = run_one_epoch("epoch", b.training_keys, b.extra, dir / b.name);
    CHECK(fixed.alone >= 5);
    for (const std::string rule : {"rebalance", "steal"}) {
      CAPTURE(rule);
      const Epoch together = run_one_epoch(rule, b.training_keys, b.extra, dir / b.name);
      MESSAGE(b.name << ": epoch " << fixed.rounds << " rounds, " << fixed.alone << " without a; " << rule << " " << together.rounds
                     << " rounds, " << together.alone << " without a");
      CHECK(together.alone <= 1);
      CHECK(together.rounds + 4 <= fixed.rounds);
    }
  }
}
