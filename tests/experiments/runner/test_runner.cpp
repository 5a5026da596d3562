// End to end through the runner and the command line: determinism, bad input, the quickstart.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "experiments/config/config.hpp"
#include "experiments/runner/experiment.hpp"
#include "test_helpers.hpp"

namespace fs = std::filesystem;
using testing::read_text;
using testing::TempDir;

namespace {

const char* kTiny = R"(name: tiny
seed: 5
data:
  dataset: synthetic
  synthetic: {train: 512, test: 128, side: 6}
model: {arch: mlp, hidden: [16]}
training:
  global_batch: 32
  epochs: 2
  target_accuracy: 0.5
  eval_every_rounds: 5
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
)";

nlohmann::json summary_without_wall_clock(const std::string& path) {
  auto j = nlohmann::json::parse(read_text(path));
  j.erase("wall_clock");
  return j;
}

std::string binary() { return ORCHESTRA_BINARY; }

}  // namespace

TEST_CASE("the same config and seed give the same results files") {
  TempDir dir;
  experiments::RunOptions options;
  options.quiet = true;
  for (const char* run : {"a", "b"}) {
    options.out_dir = dir / run;
    experiments::run_experiment(experiments::parse_config(kTiny, "tiny.yaml"), options);
  }
  for (const char* policy : {"dsgd", "local-sgd", "mllsgd", "osa"}) {
    CAPTURE(policy);
    for (const char* file : {"epochs.csv", "rounds.csv", "evals.csv", "config.json"}) {
      const std::string a = read_text(dir / (std::string("a/") + policy + "/" + file));
      CHECK(!a.empty());
      CHECK(a == read_text(dir / (std::string("b/") + policy + "/" + file)));
    }
    CHECK(summary_without_wall_clock(dir / (std::string("a/") + policy + "/summary.json")) ==
          summary_without_wall_clock(dir / (std::string("b/") + policy + "/summary.json")));
  }
  // A different seed gives different results.
  options.out_dir = dir / "c";
  options.seed = 6;
  experiments::run_experiment(experiments::parse_config(kTiny, "tiny.yaml"), options);
  CHECK(read_text(dir / "a/dsgd/rounds.csv") != read_text(dir / "c/dsgd/rounds.csv"));
}

TEST_CASE("results folders hold every file, and the summary what was measured") {
  TempDir dir;
  experiments::RunOptions options;
  options.quiet = true;
  options.out_dir = dir / "r";
  const auto result = experiments::run_experiment(experiments::parse_config(kTiny, "tiny.yaml"), options);
  REQUIRE(result.outcomes.size() == 4);
  for (const char* file : {"rounds.csv", "epochs.csv", "evals.csv", "summary.json", "config.json"})
    CHECK(fs::exists(dir / (std::string("r/local-sgd/") + file)));
  CHECK(fs::exists(dir / "r/comparison.md"));
  const auto summary = nlohmann::json::parse(read_text(dir / "r/local-sgd/summary.json"));
  CHECK(summary["epochs"] == 2);
  CHECK(summary["final_accuracy"].get<double>() > 0.5);
  CHECK(summary["speedup_reference"] == "dsgd");
  // No staging folders or temporary files are left behind.
  for (const auto& entry : fs::recursive_directory_iterator(dir / "r")) {
    CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);
    CHECK(entry.path().filename().string().find(".staging-") == std::string::npos);
  }
  // rounds.csv has one row per round and worker.
  const std::string rounds = read_text(dir / "r/dsgd/rounds.csv");
  CHECK(std::count(rounds.begin(), rounds.end(), '\n') == 1 + 3 * 2 * 16);  // header + 3 workers * 2 epochs * 512/32
}

