// Issue 39, "nothing lost", in the runner: a clock that is not finite stops the run, a resume is
// checked against what it resumes, evaluate's own inputs are named as the flags they came from,
// and `run` refuses a folder of another experiment before any work.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "experiments/runner/real_checkpoint.hpp"
#include "experiments/runner/run_loop.hpp"
#include "test_helpers.hpp"

namespace fs = std::filesystem;

namespace {

// A cluster whose clock overflows after its second round: what coefficients of 1e308 did.
class OverflowingCluster : public env::RoundCluster {
 public:
  env::ClockKind clock_kind() const override { return env::ClockKind::Simulated; }
  env::ClusterView view() override {
    env::ClusterView v;
    v.num_workers = 1;
    v.global_batch = 8;
    v.max_batch = {8};
    return v;
  }
  env::RoundReport run_round(const env::RoundPlan&) override {
    env::RoundReport r;
    r.round = rounds_++;
    r.workers.resize(1);
    clock_ms_ = rounds_ < 2 ? 10.0 * static_cast<double>(rounds_) : std::numeric_limits<double>::infinity();
    r.clock_ms = clock_ms_;
    return r;
  }
  env::EpochReport finish_epoch() override { return {}; }
  env::EvalResult evaluate() override { return {0.5, 1.0}; }
  bool in_epoch() const override { return rounds_ > 0; }
  int epoch() const override { return 0; }
  std::int64_t rounds() const override { return rounds_; }
  double clock_ms() const override { return clock_ms_; }
  double epoch_progress() const override { return 0; }

 private:
  std::int64_t rounds_ = 0;
  double clock_ms_ = 0;
};

class StillPolicy : public env::BarrierPolicy {
 public:
  void start(const env::ClusterView&) override {}
  env::RoundPlan plan(const env::PlanContext&) override { return {}; }
};

}  // namespace

TEST_CASE("the run loop refuses to go on once the clock is not finite") {
  experiments::ExperimentConfig config;
  config.training.timing_only = true;
  config.write_rounds = false;
  config.cluster.workers.resize(1);
  experiments::PolicyConfig entry;
  entry.label = "dsgd";
  OverflowingCluster cluster;
  StillPolicy policy;
  experiments::Progress progress(experiments::Progress::Style::Quiet, stderr);
  CHECK_THROWS_WITH_AS(experiments::run_policy(config, entry, policy, cluster, progress),
                       doctest::Contains("dsgd: round 2: the clock is inf ms, not a finite time: the run stops here"), common::NumericError);
}

TEST_CASE("--resume: a checkpoint records its config, another config is refused naming the keys, an old checkpoint too") {
  testing::TempDir tmp;
  const std::string out = tmp / "real";
  nlohmann::json config = {{"name", "real"}, {"seed", 7}, {"file", "real.yaml"}, {"model", {{"hidden", {32}}}},
                           {"training", {{"lr", 0.05}, {"epochs", 2}}}, {"runtime", {{"threads", 1}}}, {"policy", {{"name", "dsgd"}}},
                           {"real", {{"timeout_s", 120}}}};
  experiments::RunCheckpoint checkpoint;
  checkpoint.outcome.label = "dsgd";
  checkpoint.outcome.kind = "dsgd";
  experiments::save_checkpoint(out, checkpoint, nullptr, config);
  CHECK_NOTHROW(experiments::check_resume(out, "dsgd", config));
  CHECK_NOTHROW(experiments::check_resume(out, "lbb", config));  // no checkpoint of lbb: a fresh start
  // Where it was read from, the launch's timeout and the threads do not change what it computes.
  nlohmann::json same = config;
  same["file"] = "moved/real.yaml";
  same["real"]["timeout_s"] = 30;
  same["runtime"]["threads"] = 2;
  CHECK_NOTHROW(experiments::check_resume(out, "dsgd", same));
  nlohmann::json model = config;
  model["model"]["hidden"] = {16};
  CHECK_THROWS_WITH_AS(experiments::check_resume(out, "dsgd", model),
                       doctest::Contains("checkpoints/dsgd.json: --resume: policy dsgd ran with another config than this one: model.hidden ([32], now [16])"),
                       common::ConfigError);
  nlohmann::json budget = config;
  budget["training"]["epochs"] = 3;
  budget["training"]["lr"] = 0.1;
  budget["policy"]["H"] = 4;
  CHECK_THROWS_WITH_AS(experiments::check_resume(out, "dsgd", budget),
                       doctest::Contains("policy.H (absent, now 4), training.epochs (2, now 3), training.lr (0.05, now 0.1)"), common::ConfigError);
  // A checkpoint of the version before this check recorded no config: it cannot be trusted.
  auto meta = nlohmann::json::parse(testing::read_text(out + "/checkpoints/dsgd.json"));
  meta.erase("config");
  meta["version"] = 1;
  testing::write_text(out + "/checkpoints/dsgd.json", meta.dump());
  CHECK_THROWS_WITH_AS(experiments::check_resume(out, "dsgd", config), doctest::Contains("does not record the config it was written with"),
                       common::ConfigError);
}

