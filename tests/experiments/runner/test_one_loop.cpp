// One config, run simulated and through the real backend (one c10d Gloo process), goes through the
// same run loop: the same files, the same columns (the clock column named for its clock), the same
// epoch accounting and evaluation points, and, with one worker and one seed, the same training.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "env/real/c10d_communicator.hpp"
#include "experiments/config/config.hpp"
#include "common/csv_table.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/real_run.hpp"
#include "test_helpers.hpp"

namespace fs = std::filesystem;

namespace {

std::string config_text(const std::string& mode) {
  return R"(name: one_loop
seed: 3
data:
  dataset: synthetic
  synthetic: {train: 384, test: 128, channels: 1, side: 8, noise: 1.0}
model: {arch: mlp, hidden: [16]}
training:
  global_batch: 32
  lr: 0.05
  epochs: 2
  target_accuracy: 0.5
  eval_every_rounds: 5
cluster:
  mode: )" + mode + R"(
  workers:
    - {name: only, time_model: {coefficients: [1, 0.1]}, max_batch: 64}
policies:
  - dsgd
  - {name: local-sgd, H: 3}
)";
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string header_of(const fs::path& csv) {
  std::istringstream in(testing::read_text(csv.string()));
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

TEST_CASE("one loop: a config run simulated and real writes the same files, columns and epoch accounting") {
  testing::TempDir dir;
  testing::write_text(dir / "sim.yaml", config_text("simulated"));
  testing::write_text(dir / "real.yaml", config_text("real"));

  experiments::RunOptions sim_options;
  sim_options.out_dir = dir / "sim";
  sim_options.quiet = true;
  const auto sim = experiments::run_experiment(experiments::load_config(dir / "sim.yaml"), sim_options);

  env::RendezvousServer server(0, std::chrono::seconds(30));
  env::RendezvousSpec spec;
  spec.master_port = server.port();
  spec.world_size = 1;
  spec.timeout = std::chrono::seconds(30);
  env::C10dCommunicator comm(spec);
  experiments::RunOptions real_options;
  real_options.out_dir = dir / "real";
  real_options.quiet = true;
  const auto real = experiments::run_real_experiment(experiments::load_config(dir / "real.yaml"), comm, real_options);

  REQUIRE(sim.outcomes.size() == 2);
  REQUIRE(real.outcomes.size() == 2);
  for (const char* label : {"dsgd", "local-sgd"}) {
    INFO(label);
    const fs::path s = fs::path(dir / "sim") / label, r = fs::path(dir / "real") / label;
    CHECK(files_in(s) == files_in(r));
    for (const char* csv : {"rounds.csv", "iterations.csv"}) CHECK(header_of(s / csv) == header_of(r / csv));
    // The same columns, the clock's named for what it measured.
    CHECK(header_of(s / "epochs.csv") == "epoch,sim_time_s,epoch_time_s,accuracy,loss,train_loss,straggler_effect,utilization,rounds");
    CHECK(header_of(r / "epochs.csv") == "epoch,wall_time_s,epoch_time_s,accuracy,loss,train_loss,straggler_effect,utilization,rounds");
    CHECK(header_of(s / "evals.csv") == "round,epoch,sim_time_s,accuracy,loss");
    CHECK(header_of(r / "evals.csv") == "round,epoch,wall_time_s,accuracy,loss");
    // The same epoch accounting: rounds per epoch, evaluation points (periodic and epoch ends),
    // batches and local steps in every round.
    CHECK(testing::csv_column(s / "epochs.csv", "rounds") == testing::csv_column(r / "epochs.csv", "rounds"));
    CHECK(testing::csv_column(s / "evals.csv", "round") == testing::csv_column(r / "evals.csv", "round"));
    CHECK(testing::csv_column(s / "evals.csv", "epoch") == testing::csv_column(r / "evals.csv", "epoch"));
    CHECK(testing::csv_column(s / "rounds.csv", "batch_size") == testing::csv_column(r / "rounds.csv", "batch_size"));
    CHECK(testing::csv_column(s / "rounds.csv", "local_steps") == testing::csv_column(r / "rounds.csv", "local_steps"));
    // One worker, one seed, one data order: the same training, up to the float order of the
    // all-reduce and the gradient weighting.
    const auto sim_acc = testing::csv_column(s / "evals.csv", "accuracy"), real_acc = testing::csv_column(r / "evals.csv", "accuracy");
    REQUIRE(sim_acc.size() == real_acc.size());
    for (std::size_t i = 0; i < sim_acc.size(); ++i) CHECK(real_acc[i] == doctest::Approx(sim_acc[i]).epsilon(0.02));
  }
  // The tables say what their clock is.
  CHECK(testing::read_text(dir / "sim/comparison.md").find("| sim time (s) |") != std::string::npos);
  CHECK(testing::read_text(dir / "real/comparison.md").find("| wall time (s) |") != std::string::npos);
  CHECK(sim.outcomes[0].clock == env::ClockKind::Simulated);
  CHECK(real.outcomes[0].clock == env::ClockKind::Wall);
}