TEST_CASE("bad input on the command line: one clear line, non-zero exit, no results folder") {
  TempDir dir;
  struct Case {
    std::string name, yaml, expected;
  };
  const std::string tiny = kTiny;
  const std::vector<Case> cases = {
      {"unknown key", tiny + "colour: blue\n", "bad.yaml:26: colour: unknown key"},
      {"unknown policy", std::string(kTiny).replace(tiny.find("- osa"), 5, "- fastest"), "policies[3].name: unknown policy 'fastest'"},
      {"wrong type", std::string(kTiny).replace(tiny.find("epochs: 2"), 9, "epochs: two"), "training.epochs: expected a positive integer, got 'two'"},
      {"zero size", std::string(kTiny).replace(tiny.find("global_batch: 32"), 16, "global_batch: 0"), "training.global_batch: expected a positive integer, got 0"},
      {"empty", "", "bad.yaml: the config is empty"},
      {"not yaml", "{{{{ not yaml", "bad.yaml:1: not valid YAML"},
      {"missing data", std::string(kTiny).replace(tiny.find("dataset: synthetic"), 18, "dataset: mnist\n  path: /nonexistent"), "/nonexistent/train-images-idx3-ubyte.gz: no such file"},
      {"batch over memory", std::string(kTiny).replace(tiny.find("global_batch: 32"), 16, "global_batch: 1000"), "over its max_batch"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    testing::write_text(dir / "bad.yaml", c.yaml);
    const auto r = testing::run_command(binary() + " run " + (dir / "bad.yaml") + " --quiet --out " + (dir / "out"));
    CHECK(r.exit_code != 0);
    CHECK(r.output.find(c.expected) != std::string::npos);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(dir / "out"));
  }
}

TEST_CASE("a truncated IDX file stops the run before any result is written") {
  TempDir dir;
  fs::create_directories(dir / "data");
  for (const char* f : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"})
    testing::write_text(dir / (std::string("data/") + f), std::string("\0\0\x08\x03\0\0\0\x05", 8));  // header cut short
  std::string yaml = kTiny;
  yaml.replace(yaml.find("dataset: synthetic"), 18, "dataset: mnist\n  path: " + (dir / "data"));
  testing::write_text(dir / "t.yaml", yaml);
  const auto r = testing::run_command(binary() + " run " + (dir / "t.yaml") + " --quiet --out " + (dir / "out"));
  CHECK(r.exit_code != 0);
  CHECK(r.output.find("train-images-idx3-ubyte.gz: truncated") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out"));
}

TEST_CASE("the quickstart: local-sgd reaches the target before dsgd, every policy trains for real" *
          doctest::skip(!fs::exists("/usr/share/datasets/fashion-mnist"))) {
  TempDir dir;
  experiments::RunOptions options;
  options.quiet = true;
  options.out_dir = dir / "q";
  const auto result = experiments::run_experiment(experiments::load_config(std::string(ORCHESTRA_SOURCE_DIR) + "/configs/quickstart.yaml"), options);
  const auto find = [&](const std::string& label) -> const experiments::PolicyOutcome& {
    for (const auto& o : result.outcomes)
      if (o.label == label) return o;
    FAIL("no policy " << label);
    throw;
  };
  const auto& dsgd = find("dsgd");
  const auto& local = find("local-sgd");
  REQUIRE(dsgd.time_to_target_s);
  REQUIRE(local.time_to_target_s);
  CHECK(*local.time_to_target_s < *dsgd.time_to_target_s);
  for (const auto& o : result.outcomes) {
    CAPTURE(o.label);
    CHECK(o.final_accuracy > 0.80);
  }
}

TEST_CASE("one speedup rule: run, its summaries and compare all measure against dsgd, wherever it is listed") {
  TempDir dir;
  std::string config = kTiny;
  const std::string listed = "  - dsgd\n  - {name: local-sgd, H: 3}\n";
  config.replace(config.find(listed), listed.size(), "  - {name: local-sgd, H: 3}\n  - dsgd\n");
  experiments::RunOptions options;
  options.quiet = true;
  options.out_dir = dir / "run";
  const auto result = experiments::run_experiment(experiments::parse_config(config, "tiny.yaml"), options);
  REQUIRE(result.outcomes.size() == 4);
  CHECK(result.outcomes[0].label == "local-sgd");
  // The first policy's summary was rewritten once dsgd had run.
  for (const char* label : {"local-sgd", "dsgd", "mllsgd", "osa"}) {
    CAPTURE(label);
    CHECK(nlohmann::json::parse(read_text(dir / (std::string("run/") + label + "/summary.json")))["speedup_reference"] == "dsgd");
  }
  const std::string table = read_text(dir / "run/comparison.md");
  CHECK(table.find("| speedup vs dsgd |") != std::string::npos);
  // `orchestra compare` on the same folder prints the same table.
  const auto compared = testing::run_command(binary() + " compare " + (dir / "run") + " --out " + (dir / "cmp"));
  REQUIRE(compared.exit_code == 0);
  CHECK(read_text(dir / "cmp/compare.md") == table);
}
