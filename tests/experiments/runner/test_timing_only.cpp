// Cluster-scale what-if studies: replicated servers (`count` on a server), timing-only runs and how
// the tables compare them (no accuracy, so speedups are per epoch of simulated time).
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "experiments/config/config.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/analysis/comparison.hpp"
#include "experiments/analysis/speedup.hpp"
#include "test_helpers.hpp"

namespace fs = std::filesystem;
using testing::read_text;
using testing::TempDir;

namespace {

const char* kReplicated = R"(name: scale
seed: 2
data: {dataset: synthetic}
training: {global_batch: 96, epochs: 2, timing_only: true, train_samples: 9600}
cluster:
  servers:
    - name: fast
      count: 2
      workers:
        - {name: gpu, count: 4, time_model: {coefficients: [2, 0.1]}, max_batch: 64, noise: 0.02}
    - name: slow
      count: 4
      workers:
        - {name: gpu, count: 4, time_model: {coefficients: [4, 0.3]}, max_batch: 64, noise: 0.02}
network: {bandwidth_gbps: 1, message_mb: 20}
policies:
  - dsgd
  - {name: local-sgd, H: 8}
)";

std::string fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

}  // namespace

TEST_CASE("a server with count: N is N servers, each with its workers named after it") {
  const auto config = experiments::parse_config(kReplicated, "scale.yaml");
  const auto& c = config.cluster;
  REQUIRE(c.num_servers() == 6);
  REQUIRE(c.num_workers() == 24);
  CHECK(c.server_names[0] == "fast-0");
  CHECK(c.server_names[5] == "slow-3");
  CHECK(c.workers[0].name == "fast-0.gpu-0");
  CHECK(c.workers[4].name == "fast-1.gpu-0");
  CHECK(c.workers[4].server == 1);
  CHECK(c.workers[23].name == "slow-3.gpu-3");
  CHECK(c.workers[23].server == 5);
  CHECK(config.resolved["cluster"]["workers"][1]["server"] == "fast-1");

  std::string bad = kReplicated;
  bad.replace(bad.find("count: 2"), 8, "count: 0");
  CHECK_THROWS_WITH_AS(experiments::parse_config(bad, "scale.yaml"), doctest::Contains("scale.yaml:8: cluster.servers[0].count"), common::ConfigError);
  std::string huge = kReplicated;  // 100,000 servers of 4: over the cluster's bound, said before anything is allocated
  huge.replace(huge.find("count: 4\n"), 8, "count: 100000");
  CHECK_THROWS_WITH_AS(experiments::parse_config(huge, "scale.yaml"), doctest::Contains("more than 100000 workers"), common::ConfigError);
  std::string clash = kReplicated;  // "slow" replicated gives slow-0 .. slow-3; a server named fast-1 clashes
  clash.replace(clash.find("name: slow"), 10, "name: fast-1\n      count: 1");
  clash.erase(clash.find("      count: 4\n"), 15);
  CHECK_THROWS_WITH_AS(experiments::parse_config(clash, "scale.yaml"), doctest::Contains("duplicate server name 'fast-1'"), common::ConfigError);
}

TEST_CASE("speedup: time to target with accuracy, time per epoch in timing-only runs") {
  using experiments::SpeedupBasis;
  using experiments::speedup_over;
  CHECK(*speedup_over({100.0, false, 300, 3}, {50.0, false, 400, 4}) == doctest::Approx(2.0));
  CHECK_FALSE(speedup_over({100.0, false, 300, 3}, {std::nullopt, false, 400, 4}).has_value());
  // 30 s / 3 epochs against 20 s / 4 epochs: 10 s against 5 s an epoch.
  CHECK(*speedup_over({std::nullopt, true, 30, 3}, {std::nullopt, true, 20, 4}) == doctest::Approx(2.0));
  CHECK_FALSE(speedup_over({std::nullopt, true, 30, 3}, {50.0, false, 20, 4}).has_value());
  CHECK_FALSE(speedup_over({std::nullopt, true, 30, 0}, {std::nullopt, true, 20, 4}).has_value());
}

