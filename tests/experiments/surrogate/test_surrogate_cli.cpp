// The surrogate's commands end to end, as a researcher runs them: `orchestra surrogate log` on a
// tiny workload, `orchestra surrogate fit` on its logs, then `orchestra run` of an experiment with
// runtime.training: surrogate, which writes the usual results files, the same for the same seed;
// `orchestra surrogate calibrate` on that surrogate, with its bad inputs; `fidelity` and `pick`.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "common/csv_table.hpp"
#include "env/surrogate/surrogate_file.hpp"
#include "experiments/config/config.hpp"
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

// `surrogate log` then `surrogate fit` of the tiny workload in `dir`: dir/s.json.
void fit_tiny_surrogate(const testing::TempDir& dir) {
  testing::write_text(dir / "task.yaml", kTask);
  testing::write_text(dir / "train.yaml", kTrain);
  const auto log = testing::run_command(kBinary + " surrogate log " + (dir / "train.yaml") + " --episodes 10 --chunk 5 --after-target 0.2 --out " +
                                        (dir / "log") + " --quiet");
  REQUIRE_MESSAGE(log.exit_code == 0, log.output);
  const auto fit = testing::run_command(kBinary + " surrogate fit " + (dir / "log") + " --out " + (dir / "s.json") +
                                        " --draws 2 --iterations 20 --quiet");
  REQUIRE_MESSAGE(fit.exit_code == 0, fit.output);
}

}  // namespace

