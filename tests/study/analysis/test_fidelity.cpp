// The simulator's fidelity table (analysis/fidelity.hpp): a real run against its simulation, by
// hand-made folders whose errors can be worked out by hand.
#include <doctest/doctest.h>

#include <filesystem>

#include "common/errors.hpp"
#include "study/analysis/fidelity.hpp"
#include "test_helpers.hpp"

using namespace experiments;

namespace {

// One policy folder: epochs ending at `ends` seconds, time to target `ttt` ("null": missed).
void write_policy(const std::string& dir, const std::string& label, const std::vector<double>& ends, const std::string& ttt, bool real) {
  const std::string d = dir + "/" + label;
  std::filesystem::create_directories(d);
  const char* clock = real ? "wall_time_s" : "sim_time_s";
  testing::write_text(d + "/summary.json", std::string(R"({"policy": ")") + label + R"(", "label": ")" + label +
                                               R"(", "target_accuracy": 0.8, "time_to_target_s": )" + ttt +
                                               R"(, "final_accuracy": 0.8, "final_loss": 0.5, "epochs": 2, "rounds": 4, ")" + clock + R"(": )" +
                                               std::to_string(ends.back()) + R"(, "mean_straggler_effect": 0.1, "mean_utilization": 0.5, "idle_s_per_worker": [0, 0]})");
  std::string epochs = std::string("epoch,") + clock + ",epoch_time_s,accuracy,loss,train_loss,straggler_effect,utilization,rounds\n";
  double previous = 0;
  for (std::size_t e = 0; e < ends.size(); ++e) {
    epochs += std::to_string(e + 1) + "," + std::to_string(ends[e]) + "," + std::to_string(ends[e] - previous) + ",0.8,0.5,0.5,0.1,0.5,2\n";
    previous = ends[e];
  }
  testing::write_text(d + "/epochs.csv", epochs);
  testing::write_text(d + "/evals.csv", "round,epoch,sim_time_s,accuracy,loss\n");
}

}  // namespace

TEST_CASE("fidelity: per-epoch relative errors, their mean over policies and epochs, and the rankings") {
  testing::TempDir dir;
  // Real: dsgd epochs 10 s and 10 s; lbb 5 s and 5 s.
  write_policy(dir / "real", "dsgd", {10, 20}, "15", true);
  write_policy(dir / "real", "lbb", {5, 10}, "7", true);
  // Simulated: dsgd 11 s and 9 s (+10%, -10%); lbb 5.5 s and 5 s (+10%, 0%).
  write_policy(dir / "sim", "dsgd", {11, 20}, "16.5", false);
  write_policy(dir / "sim", "lbb", {5.5, 10.5}, "7", false);
  const auto real = read_results({dir / "real"}), sim = read_results({dir / "sim"});
  const FidelityReport r = compare_fidelity(real.front(), sim.front());
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].label == "dsgd");
  CHECK(r.rows[0].mean_abs_error == doctest::Approx(0.10));
  CHECK(r.rows[1].mean_abs_error == doctest::Approx(0.05));
  CHECK(r.rows[1].worst_epoch_error == doctest::Approx(0.10));
  CHECK(r.mean_abs_error == doctest::Approx(0.075));
  CHECK(r.worst_policy_error == doctest::Approx(0.10));
  CHECK(*r.rows[0].time_to_target_error == doctest::Approx(0.10));
  CHECK(r.epoch_ranking_agrees);
  CHECK(r.target_ranking_agrees);
  CHECK(r.real_by_epoch_time == std::vector<std::string>{"lbb", "dsgd"});
  const std::string table = fidelity_markdown(r);
  CHECK(table.find("| dsgd | 10.000 | 10.000 | 10.0% | 10.0% | 15.00 | 16.50 | 10.0% |") != std::string::npos);
  CHECK(table.find("mean absolute error 7.5%") != std::string::npos);
  CHECK(table.find("ranking by epoch time: same") != std::string::npos);
}