TEST_CASE("surrogate calibrate's grids and calibrate's --profile: a value given twice is one usage line") {
  const std::string bin = ORCHESTRA_BINARY;
  auto r = testing::run_command(bin + " surrogate calibrate s.json c.yaml --scales 1,1.2,1");
  CHECK(r.exit_code == 2);
  CHECK(r.output == "orchestra surrogate: --scales: 1 is listed twice (try: orchestra surrogate --help)\n");
  r = testing::run_command(bin + " surrogate calibrate s.json c.yaml --steps-gains 0,0.003,0.0030");
  CHECK(r.exit_code == 2);
  CHECK(r.output == "orchestra surrogate: --steps-gains: 0.0030 is listed twice (try: orchestra surrogate --help)\n");
  // A scale a thousand times the fit's d_0 is no drift at all; 1e308 was an infinity the file
  // cannot hold. A gain per ln(1 + steps) above 1 is more than the scale of accuracy.
  r = testing::run_command(bin + " surrogate calibrate s.json c.yaml --scales 1,1e300");
  CHECK(r.exit_code == 2);
  CHECK(r.output == "orchestra surrogate: --scales: 1e300 is above 1000, the largest this flag takes (try: orchestra surrogate --help)\n");
  r = testing::run_command(bin + " surrogate calibrate s.json c.yaml --steps-gains 0,2");
  CHECK(r.exit_code == 2);
  CHECK(r.output == "orchestra surrogate: --steps-gains: 2 is above 1, the largest this flag takes (try: orchestra surrogate --help)\n");
  r = testing::run_command(bin + " calibrate real --profile fast=a.json --profile fast=b.json");
  CHECK(r.exit_code == 2);
  CHECK(r.output == "orchestra calibrate: --profile: worker fast is given twice (a.json, b.json) (try: orchestra calibrate --help)\n");
}

TEST_CASE("orchestra evaluate: a sweep value twice names the flag, before anything is written") {
  testing::TempDir tmp;
  const std::string bin = ORCHESTRA_BINARY;
  const std::string policy = std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/orchestra-a3c.pt";
  const std::string config = std::string(ORCHESTRA_SOURCE_DIR) + "/configs/quickstart.yaml";
  auto r = testing::run_command(bin + " evaluate " + policy + " " + config + " --sweep-ms 100,100 --out " + (tmp / "eval") + " --quiet");
  CHECK(r.exit_code == 2);
  CHECK(r.output == "orchestra evaluate: --sweep-ms: 100 is listed twice (try: orchestra evaluate --help)\n");
  r = testing::run_command(bin + " evaluate " + policy + " " + config + " --sweep 2 --sweep-ms 100 --out " + (tmp / "eval") + " --quiet");
  CHECK(r.exit_code == 2);
  CHECK(r.output == "orchestra evaluate: --sweep and --sweep-ms: give one (a number of points, or the points themselves) (try: orchestra evaluate --help)\n");
  // A config whose stem is no name would name the cluster's folder.
  fs::copy_file(config, tmp / "..yaml");
  r = testing::run_command(bin + " evaluate " + policy + " " + (tmp / "..yaml") + " --sweep-ms 100 --out " + (tmp / "eval") + " --quiet");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("evaluate names a cluster's folder after its config file, and this one's name, '.', is '.'") != std::string::npos);
  // Nor the name of what evaluate writes beside the clusters (it failed after every run, or put
  // the figures inside the cluster's results).
  for (const char* own : {"plots", "evaluation.md"}) {
    fs::copy_file(config, tmp / (std::string(own) + ".yaml"));
    r = testing::run_command(bin + " evaluate " + policy + " " + (tmp / (std::string(own) + ".yaml")) + " --sweep-ms 100 --out " + (tmp / "eval") + " --quiet");
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("' is the name of what evaluate writes beside them: rename it") != std::string::npos);
  }
  // A user's evaluation.md in --out: refused before any run, kept.
  fs::create_directories(tmp / "notes");
  testing::write_text(tmp / "notes/evaluation.md", "my notes\n");
  r = testing::run_command(bin + " evaluate " + policy + " " + config + " --sweep-ms 100 --out " + (tmp / "notes") + " --quiet");
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.output.find("evaluation.md") != std::string::npos, r.output);
  CHECK(testing::read_text(tmp / "notes/evaluation.md") == "my notes\n");
  CHECK_FALSE(fs::exists(tmp / "notes/quickstart"));
  // --also entries are checked as what they are, not as a line of a generated file.
  r = testing::run_command(bin + " evaluate " + policy + " " + config + " --sweep-ms 100 --also '{name: fixed-t, T_ms: 5, typo: 1}' --out " + (tmp / "eval") + " --quiet");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("orchestra evaluate: --also {name: fixed-t, T_ms: 5, typo: 1}: typo: unknown key") == 0);
  CHECK(r.output.find("evaluate.yaml") == std::string::npos);
  CHECK_FALSE(fs::exists(tmp / "eval"));
}