TEST_CASE("orchestra surrogate log, fit, then run on the surrogate: the usual results files, the same per seed") {
  testing::TempDir dir;
  fit_tiny_surrogate(dir);
  const auto surrogate = env::read_surrogate(dir / "s.json");
  CHECK(surrogate->task.model == "mlp [16]");
  const auto report = nlohmann::json::parse(testing::read_text(dir / "s.json"))["fit"];
  CHECK(report["episodes"] == 10);
  CHECK(report["forms"].contains("progress-noise"));
  CHECK(report["forms"].contains("sample-clock"));
  // --out replaces a surrogate (refit in place), never another file: a round log, a config.
  const std::string refit = kBinary + " surrogate fit " + (dir / "log") + " --draws 2 --iterations 20 --quiet --out ";
  CHECK(testing::run_command(refit + (dir / "s.json")).exit_code == 0);
  for (const char* slip : {"task.yaml", "log"}) {
    CAPTURE(slip);
    const std::string before = std::filesystem::is_directory(dir / slip) ? "" : testing::read_text(dir / slip);
    const auto r = testing::run_command(refit + (dir / slip));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("orchestra surrogate: --out " + (dir / slip) + ": ") == 0);
    if (!before.empty()) CHECK(testing::read_text(dir / slip) == before);
  }
  // A rounds file gone: its episodes were left out of the fit without a word.
  std::filesystem::copy(dir / "log", dir / "log_missing", std::filesystem::copy_options::recursive);
  std::string rounds_file;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "log_missing"))
    if (entry.path().filename().string().rfind("rounds-", 0) == 0) rounds_file = entry.path().string();
  REQUIRE(!rounds_file.empty());
  std::filesystem::remove(rounds_file);
  const auto missing = testing::run_command(kBinary + " surrogate fit " + (dir / "log_missing") + " --out " + (dir / "m.json") + " --quiet");
  CHECK(missing.exit_code == 2);
  CHECK(missing.output.find("rounds in the rounds files, its episodes row says") != std::string::npos);
  CHECK(missing.output.find("(a truncated or missing rounds-*.csv?)") != std::string::npos);
  // A value training cannot log (an accuracy of 7.5) was fitted as if measured.
  std::filesystem::copy(dir / "log", dir / "log_bad", std::filesystem::copy_options::recursive);
  std::filesystem::path first_rounds;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "log_bad"))
    if (entry.path().filename().string().rfind("rounds-", 0) == 0 && (first_rounds.empty() || entry.path() < first_rounds)) first_rounds = entry.path();
  std::string text = testing::read_text(first_rounds.string());
  const std::string header = text.substr(0, text.find('\n'));
  std::size_t column = 0;
  for (std::size_t at = 0; at < header.find("acc_after"); ++at) column += header[at] == ',';
  std::size_t cell = header.size() + 1;  // the first row's cell of that column
  for (std::size_t k = 0; k < column; ++k) cell = text.find(',', cell) + 1;
  text.replace(cell, text.find_first_of(",\n", cell) - cell, "7.5");
  testing::write_text(first_rounds.string(), text);
  const auto bad = testing::run_command(kBinary + " surrogate fit " + (dir / "log_bad") + " --out " + (dir / "b.json") + " --quiet");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find(first_rounds.string() + ":2: acc_after: expected a number in [0, 1], got 7.5") != std::string::npos);
  // The plan's counts too: -5 samples, 1e300 or steps without samples were fitted as measured.
  std::size_t plan_column = 0;
  for (std::size_t at = 0; at < header.find(",plan,") + 1; ++at) plan_column += header[at] == ',';
  REQUIRE(header.find(",plan,") != std::string::npos);
  for (const char* plan : {"-5/2", "1e300/3", "64/0", "0/1", "64/1.5"}) {
    std::string damaged = testing::read_text(dir / "log" / first_rounds.filename());
    std::size_t at = header.size() + 1;
    for (std::size_t k = 0; k < plan_column; ++k) at = damaged.find(',', at) + 1;
    damaged.replace(at, damaged.find_first_of(",\n", at) - at, plan);
    testing::write_text(first_rounds.string(), damaged);
    const auto refused = testing::run_command(kBinary + " surrogate fit " + (dir / "log_bad") + " --out " + (dir / "b.json") + " --quiet");
    CAPTURE(plan);
    CHECK(refused.exit_code == 2);
    CHECK(refused.output.find(first_rounds.string() + ":2: plan: '" + plan + "': samples and steps are whole numbers") != std::string::npos);
  }
  // --judge with nothing held out was every error 0 over no episode.
  const auto later = testing::run_command(kBinary + " surrogate log " + (dir / "train.yaml") + " --episodes 2 --first 11 --after-target 0.2 --out " +
                                          (dir / "later") + " --quiet");
  REQUIRE_MESSAGE(later.exit_code == 0, later.output);
  const auto judged = testing::run_command(kBinary + " surrogate fit " + (dir / "later") + " --judge " + (dir / "s.json") + " --holdout-every 1000");
  CHECK(judged.exit_code == 2);
  CHECK(judged.output.find("--holdout-every 1000 holds out none of the 2 logged episodes") != std::string::npos);
  // Judged on the logs it was fitted on, the "held-out" episodes were in its final fit: said on
  // stderr and in the JSON. On logs it never saw, out of sample.
  const auto own = testing::run_command("{ " + kBinary + " surrogate fit " + (dir / "log") + " --judge " + (dir / "s.json") + " --draws 2 2>" +
                                        (dir / "own.err") + "; }");
  REQUIRE_MESSAGE(own.exit_code == 0, own.output);
  CHECK(nlohmann::json::parse(own.output)["out_of_sample"] == false);
  CHECK(testing::read_text(dir / "own.err") == "surrogate fit --judge: " + (dir / "s.json") +
                                                    " was fitted on these logs, every episode included: the held-out figures are in sample\n");
  const auto quiet = testing::run_command("{ " + kBinary + " surrogate fit " + (dir / "log") + " --judge " + (dir / "s.json") +
                                          " --draws 2 --quiet 2>" + (dir / "quiet.err") + "; }");
  REQUIRE_MESSAGE(quiet.exit_code == 0, quiet.output);
  CHECK(nlohmann::json::parse(quiet.output)["out_of_sample"] == false);
  CHECK(testing::read_text(dir / "quiet.err").empty());
  const auto fresh = testing::run_command("{ " + kBinary + " surrogate fit " + (dir / "later") + " --judge " + (dir / "s.json") +
                                          " --holdout-every 2 --draws 2 2>" + (dir / "fresh.err") + "; }");
  REQUIRE_MESSAGE(fresh.exit_code == 0, fresh.output);
  CHECK(nlohmann::json::parse(fresh.output)["out_of_sample"] == true);
  CHECK(testing::read_text(dir / "fresh.err").empty());

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

  // A round log of a training on the surrogate is refused, at the line of its environment: key.
  std::string on_surrogate = kTrain;
  on_surrogate.replace(on_surrogate.find("environment: local-sgd"), 22, "environment: surrogate\nsurrogate: s.json");
  testing::write_text(dir / "train_on_surrogate.yaml", on_surrogate);
  const auto log = testing::run_command(kBinary + " surrogate log " + (dir / "train_on_surrogate.yaml") + " --episodes 1 --out " + (dir / "log2"));
  CHECK(log.exit_code == 2);
  CHECK(log.output == "orchestra: config error: " + (dir / "train_on_surrogate.yaml") +
                          ":2: environment: the round log needs real training (environment: local-sgd)\n");
  CHECK_FALSE(std::filesystem::exists(dir / "log2"));
}

