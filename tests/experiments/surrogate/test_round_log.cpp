// `orchestra surrogate log` (experiments/surrogate/round_log.hpp) on a tiny workload: real rounds
// logged one row each, the same files for the same seed, chunks already written skipped, and the
// rows read back as episodes that a surrogate is fitted on.
#include <doctest/doctest.h>

#include <filesystem>

#include "common/errors.hpp"
#include "experiments/runner/train_config.hpp"
#include "experiments/surrogate/logged_episodes.hpp"
#include "experiments/surrogate/round_log.hpp"
#include "test_helpers.hpp"

namespace {

// Synthetic data (480 samples), an MLP with 16 hidden units, clusters of 2-3 workers.
void write_tiny_training(const testing::TempDir& dir) {
  testing::write_text(dir / "task.yaml", R"(name: task
seed: 3
data: {dataset: synthetic, synthetic: {train: 480, test: 160, side: 8, noise: 2.0}}
model: {arch: mlp, hidden: [16]}
training: {global_batch: 48, lr: 0.05, epochs: 2, target_accuracy: 0.5}
cluster:
  workers:
    - {name: a, time_model: {coefficients: [2, 0.1]}, max_batch: 64}
policies: [orchestra-lcm]
)");
  testing::write_text(dir / "train.yaml", R"(name: tiny
environment: local-sgd
experiments: [task.yaml]
clusters:
  servers: [1, 2]
  workers_per_server: [1, 2]
  total_workers: [2, 3]
  message_mb: [0.1, 1]
  slowdown: {probability: 0}
  cyclic: {probability: 0}
controller: {move: multiplicative, factor: 2, interval: rounds, interval_rounds: 1, min_T_x_start: 0.125, max_T_x_start: 32}
a3c: {agents: 1, total_updates: 1}
)");
}

}  // namespace

TEST_CASE("surrogate log: one row per real round, the same files for the same seed, written chunks skipped") {
  testing::TempDir dir;
  write_tiny_training(dir);
  const experiments::TrainConfig config = experiments::load_train_config(dir / "train.yaml");
  experiments::RoundLogOptions options;
  options.episodes = 3;
  options.chunk = 2;
  options.seed = 9;
  options.quiet = true;
  options.out_dir = dir / "a";
  const auto first = experiments::log_real_rounds(config, options);
  CHECK(first.episodes_run == 3);
  options.out_dir = dir / "b";
  experiments::log_real_rounds(config, options);
  for (const char* file : {"rounds-000000-000001.csv", "rounds-000002-000002.csv", "episodes-000000-000001.csv", "task.json"})
    CHECK_MESSAGE(testing::read_text(dir / (std::string("a/") + file)) == testing::read_text(dir / (std::string("b/") + file)), file);
  const auto again = experiments::log_real_rounds(config, options);
  CHECK(again.episodes_run == 0);
  CHECK(again.episodes_skipped == 3);
  // ... but only by the same log: another seed, or another --chunk over the same episodes, is
  // refused before anything is written (fit would mix the two logs).
  const std::string task_before = testing::read_text(dir / "b/task.json");
  auto other_seed = options;
  other_seed.seed = 10;
  CHECK_THROWS_WITH_AS(experiments::log_real_rounds(config, other_seed), doctest::Contains("b: holds another round log (its log.json: seed (9, now 10))"),
                       common::FolderError);
  auto other_chunk = options;
  other_chunk.chunk = 3;
  CHECK_THROWS_WITH_AS(experiments::log_real_rounds(config, other_chunk), doctest::Contains("logged with another --chunk"), common::FolderError);
  CHECK(testing::read_text(dir / "b/task.json") == task_before);
  auto more = options;  // episodes after the logged ones: continues the log
  more.first_episode = 3;
  more.episodes = 1;
  CHECK(experiments::log_real_rounds(config, more).episodes_run == 1);
  more.first_episode = 2;  // ... but not a chunk over a logged one's episodes
  more.episodes = 2;
  CHECK_THROWS_WITH_AS(experiments::log_real_rounds(config, more), doctest::Contains("rounds-000002-000002.csv overlaps"), common::FolderError);

  const experiments::RoundLogs logs = experiments::read_round_logs({dir / "a"});
  REQUIRE(logs.episodes.size() == 3);
  // Read back whole or not at all: a folder given twice, a rounds file cut at a line boundary, or
  // rounds out of order would fit the surrogate on rounds that never ran as read.
  CHECK_THROWS_WITH_AS(experiments::read_round_logs({dir / "a", dir / "a/."}), doctest::Contains("given twice"), common::DataError);
  std::filesystem::copy(dir / "a", dir / "cut");
  std::string rounds = testing::read_text(dir / "cut/rounds-000002-000002.csv");
  rounds.erase(rounds.rfind('\n', rounds.size() - 2) + 1);  // the last round's row
  testing::write_text(dir / "cut/rounds-000002-000002.csv", rounds);
  CHECK_THROWS_WITH_AS(experiments::read_round_logs({dir / "cut"}), doctest::Contains("episode 2 has"), common::DataError);
  std::filesystem::copy(dir / "a", dir / "shuffled");
  std::string first_chunk = testing::read_text(dir / "shuffled/rounds-000000-000001.csv");
  const auto row = first_chunk.find("\n0,0,");
  REQUIRE(row != std::string::npos);
  first_chunk.replace(row, 5, "\n0,7,");
  testing::write_text(dir / "shuffled/rounds-000000-000001.csv", first_chunk);
  CHECK_THROWS_WITH_AS(experiments::read_round_logs({dir / "shuffled"}), doctest::Contains("round 7 of episode 0, expected round 0"),
                       common::DataError);
  CHECK(logs.rounds() == first.rounds);
  CHECK(logs.task.train_samples == 480);
  CHECK(logs.task.model == "mlp [16]");
  CHECK(logs.target_accuracy == doctest::Approx(0.5));
  for (const auto& e : logs.episodes) {
    CHECK(e.initial_loss > 1.5);  // an untrained 10-class model: about ln 10
    double progress = 0;
    for (const auto& r : e.rounds) {
      CHECK(r.progress > progress);  // every round uses samples
      progress = r.progress;
      CHECK((r.workers.size() == 2 || r.workers.size() == 3));
      CHECK(r.loss > 0);
    }
  }
}
