// Issue 39, "nothing lost": a results folder has one owner and a run replaces only its own
// results; what is read back is checked before it is trusted; a failed write leaves no staging
// folder behind.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "common/errors.hpp"
#include "experiments/results/results_files.hpp"
#include "experiments/results/results_folder.hpp"
#include "experiments/results/results_reader.hpp"
#include "results_fixture.hpp"
#include "test_helpers.hpp"

namespace fs = std::filesystem;
using experiments::FolderPlan;
using experiments::ResultsFolder;

namespace {

// A policy folder as `orchestra run` writes it, recording `config` in config.json.
void write_run_policy(const std::string& dir, const std::string& label, const nlohmann::json& config) {
  testing::write_policy(dir, label, "100", "[1, 2]", testing::rounds_without_barrier());
  nlohmann::json c = config;
  c["policy"] = {{"name", label}};
  testing::write_text(dir + "/" + label + "/config.json", c.dump(2));
}

nlohmann::json config_of(const std::string& name, int seed) {
  return {{"name", name}, {"seed", seed}, {"file", "configs/" + name + ".yaml"}, {"training", {{"lr", 0.05}}}, {"runtime", {{"threads", 1}}}};
}

FolderPlan plan_of(const nlohmann::json& config, std::set<std::string> labels) {
  FolderPlan plan;
  plan.identity = experiments::experiment_identity(config);
  plan.labels = std::move(labels);
  return plan;
}

std::string refusal(const std::string& dir, const FolderPlan& plan, bool overwrite = false) {
  try {
    const ResultsFolder folder(dir, plan, overwrite);
  } catch (const common::FolderError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("experiment identity: the config without the policy, the file it came from, the launch and the threads") {
  nlohmann::json a = config_of("probe", 1);
  a["policy"] = {{"H", 4}};
  a["real"] = {{"timeout_s", 120}};
  nlohmann::json b = a;
  b["file"] = "elsewhere.yaml";
  b["policy"] = {{"H", 8}};
  b["real"]["timeout_s"] = 30;
  b["runtime"]["threads"] = 4;
  CHECK(experiments::experiment_identity(a) == experiments::experiment_identity(b));
  b["seed"] = 9;
  CHECK(experiments::experiment_identity(a) != experiments::experiment_identity(b));
}

TEST_CASE("results folder: the same experiment is rerun in place, another experiment's results are refused, saying what they are") {
  testing::TempDir tmp;
  const std::string dir = tmp / "exp";
  write_run_policy(dir, "dsgd", config_of("probe", 1));
  write_run_policy(dir, "local-sgd", config_of("probe", 1));
  testing::write_text(dir + "/notes.txt", "my notes");
  // The same experiment (another file path and thread count do not make it another): claimed.
  nlohmann::json again = config_of("probe", 1);
  again["file"] = "./probe.yaml";
  again["runtime"]["threads"] = 2;
  CHECK(refusal(dir, plan_of(again, {"dsgd", "local-sgd"})).empty());
  // --seed 9: the folders hold seed 1.
  const std::string seed = refusal(dir, plan_of(config_of("probe", 9), {"dsgd", "local-sgd"}));
  CHECK(seed.find(dir + ": holds other results: dsgd, local-sgd: results of experiment 'probe', seed 1 (this run: seed 9)") == 0);
  CHECK(seed.find("add --overwrite to remove them") != std::string::npos);
  // Same name and seed, another lr: the keys are named.
  nlohmann::json lr = config_of("probe", 1);
  lr["training"]["lr"] = 0.1;
  CHECK(refusal(dir, plan_of(lr, {"dsgd"})).find("with another config (this run: training.lr (0.05, now 0.1))") != std::string::npos);
  // A policy this run does not run would be mixed into the table.
  CHECK(refusal(dir, plan_of(config_of("probe", 1), {"dsgd"})).find("local-sgd: results of a policy this run does not run") != std::string::npos);
  // Another experiment altogether.
  CHECK(refusal(dir, plan_of(config_of("other", 1), {"osa"})).find("results of experiment 'probe', seed 1 (this run: experiment 'other')") !=
        std::string::npos);
  // Nothing was touched by any refusal, and the lock is gone.
  CHECK(fs::exists(dir + "/dsgd/summary.json"));
  CHECK(testing::read_text(dir + "/notes.txt") == "my notes");
  CHECK_FALSE(fs::exists(dir + "/" + common::FolderLock::kFileName));
}

TEST_CASE("results folder: --overwrite removes exactly the other experiment's folders, what is no results is never touched") {
  testing::TempDir tmp;
  const std::string dir = tmp / "exp";
  write_run_policy(dir, "dsgd", config_of("probe", 1));
  write_run_policy(dir + "/seed-3", "dsgd", config_of("probe", 3));  // a multi-seed run's seed
  testing::write_text(dir + "/seed-3.log", "log");
  fs::create_directories(dir + "/mine");
  testing::write_text(dir + "/mine/data.txt", "user data");
  testing::write_text(dir + "/notes.txt", "my notes");
  testing::write_text(tmp / "keep.txt", "above");
  const FolderPlan plan = plan_of(config_of("other", 1), {"osa"});
  CHECK(refusal(dir, plan).find("seed-3, seed-3.log: a seed of a multi-seed run") != std::string::npos);
  { const ResultsFolder folder(dir, plan, true); }
  CHECK_FALSE(fs::exists(dir + "/dsgd"));
  CHECK_FALSE(fs::exists(dir + "/seed-3"));
  CHECK_FALSE(fs::exists(dir + "/seed-3.log"));
  CHECK(testing::read_text(dir + "/mine/data.txt") == "user data");
  CHECK(testing::read_text(dir + "/notes.txt") == "my notes");
  CHECK(testing::read_text(tmp / "keep.txt") == "above");

  // A user's folder (or file) where a policy's results would go is refused even with --overwrite.
  fs::create_directories(dir + "/osa");
  testing::write_text(dir + "/osa/mine.txt", "mine");
  const std::string blocked = refusal(dir, plan, true);
  CHECK(blocked.find("osa: a folder that holds no policy results, where policy osa's results go") != std::string::npos);
  CHECK(blocked.find("move it, or choose another folder") != std::string::npos);
  CHECK(testing::read_text(dir + "/osa/mine.txt") == "mine");
  testing::write_text(dir + "/lbb", "a file");
  CHECK(refusal(dir, plan_of(config_of("other", 1), {"lbb"}), true).find("lbb: a file where policy lbb's results folder goes") != std::string::npos);
}

TEST_CASE("results folder: sub-folders of a plan (seeds, clusters), a training's files, files of the command's own kind") {
  testing::TempDir tmp;
  const std::string dir = tmp / "seeds";
  write_run_policy(dir + "/seed-1", "dsgd", config_of("probe", 1));
  write_run_policy(dir + "/seed-2", "dsgd", config_of("probe", 2));
  FolderPlan seeds;
  seeds.folders["seed-1"] = plan_of(config_of("probe", 1), {"dsgd"});
  seeds.folders["seed-2"] = plan_of(config_of("probe", 2), {"dsgd"});
  CHECK(refusal(dir, seeds).empty());
  seeds.folders.erase("seed-2");  // --seeds 1 only: seed-2 would be mixed into the summary over seeds
  CHECK(refusal(dir, seeds).find("seed-2: a seed of a multi-seed run") != std::string::npos);
  fs::create_directories(dir + "/cluster");
  testing::write_text(dir + "/cluster/evaluate.yaml", "seeds: [1]\n");
  CHECK(refusal(dir, seeds).find("cluster: an evaluation's cluster") != std::string::npos);

  const std::string train = tmp / "train";
  fs::create_directories(train + "/snapshots");
  testing::write_text(train + "/train.csv", "update\n");
  testing::write_text(train + "/checkpoint.pt", "x");
  FolderPlan fresh;
  fresh.training = FolderPlan::Training::Fresh;
  CHECK(refusal(train, fresh).find("checkpoint.pt, snapshots, train.csv: an A3C training (orchestra train): continue it with --resume") != std::string::npos);
  FolderPlan resume;
  resume.training = FolderPlan::Training::Resume;
  CHECK(refusal(train, resume).empty());
  FolderPlan none;  // `run` into a training's folder leaves its files alone
  CHECK(refusal(train, none).empty());
  // A training stopped before its first checkpoint: --resume would find nothing, so it is not offered.
  fs::remove(train + "/checkpoint.pt");
  const std::string early = refusal(train, fresh);
  CHECK(early.find("snapshots, train.csv: an A3C training stopped before its first checkpoint (nothing to resume)") != std::string::npos);
  CHECK(early.find("--resume") == std::string::npos);

  const std::string drawn = tmp / "drawn";
  fs::create_directories(drawn);
  testing::write_text(drawn + "/drawn-1.yaml", "# A cluster drawn from ...\n");
  testing::write_text(drawn + "/drawn-2.yaml", "name: my own config\n");
  FolderPlan files;
  files.files = {{"drawn-1.yaml", "# A cluster drawn from "}, {"drawn-2.yaml", "# A cluster drawn from "}};
  const std::string mine = refusal(drawn, files, true);
  CHECK(mine.find("drawn-2.yaml: a file this command did not write") != std::string::npos);
  CHECK(mine.find("drawn-1.yaml") == std::string::npos);
}

TEST_CASE("results folder: a second claim while the first holds it is refused at once, naming its pid") {
  testing::TempDir tmp;
  const FolderPlan plan = plan_of(config_of("probe", 1), {"dsgd"});
  const ResultsFolder first(tmp / "exp", plan, false);
  CHECK(refusal(tmp / "exp", plan).find("another orchestra run is writing here (pid " + std::to_string(::getpid()) + ")") != std::string::npos);
}

TEST_CASE("a policy folder is written whole or not at all: a full disk leaves no staging folder behind") {
  testing::TempDir tmp;
  experiments::PolicyOutcome outcome;
  outcome.label = "dsgd";
  outcome.kind = "dsgd";
  outcome.rounds_csv = std::string(1 << 20, 'x');  // more than the file size limit below
  // Writes past RLIMIT_FSIZE fail with EFBIG (SIGXFSZ ignored), as a full disk fails with ENOSPC:
  // the same error path of write_file_atomic, without root or a tiny file system.
  rlimit before{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &before) == 0);
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = before;
  small.rlim_cur = 64 * 1024;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  bool threw = false;
  try {
    experiments::write_policy_folder(tmp / "exp", outcome, nlohmann::json::object(), nlohmann::json::object());
  } catch (const std::exception&) {
    threw = true;
  }
  ::setrlimit(RLIMIT_FSIZE, &before);
  ::signal(SIGXFSZ, old_handler);
  CHECK(threw);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(tmp / "exp")) left.push_back(entry.path().filename().string());
  CHECK(left.empty());

  // A folder under the label's name that holds no results is never removed to make room.
  fs::create_directories(tmp / "exp/dsgd");
  testing::write_text(tmp / "exp/dsgd/mine.txt", "mine");
  outcome.rounds_csv.clear();
  CHECK_THROWS_WITH(experiments::write_policy_folder(tmp / "exp", outcome, nlohmann::json::object(), nlohmann::json::object()),
                    doctest::Contains("holds no policy results: not replaced"));
  CHECK(testing::read_text(tmp / "exp/dsgd/mine.txt") == "mine");
}

TEST_CASE("results read back are checked: a label that is a path, values out of range, a truncated epochs.csv") {
  testing::TempDir tmp;
  const std::string dir = tmp / "exp";
  const auto refused = [&](const std::string& file, const std::string& from, const std::string& to, const std::string& expected) {
    testing::write_results(dir);
    std::string text = testing::read_text(dir + "/dsgd/" + file);
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    testing::write_text(dir + "/dsgd/" + file, text.replace(at, from.size(), to));
    CHECK_THROWS_WITH_AS(experiments::read_results({dir}), doctest::Contains(expected.c_str()), common::DataError);
    fs::remove_all(dir);
  };
  refused("summary.json", "\"label\": \"dsgd\"", "\"label\": \"../../x\"", "dsgd/summary.json: label: '../../x' holds '/'");
  refused("summary.json", "\"final_accuracy\": 0.8125", "\"final_accuracy\": 7.5", "dsgd/summary.json: final_accuracy: expected a number >= 0 and <= 1, got 7.5");
  refused("summary.json", "\"time_to_target_s\": 100", "\"time_to_target_s\": -1", "dsgd/summary.json: time_to_target_s: expected a number >= 0, got -1");
  refused("summary.json", "\"time_to_target_s\": 100", "\"time_to_target_s\": 1000", "time_to_target_s: 1000.000000 is after the run's end");
  refused("summary.json", "\"epochs\": 2", "\"epochs\": 2.5", "dsgd/summary.json: epochs: expected a whole number >= 0");
  refused("epochs.csv", "\n2,150.5,75.5,0.8125,0.5,0.6,0.2,0.8,2\n", "\n", "dsgd/epochs.csv: 1 epochs, but summary.json says 2");
  refused("epochs.csv", "1,75,75,0.7,", "1,75,75,1.7,", "dsgd/epochs.csv:2: accuracy: 1.700000 is out of range");
  refused("evals.csv", "2,1,75,0.7,0.8", "2,1,-75,0.7,0.8", "dsgd/evals.csv:2: sim_time_s: -75.000000 is out of range");
  refused("summary.json", "\"idle_s_per_worker\": [10, 20]", "\"idle_s_per_worker\": [10, 1e308]", "dsgd/summary.json: idle_s_per_worker: 1e+308 is out of range");
  refused("summary.json", "\"idle_s_per_worker\": [10, 20]", "\"idle_s_per_worker\": [10, \"x\"]", "idle_s_per_worker: expected seconds or null, got \"x\"");
  refused("summary.json", "\"idle_s_per_worker\": [10, 20]", "\"idle_s_per_worker\": \"10\"", "idle_s_per_worker: expected a list of seconds");
  refused("summary.json", "\"label\": \"dsgd\"", "\"label\": 5", "dsgd/summary.json: label: expected a string, got 5");
  refused("summary.json", "\"time_to_target_s\": 100,", "", "dsgd/summary.json: no time_to_target_s: not a run's summary");
  refused("summary.json", "\"sim_time_s\": 150.5,", "", "dsgd/summary.json: no sim_time_s or wall_time_s: not a run's summary");
  // null is a worker whose idle time was not measured (NaN as JSON writes it)
  testing::write_results(dir);
  std::string text = testing::read_text(dir + "/dsgd/summary.json");
  testing::write_text(dir + "/dsgd/summary.json", text.replace(text.find("[10, 20]"), 8, "[10, null]"));
  const auto runs = experiments::read_results({dir});
  const auto dsgd = std::find_if(runs[0].policies.begin(), runs[0].policies.end(), [](const auto& p) { return p.label == "dsgd"; });
  REQUIRE(dsgd != runs[0].policies.end());
  CHECK(std::isnan(dsgd->idle_s_per_worker[1]));
}

TEST_CASE("a folder of experiments: what compare does not read is said, and a folder of only those names them") {
  testing::TempDir tmp;
  testing::write_results(tmp / "all/plain");
  testing::write_results(tmp / "all/seeds/seed-1");
  testing::write_results(tmp / "all/seeds/seed-2");
  testing::write_results(tmp / "all/eval/cluster/seed-1");
  testing::write_text(tmp / "all/eval/cluster/evaluate.yaml", "seeds: [1]\n");
  std::vector<experiments::SkippedFolder> skipped;
  const auto runs = experiments::read_results({tmp / "all"}, &skipped);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].name == "plain");
  REQUIRE(skipped.size() == 2);
  CHECK(skipped[0].dir == tmp / "all/eval");
  CHECK(skipped[0].reason.find("an evaluation") == 0);
  CHECK(skipped[1].dir == tmp / "all/seeds");
  CHECK(skipped[1].reason.find("a multi-seed run") == 0);
  fs::remove_all(tmp / "all/plain");
  CHECK_THROWS_WITH_AS(experiments::read_results({tmp / "all"}), doctest::Contains("no experiment's policy folders here, only"), common::DataError);
  // Policy folders with a seed's folder beside them: the seed is not mixed into the run.
  testing::write_results(tmp / "mixed");
  testing::write_results(tmp / "mixed/seed-1");
  skipped.clear();
  CHECK(experiments::read_results({tmp / "mixed"}, &skipped).front().policies.size() == 3);
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].dir == tmp / "mixed/seed-1");
}