TEST_CASE("orchestra surrogate calibrate: real sweep once, one fidelity per drift scale, the chosen model written with its grid") {
  testing::TempDir dir;
  fit_tiny_surrogate(dir);
  const auto fitted = env::read_surrogate(dir / "s.json");
  const std::string command = kBinary + " surrogate calibrate " + (dir / "s.json") + " " + (dir / "task.yaml") + " --seeds 1 --policy " +
                              ORCHESTRA_SOURCE_DIR + "/pretrained/candidates/genet-s14-3-2000.pt";
  const std::string base = command + " --work " + (dir / "work");
  const auto run = testing::run_command(base + " --scales 1,4 --out " + (dir / "c.json") + " --quiet");
  REQUIRE_MESSAGE(run.exit_code == 0, run.output);
  // The real evaluation ran once, in the first scale's folder; each scale has its own fidelity folder.
  CHECK(std::filesystem::exists(dir / "work/scale-1/real/evaluation.csv"));
  CHECK_FALSE(std::filesystem::exists(dir / "work/scale-4/real"));
  for (const char* scale : {"scale-1", "scale-4"}) CHECK(std::filesystem::exists(dir / (std::string("work/") + scale + "/fidelity.csv")));
  const auto file = nlohmann::json::parse(testing::read_text(dir / "c.json"));
  const auto& calibration = file["fit"]["calibration"];
  REQUIRE(calibration["grid"].size() == 2);
  CHECK(calibration["grid"][1]["drift_scale"] == 4.0);
  CHECK(calibration["grid"][0]["clusters"] == 1);
  CHECK(file["fit"].contains("forms"));  // the fit's own report is kept
  const double chosen = calibration["drift_scale"].get<double>();
  CHECK((chosen == 1.0 || chosen == 4.0));
  const auto calibrated = env::read_surrogate(dir / "c.json");
  CHECK(calibrated->progress.drift_scale == doctest::Approx(fitted->progress.drift_scale * chosen));
  CHECK(calibrated->noise.divergence_scale == doctest::Approx(fitted->noise.divergence_scale * chosen));
  CHECK(calibrated->curve.floor == fitted->curve.floor);
  CHECK(run.output.find("| drift scale |") != std::string::npos);

  // Reusing that real evaluation: the same grid point gives the same figures; a grid of one is
  // that scale applied.
  const auto again = testing::run_command(base + " --scales 4 --real " + (dir / "work/scale-1/real") + " --out " + (dir / "c2.json") + " --quiet");
  REQUIRE_MESSAGE(again.exit_code == 0, again.output);
  const auto second = nlohmann::json::parse(testing::read_text(dir / "c2.json"));
  CHECK(second["fit"]["calibration"]["drift_scale"] == 4.0);
  CHECK(second["fit"]["calibration"]["grid"][0] == calibration["grid"][1]);
  CHECK(env::read_surrogate(dir / "c2.json")->progress.drift_scale == doctest::Approx(fitted->progress.drift_scale * 4));

  // A grid of steps gains crossed with the scales: one folder per point, the chosen gain written.
  const auto gains = testing::run_command(command + " --scales 4 --steps-gains 0,0.02 --steps-reference 5 --real " + (dir / "work/scale-1/real") +
                                          " --work " + (dir / "work-gains") + " --out " + (dir / "c-gains.json") + " --quiet");
  REQUIRE_MESSAGE(gains.exit_code == 0, gains.output);
  CHECK(std::filesystem::exists(dir / "work-gains/scale-4/fidelity.csv"));
  CHECK(std::filesystem::exists(dir / "work-gains/scale-4-steps-gain-0.02/fidelity.csv"));
  const auto gains_file = nlohmann::json::parse(testing::read_text(dir / "c-gains.json"));
  REQUIRE(gains_file["fit"]["calibration"]["grid"].size() == 2);
  CHECK(gains_file["fit"]["calibration"]["grid"][1]["steps_gain"] == 0.02);
  CHECK(gains_file["fit"]["calibration"]["grid"][0] == calibration["grid"][1]);  // gain 0: the scale alone, as before
  const double gain = gains_file["fit"]["calibration"]["steps_gain"].get<double>();
  CHECK(env::read_surrogate(dir / "c-gains.json")->accuracy.steps_gain == gain);
  const auto bad_gains = testing::run_command(base + " --steps-gains 0,-1 --out " + (dir / "c-bad.json"));
  CHECK(bad_gains.exit_code == 2);
  CHECK(bad_gains.output.find("--steps-gains: expected numbers >= 0") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "c-bad.json"));

  // Several real folders, one per set of configs (--real is repeatable, for fidelity too): a
  // second cluster evaluated on its own joins the first.
  std::string other = kTask;
  other.replace(other.find("name: task"), 10, "name: task_b");
  other.replace(other.find("bandwidth_gbps: 1,"), 18, "bandwidth_gbps: 10,");
  testing::write_text(dir / "task_b.yaml", other);
  const std::string shipped = std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/candidates/genet-s14-3-2000.pt";  // the shipped network, LCM's start
  const auto real_b = testing::run_command(kBinary + " evaluate " + shipped + " " + (dir / "task_b.yaml") + " --seeds 1 --quiet --out " + (dir / "real_b"));
  REQUIRE_MESSAGE(real_b.exit_code == 0, real_b.output);
  const auto both = testing::run_command(kBinary + " surrogate calibrate " + (dir / "s.json") + " " + (dir / "task.yaml") + " " + (dir / "task_b.yaml") +
                                         " --seeds 1 --scales 1 --real " + (dir / "work/scale-1/real") + " --real " + (dir / "real_b") + " --policy " + shipped +
                                         " --work " + (dir / "work2") + " --out " + (dir / "c3.json") + " --quiet");
  REQUIRE_MESSAGE(both.exit_code == 0, both.output);
  const auto third = nlohmann::json::parse(testing::read_text(dir / "c3.json"));
  CHECK(third["fit"]["calibration"]["grid"][0]["clusters"] == 2);
  CHECK(third["fit"]["calibration"]["real_runs"].size() == 2);

  // Bad input: one readable line naming what is wrong, non-zero, nothing written.
  const auto zero = testing::run_command(base + " --scales 1,0 --out " + (dir / "bad.json"));
  CHECK(zero.exit_code != 0);
  CHECK(zero.output.find("--scales: expected numbers > 0") != std::string::npos);
  const auto missing = testing::run_command(base + " --real " + (dir / "nowhere") + " --out " + (dir / "bad.json"));
  CHECK(missing.exit_code != 0);
  CHECK(missing.output.find("nowhere: no such folder") != std::string::npos);
  // A real evaluation reused on another workload than the surrogate's runs would have: times to
  // two targets are not a fidelity.
  const auto other_target = testing::run_command(base + " --scales 1 --target 0.4 --real " + (dir / "work/scale-1/real") + " --out " + (dir / "bad.json"));
  CHECK(other_target.exit_code != 0);
  CHECK(other_target.output.find("scale-1/real/task/evaluate.yaml: the real runs went to a target of 0.5 within 2 epochs, the surrogate's of " +
                                 (dir / "task.yaml") + " would go to a target of 0.4 within 2 epochs") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "bad.json"));
  // The surrogate's own runs given as the real ones: every error was 0.
  REQUIRE(std::filesystem::exists(dir / "work/scale-1/surrogate/task/evaluate.yaml"));
  const auto itself = testing::run_command(base + " --scales 1 --real " + (dir / "work/scale-1/surrogate") + " --out " + (dir / "bad.json"));
  CHECK(itself.exit_code == 2);
  CHECK(itself.output.find("scale-1/surrogate/task/evaluate.yaml: these runs trained on the surrogate (runtime.training: surrogate): --real takes "
                           "an evaluation of real training") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "bad.json"));
  // --out the surrogate being calibrated: it was replaced by the calibrated one, the fit lost.
  const std::string before = testing::read_text(dir / "s.json");
  const auto onto_input = testing::run_command(base + " --scales 1 --real " + (dir / "work/scale-1/real") + " --out " + (dir / "s.json"));
  CHECK(onto_input.exit_code == 2);
  CHECK(onto_input.output.find("--out " + (dir / "s.json") + ": is the surrogate being calibrated") != std::string::npos);
  CHECK(testing::read_text(dir / "s.json") == before);
}