TEST_CASE("a timing-only run: tables say so, and speedups compare simulated time per epoch") {
  TempDir dir;
  testing::write_text(dir / "scale.yaml", kReplicated);
  const auto run = testing::run_command(std::string(ORCHESTRA_BINARY) + " run " + (dir / "scale.yaml") + " --quiet --out " + (dir / "out"));
  REQUIRE(run.exit_code == 0);
  const auto dsgd = nlohmann::json::parse(read_text(dir / "out/dsgd/summary.json"));
  const auto local = nlohmann::json::parse(read_text(dir / "out/local-sgd/summary.json"));
  CHECK(dsgd["timing_only"] == true);
  CHECK(dsgd["final_accuracy"].is_null());
  CHECK(dsgd["idle_s_per_worker"].size() == 24);
  // 20 MB over 1 Gbit/s every step against every 8th: local SGD's epochs are several times shorter.
  const double expected = dsgd["sim_time_s"].get<double>() / local["sim_time_s"].get<double>();
  CHECK(expected > 2.0);
  CHECK(local["speedup_vs_first"].get<double>() == doctest::Approx(expected));
  const std::string table = read_text(dir / "out/comparison.md");
  CHECK(table.find("| local-sgd | timing only | " + fixed2(expected) + "x |") != std::string::npos);

  const auto compare = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (dir / "out") + " --quiet");
  REQUIRE(compare.exit_code == 0);
  const std::string md = read_text(dir / "out/compare.md");
  CHECK(md.find("| local-sgd | timing only | " + fixed2(expected) + "x |") != std::string::npos);
  CHECK(read_text(dir / "out/compare.csv").find(",1\n") != std::string::npos);  // the timing_only column
}

TEST_CASE("configs/whatif_1024.yaml: 1,024 workers on 128 servers, local SGD ahead of dsgd on the slow network") {
  TempDir dir;
  experiments::RunOptions options;
  options.quiet = true;
  options.out_dir = dir / "w";
  const auto config = experiments::load_config(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/whatif_1024.yaml");
  CHECK(config.cluster.num_workers() == 1024);
  CHECK(config.cluster.num_servers() == 128);
  const auto result = experiments::run_experiment(config, options);
  REQUIRE(result.outcomes.size() >= 4);
  const auto& dsgd = result.outcomes.front();
  REQUIRE(dsgd.label == "dsgd");
  for (const auto& o : result.outcomes) {
    CAPTURE(o.label);
    CHECK(o.timing_only);
    const auto up = experiments::speedup(dsgd, o);
    REQUIRE(up.has_value());
    if (o.label == "local-sgd" || o.label == "orchestra-lcm") CHECK(*up > 2.0);  // a 178 MB all-reduce every step is what dsgd pays
  }
}

// A time budget stops a run inside an epoch: the time spent on that epoch's first samples is no
// whole epoch's. Before, the clock at the stop was divided by the whole epochs: dsgd's one epoch
// of 31.4 s read as 45.3 s, and local-sgd's speedup as 9.03x where its epochs are 6.92x shorter.
TEST_CASE("a timing-only run stopped by its time budget compares the time of its whole epochs") {
  TempDir dir;
  std::string config = kReplicated;
  config.replace(config.find("epochs: 2,"), 10, "epochs: 20, max_sim_seconds: 45,");
  testing::write_text(dir / "cut.yaml", config);
  const auto run = testing::run_command(std::string(ORCHESTRA_BINARY) + " run " + (dir / "cut.yaml") + " --quiet --out " + (dir / "out"));
  REQUIRE(run.exit_code == 0);
  // Each run's whole epochs, and the clock when the last of them ended (epochs.csv's last row).
  const auto whole_epochs = [&](const std::string& label) {
    const std::string csv = read_text(dir / ("out/" + label + "/epochs.csv"));
    const std::size_t last = csv.rfind('\n', csv.size() - 2) + 1;
    const int epochs = std::stoi(csv.substr(last));
    const double end_s = std::stod(csv.substr(csv.find(',', last) + 1));
    return std::pair<int, double>{epochs, end_s};
  };
  const auto [dsgd_epochs, dsgd_end] = whole_epochs("dsgd");
  const auto [local_epochs, local_end] = whole_epochs("local-sgd");
  const auto dsgd = nlohmann::json::parse(read_text(dir / "out/dsgd/summary.json"));
  const auto local = nlohmann::json::parse(read_text(dir / "out/local-sgd/summary.json"));
  REQUIRE(dsgd["epochs"] == dsgd_epochs);
  REQUIRE(local["epochs"] == local_epochs);
  // Both stopped inside an epoch (the budget, not the epochs, ended them).
  CHECK(dsgd_epochs < 20);
  CHECK(dsgd["sim_time_s"].get<double>() > dsgd_end + 1.0);
  const double expected = (dsgd_end / dsgd_epochs) / (local_end / local_epochs);
  CHECK(local["speedup_vs_first"].get<double>() == doctest::Approx(expected));
  CHECK(read_text(dir / "out/comparison.md").find("| local-sgd | timing only | " + fixed2(expected) + "x |") != std::string::npos);
  const auto compare = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (dir / "out"));
  REQUIRE(compare.exit_code == 0);
  CHECK(compare.output.find("| local-sgd | timing only | " + fixed2(expected) + "x |") != std::string::npos);
  // The explanation's epoch times are those of whole epochs too.
  char dsgd_epoch[32];
  std::snprintf(dsgd_epoch, sizeof dsgd_epoch, "than dsgd (%.1f s)", dsgd_end / dsgd_epochs);
  CHECK(compare.output.find(dsgd_epoch) != std::string::npos);
}