TEST_CASE("fidelity: a ranking that changes is reported, a missed target ranks last, and the runs must be real and simulated") {
  testing::TempDir dir;
  write_policy(dir / "real", "dsgd", {10, 20}, "15", true);
  write_policy(dir / "real", "lbb", {8, 16}, "null", true);
  write_policy(dir / "sim", "dsgd", {7, 14}, "12", false);
  write_policy(dir / "sim", "lbb", {8, 16}, "10", false);
  write_policy(dir / "sim", "osa", {8, 16}, "10", false);
  const auto real = read_results({dir / "real"}), sim = read_results({dir / "sim"});
  const FidelityReport r = compare_fidelity(real.front(), sim.front());
  CHECK_FALSE(r.epoch_ranking_agrees);  // real: lbb faster; sim: dsgd faster
  CHECK(r.real_by_time_to_target == std::vector<std::string>{"dsgd", "lbb"});  // lbb missed it
  CHECK(r.sim_by_time_to_target == std::vector<std::string>{"lbb", "dsgd"});
  CHECK_FALSE(r.target_ranking_agrees);
  CHECK(r.unmatched == std::vector<std::string>{"osa"});
  CHECK(fidelity_markdown(r).find("ranking by epoch time: DIFFERENT") != std::string::npos);
  CHECK_THROWS_WITH_AS(compare_fidelity(sim.front(), real.front()), doctest::Contains("not a real run"), common::DataError);

  // The command: orchestra compare REAL --sim SIM prints the table and writes fidelity.md.
  const auto out = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (dir / "real") + " --sim " + (dir / "sim"));
  CHECK(out.exit_code == 0);
  CHECK(out.output.find("ranking by time to target: DIFFERENT") != std::string::npos);
  CHECK(std::filesystem::exists(dir / "real/fidelity.md"));
}

TEST_CASE("fidelity: two real runs of one experiment give the run-to-run floor (compare --repeat)") {
  testing::TempDir dir;
  write_policy(dir / "real", "dsgd", {10, 20}, "15", true);
  write_policy(dir / "real2", "dsgd", {12, 20}, "18", true);  // epochs 12 s and 8 s: +20%, -20%
  write_policy(dir / "sim", "dsgd", {10, 20}, "15", false);
  const auto real = read_results({dir / "real"}), real2 = read_results({dir / "real2"}), sim = read_results({dir / "sim"});
  const FidelityReport r = compare_fidelity(real.front(), real2.front(), FidelityReference::RepeatRun);
  CHECK(r.reference == FidelityReference::RepeatRun);
  CHECK(r.mean_abs_error == doctest::Approx(0.20));
  CHECK(*r.rows[0].time_to_target_error == doctest::Approx(0.20));
  const std::string table = fidelity_markdown(r);
  CHECK(table.find("| policy | real epoch (s) | repeat epoch (s) | epoch difference (mean abs) |") != std::string::npos);
  CHECK(table.find("mean absolute difference 20.0%") != std::string::npos);
  CHECK(table.find("sim") == std::string::npos);
  // The second run must be real for --repeat, and simulated for --sim.
  CHECK_THROWS_WITH_AS(compare_fidelity(real.front(), sim.front(), FidelityReference::RepeatRun), doctest::Contains("--repeat takes a second real run"),
                       common::DataError);
  CHECK_THROWS_WITH_AS(compare_fidelity(real.front(), real2.front()), doctest::Contains("not a simulated run"), common::DataError);

  const auto out = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (dir / "real") + " --repeat " + (dir / "real2") + " --out " + (dir / "o"));
  CHECK(out.exit_code == 0);
  CHECK(out.output.find("mean absolute difference 20.0%") != std::string::npos);
  CHECK(std::filesystem::exists(dir / "o/run_to_run.md"));
  const auto both = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (dir / "real") + " --repeat " + (dir / "real2") + " --sim " + (dir / "sim"));
  CHECK(both.exit_code != 0);
  CHECK(both.output.find("give one of them") != std::string::npos);
}