TEST_CASE("orchestra surrogate fidelity --epochs --target: real and surrogate runs on the changed workload, and a real evaluation reused on it") {
  testing::TempDir dir;
  fit_tiny_surrogate(dir);
  const std::string shipped = std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/candidates/genet-s14-3-2000.pt";  // the shipped network, LCM's start
  const std::string base = kBinary + " surrogate fidelity " + (dir / "s.json") + " " + (dir / "task.yaml") + " --seeds 1 --policy " + shipped + " --quiet";
  const auto run = testing::run_command(base + " --epochs 1 --target 0.3 --out " + (dir / "f"));
  REQUIRE_MESSAGE(run.exit_code == 0, run.output);
  for (const char* side : {"f/real/task/evaluate.yaml", "f/surrogate/task/evaluate.yaml"}) {
    const auto ran = experiments::load_config(dir / side);
    CHECK_MESSAGE(ran.budget.epochs == 1, side);
    CHECK_MESSAGE(ran.budget.target_accuracy == 0.3, side);
  }
  const auto lcm = nlohmann::json::parse(testing::read_text(dir / "f/real/task/seed-1/orchestra-lcm/summary.json"));
  CHECK(lcm["epochs"].get<double>() <= 1);
  // The same real evaluation reused with the same flags: the same comparison.
  const auto reused = testing::run_command(base + " --epochs 1 --target 0.3 --real " + (dir / "f/real") + " --out " + (dir / "g"));
  REQUIRE_MESSAGE(reused.exit_code == 0, reused.output);
  CHECK(testing::read_text(dir / "g/fidelity.csv") == testing::read_text(dir / "f/fidelity.csv"));
  CHECK(reused.output.find("warning") == std::string::npos);
  // Asked for a seed the reused evaluation has not: compared on the others, and said so.
  const auto fewer = testing::run_command(kBinary + " surrogate fidelity " + (dir / "s.json") + " " + (dir / "task.yaml") + " --seeds 1,2 --policy " +
                                          shipped + " --quiet --epochs 1 --target 0.3 --real " + (dir / "f/real") + " --out " + (dir / "g2"));
  REQUIRE_MESSAGE(fewer.exit_code == 0, fewer.output);
  CHECK(fewer.output.find("surrogate fidelity: warning: the real runs have no seed 2: compared on seeds 1 only\n") != std::string::npos);
  CHECK(testing::read_text(dir / "g2/fidelity.csv") == testing::read_text(dir / "f/fidelity.csv"));
  // ... and without them, refused: the config's own workload is not what ran.
  const auto refused = testing::run_command(base + " --real " + (dir / "f/real") + " --out " + (dir / "h"));
  CHECK(refused.exit_code != 0);
  CHECK(refused.output.find("the real runs went to a target of 0.3 within 1 epoch") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "h/fidelity.csv"));
  // --out a file: libstdc++'s "filesystem error: cannot create directories", exit 1; now one line, exit 2.
  testing::write_text(dir / "notes.txt", "a user's notes");
  for (const char* command : {" surrogate fidelity ", " surrogate pick "}) {
    const auto onto_file = testing::run_command(kBinary + command + (dir / "s.json") + " " + (dir / "task.yaml") + " --seeds 1 --policy " + shipped +
                                                " --quiet --out " + (dir / "notes.txt"));
    CAPTURE(command);
    CHECK(onto_file.exit_code == 2);
    CHECK(onto_file.output.find("--out " + (dir / "notes.txt") + ": is a file, not a folder") != std::string::npos);
  }
  CHECK(testing::read_text(dir / "notes.txt") == "a user's notes");
  // A CONFIG that does not load is named as the user wrote it (it was the copy's file and line),
  // and nothing is left behind.
  testing::write_text(dir / "bad.yaml", "name: bad\npolicies: [dsgd]\n");
  const auto bad_config = testing::run_command(kBinary + " surrogate pick " + (dir / "s.json") + " " + (dir / "bad.yaml") + " --seeds 1 --policy " +
                                               shipped + " --quiet --out " + (dir / "q"));
  CHECK(bad_config.exit_code == 2);
  CHECK(bad_config.output.rfind("orchestra: config error: " + (dir / "bad.yaml") + ":", 0) == 0);
  CHECK_FALSE(std::filesystem::exists(dir / "q"));

  // `surrogate pick` on the same flags: the surrogate side alone, and the T fidelity called the
  // surrogate's best; a second run writes the same file.
  const std::string pick = kBinary + " surrogate pick " + (dir / "s.json") + " " + (dir / "task.yaml") + " --seeds 1 --policy " + shipped +
                           " --epochs 1 --target 0.3 --quiet --out ";
  const auto picked = testing::run_command(pick + (dir / "p"));
  REQUIRE_MESSAGE(picked.exit_code == 0, picked.output);
  CHECK_FALSE(std::filesystem::exists(dir / "p/real"));
  const auto fidelity_best = testing::csv_column(dir / "f/fidelity.csv", "surrogate_best");
  const auto fidelity_t = testing::csv_column(dir / "f/fidelity.csv", "barrier_ms");
  double best_t = -1;
  for (std::size_t k = 0; k < fidelity_best.size(); ++k)
    if (fidelity_best[k] == 1) best_t = fidelity_t[k];
  REQUIRE(best_t > 0);
  CHECK(testing::csv_column(dir / "p/pick.csv", "barrier_ms") == std::vector<double>{best_t});
  CHECK(picked.output.find("| task | " + std::to_string(static_cast<long>(std::lround(best_t))) + " |") != std::string::npos);
  const auto again = testing::run_command(pick + (dir / "p2"));
  REQUIRE_MESSAGE(again.exit_code == 0, again.output);
  CHECK(testing::read_text(dir / "p2/pick.csv") == testing::read_text(dir / "p/pick.csv"));
  // Into p again on other seeds: its surrogate/ holds the first pick's evaluation, kept; the
  // refusal's --overwrite (evaluate's) is pick's too, and replaces it.
  const std::string seed_2 = kBinary + " surrogate pick " + (dir / "s.json") + " " + (dir / "task.yaml") + " --seeds 2 --policy " + shipped +
                             " --epochs 1 --target 0.3 --quiet --out " + (dir / "p");
  const auto refused_pick = testing::run_command(seed_2);
  CHECK(refused_pick.exit_code == 2);
  CHECK(refused_pick.output.find("--overwrite") != std::string::npos);
  CHECK(testing::read_text(dir / "p/pick.csv") == testing::read_text(dir / "p2/pick.csv"));
  const auto replaced = testing::run_command(seed_2 + " --overwrite");
  REQUIRE_MESSAGE(replaced.exit_code == 0, replaced.output);
  CHECK(std::filesystem::exists(dir / "p/surrogate/task/seed-2"));
  CHECK_FALSE(std::filesystem::exists(dir / "p/surrogate/task/seed-1"));
  // On its default seeds (101-110) beside the shipped policy, which plans its start on the default
  // planning seeds too: each run's own seed gives way (README's example of the command).
  const auto defaults = testing::run_command(kBinary + " surrogate pick " + (dir / "s.json") + " " + (dir / "task.yaml") + " --policy " +
                                             shipped + " --epochs 1 --target 0.3 --quiet --out " + (dir / "p-defaults"));
  REQUIRE_MESSAGE(defaults.exit_code == 0, defaults.output);
  CHECK(std::filesystem::exists(dir / "p-defaults/pick.csv"));
  // Judged on a real evaluation of seed 1: planned on seed 1 it would have seen that seed's draws,
  // refused before anything runs; planned on seed 2, its real time on seed 1 is the sweep's run at
  // the picked T, over the oracle of that seed.
  const auto same_seed = testing::run_command(pick + (dir / "p3") + " --real " + (dir / "f/real"));
  CHECK(same_seed.exit_code == 2);
  CHECK(same_seed.output.find("planning seed 1 is one the real evaluation ran") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "p3/pick.csv"));
  const std::string judge = kBinary + " surrogate pick " + (dir / "s.json") + " " + (dir / "task.yaml") + " --seeds 2 --policy " + shipped +
                            " --epochs 1 --target 0.3 --quiet --real " + (dir / "f/real") + " --out " + (dir / "p4");
  const auto judged = testing::run_command(judge);
  REQUIRE_MESSAGE(judged.exit_code == 0, judged.output);
  const double t4 = testing::csv_column(dir / "p4/pick.csv", "barrier_ms").at(0);
  const auto ran = nlohmann::json::parse(testing::read_text(dir / ("f/real/task/seed-1/fixed-t-T_ms=" + std::to_string(std::lround(t4))) + "/summary.json"));
  const double oracle = testing::csv_column(dir / "f/real/evaluation.csv", "oracle_time_s").at(0);
  const double expected = (ran["reached_target"].get<bool>() ? ran["time_to_target_s"] : ran["sim_time_s"]).get<double>() / oracle;
  const common::CsvTable overall = common::read_csv(dir / "p4/judged.csv");
  std::optional<std::size_t> row;
  for (std::size_t r = 0; r < overall.rows.size(); ++r)
    if (overall.rows[r][overall.column("controller")] == "surrogate-pick") row = r;
  REQUIRE(row);
  CHECK(overall.number(*row, overall.column("ratio")) == doctest::Approx(expected).epsilon(1e-6));
  CHECK(overall.number(*row, overall.column("ratio")) >= 1.0 - 1e-9);  // a sweep point, never better than the seed's best
  CHECK(testing::read_text(dir / "p4/judged.md").find("seeds 2") != std::string::npos);
  CHECK(judged.output.find("surrogate-pick") != std::string::npos);

  // The planned-t policy plans in memory what that pick wrote (planned on seed 2, with the shipped
  // policy's decision interval as the pick's sweep had it) and runs it: on seed 1 the very run of
  // the real sweep at that T.
  std::string workload = kTask;
  workload = workload.substr(0, workload.find("policies:"));
  workload.replace(workload.find("epochs: 2, target_accuracy: 0.5"), 31, "epochs: 1, target_accuracy: 0.3");
  const auto write_planned = [&](const std::string& name, const std::string& extra) {
    testing::write_text(dir / name, workload + "policies:\n  - {name: planned-t, surrogate: s.json, planning_seeds: [2], interval: rounds, interval_rounds: 1" +
                                        extra + "}\n");
  };
  write_planned("planned.yaml", "");
  const auto planned = testing::run_command(kBinary + " run " + (dir / "planned.yaml") + " --seed 1 --quiet --out " + (dir / "q"));
  REQUIRE_MESSAGE(planned.exit_code == 0, planned.output);
  const auto plan = nlohmann::json::parse(testing::read_text(dir / "q/planned-t/config.json"))["policy"]["plan"];
  CHECK(plan["T_ms"].get<double>() == t4);
  CHECK(plan["seeds"] == 1);
  CHECK(plan["surrogate_time_s"].get<double>() == doctest::Approx(testing::csv_column(dir / "p4/pick.csv", "surrogate_s").at(0)).epsilon(1e-3));
  CHECK(plan["by"] == (plan["misses"] == 0 ? "surrogate" : "orchestra-lcm"));
  const auto planned_run = nlohmann::json::parse(testing::read_text(dir / "q/planned-t/summary.json"));
  CHECK(planned_run["reached_target"] == ran["reached_target"]);
  if (ran["reached_target"].get<bool>()) CHECK(planned_run["time_to_target_s"].get<double>() == ran["time_to_target_s"].get<double>());
  // The shipped network started at that plan (start: planned) instead of LCM's T*: its first
  // round's T is the plan moved once (factor 4), where the pretrained network's first move is made.
  testing::write_text(dir / "a3c_planned.yaml", workload + "policies:\n  - {name: orchestra-a3c, start: planned, surrogate: s.json, planning_seeds: [2]}\n");
  const auto a3c_planned = testing::run_command(kBinary + " run " + (dir / "a3c_planned.yaml") + " --seed 1 --quiet --out " + (dir / "a"));
  REQUIRE_MESSAGE(a3c_planned.exit_code == 0, a3c_planned.output);
  const auto a3c_plan = nlohmann::json::parse(testing::read_text(dir / "a/orchestra-a3c/config.json"))["policy"]["plan"];
  CHECK(a3c_plan["T_ms"].get<double>() == t4);
  const double a3c_first = testing::csv_column(dir / "a/orchestra-a3c/rounds.csv", "barrier_ms").at(0);
  INFO("first T ", a3c_first, " ms, planned ", t4, " ms");
  CHECK((a3c_first == doctest::Approx(t4) || a3c_first == doctest::Approx(t4 * 4) || a3c_first == doctest::Approx(t4 / 4)));
  // A planning seed that is the run's own: refused, naming the key, before anything runs.
  const auto own_seed = testing::run_command(kBinary + " run " + (dir / "planned.yaml") + " --seed 2 --quiet --out " + (dir / "q2"));
  CHECK(own_seed.exit_code != 0);
  CHECK(own_seed.output.find("planning_seeds: holds the run's own seed 2") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "q2/planned-t"));
  // A target no T reaches on the surrogate: the plan is a guess, and the run is the registry's
  // orchestra-lcm's, round for round (which options it runs with: test_registry); with fallback:
  // none the most accurate point runs.
  workload.replace(workload.find("target_accuracy: 0.3"), 20, "target_accuracy: 1.0");
  write_planned("guess.yaml", "");
  write_planned("guess_none.yaml", ", fallback: none");
  testing::write_text(dir / "guess_lcm.yaml", workload + "policies:\n  - orchestra-lcm\n");
  for (const char* name : {"guess", "guess_none", "guess_lcm"}) {
    const auto guess = testing::run_command(kBinary + " run " + (dir / (std::string(name) + ".yaml")) + " --seed 1 --quiet --out " + (dir / name));
    REQUIRE_MESSAGE(guess.exit_code == 0, guess.output);
  }
  const auto guess_plan = nlohmann::json::parse(testing::read_text(dir / "guess/planned-t/config.json"))["policy"]["plan"];
  CHECK(guess_plan["misses"] == 1);
  CHECK(guess_plan["by"] == "orchestra-lcm");
  for (const char* column : {"barrier_ms", "local_steps", "compute_ms"})
    CHECK_MESSAGE(testing::csv_column(dir / "guess/planned-t/rounds.csv", column) == testing::csv_column(dir / "guess_lcm/orchestra-lcm/rounds.csv", column), column);
  const auto first_barrier = [&](const std::string& rounds) { return testing::csv_column(dir / rounds, "barrier_ms").at(0); };
  const auto none_plan = nlohmann::json::parse(testing::read_text(dir / "guess_none/planned-t/config.json"))["policy"]["plan"];
  CHECK(none_plan["by"] == "surrogate");
  CHECK(first_barrier("guess_none/planned-t/rounds.csv") == none_plan["T_ms"].get<double>());
}
