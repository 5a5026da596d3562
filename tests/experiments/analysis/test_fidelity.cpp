// The simulator's fidelity table (analysis/fidelity.hpp): a real run against its simulation, by
// hand-made folders whose errors can be worked out by hand.
#include <doctest/doctest.h>

#include <filesystem>

#include "common/errors.hpp"
#include "experiments/analysis/fidelity.hpp"
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

TEST_CASE("fidelity: a simulation or repeat of another experiment is refused, not compared") {
  testing::TempDir dir;
  write_policy(dir / "real", "dsgd", {10, 20}, "15", true);
  write_policy(dir / "sim", "dsgd", {11, 20}, "16.5", false);
  // What the runs record: the cluster differs (calibrated), what is trained must not.
  const auto record = [&](const std::string& folder, const std::string& mode, double target) {
    testing::write_text(dir / (folder + "/dsgd/config.json"),
                        R"({"name": ")" + folder + R"(", "cluster": {"mode": ")" + mode + R"("}, "data": {"dataset": "fashion-mnist"},
                            "model": {"arch": "mlp"}, "training": {"target_accuracy": )" + std::to_string(target) +
                            R"(}, "policy": {"name": "dsgd", "label": "dsgd"}})");
  };
  record("real", "real", 0.8);
  record("sim", "simulated", 0.8);
  CHECK_NOTHROW(compare_fidelity(read_results({dir / "real"}).front(), read_results({dir / "sim"}).front()));
  record("sim", "simulated", 0.85);
  CHECK_THROWS_WITH_AS(compare_fidelity(read_results({dir / "real"}).front(), read_results({dir / "sim"}).front()),
                       doctest::Contains("not a run of the experiment of"), common::DataError);
  const auto out = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (dir / "real") + " --sim " + (dir / "sim"));
  CHECK(out.exit_code == 2);
  CHECK(out.output.find("/sim/dsgd: not a run of the experiment of ") != std::string::npos);
  CHECK(out.output.find("its config.json differs in training.target_accuracy (0.8, now 0.85)") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "real/fidelity.md"));
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

TEST_CASE("fidelity: several real runs, the simulation against their mean, pairs the real runs order differently are in doubt") {
  testing::TempDir dir;
  // Three real runs. dsgd and lbb swap places from run to run (10 vs 9.8, 10 vs 10.4, 10 vs 9.9 s
  // epochs); osa is the fastest in every run.
  write_policy(dir / "r1", "dsgd", {10, 20}, "15", true);
  write_policy(dir / "r1", "lbb", {9.8, 19.6}, "14", true);
  write_policy(dir / "r1", "osa", {5, 10}, "null", true);
  write_policy(dir / "r2", "dsgd", {10, 20}, "16", true);
  write_policy(dir / "r2", "lbb", {10.4, 20.8}, "17", true);
  write_policy(dir / "r2", "osa", {6, 12}, "8", true);
  write_policy(dir / "r3", "dsgd", {10, 20}, "14", true);
  write_policy(dir / "r3", "lbb", {9.9, 19.8}, "15", true);
  write_policy(dir / "r3", "osa", {7, 14}, "null", true);
  // The simulation: dsgd 11 s epochs (+10% on the mean of 10), lbb faster than dsgd, osa 6.6 s.
  write_policy(dir / "sim", "dsgd", {11, 22}, "16.5", false);
  write_policy(dir / "sim", "lbb", {10, 20}, "15", false);
  write_policy(dir / "sim", "osa", {6.6, 13.2}, "9", false);
  std::vector<RunResults> reals;
  for (const char* r : {"r1", "r2", "r3"}) reals.push_back(read_results({dir / r}).front());
  const auto sim = read_results({dir / "sim"});
  const FidelityReport r = compare_fidelity(reals, sim.front());
  REQUIRE(r.rows.size() == 3);
  CHECK(r.real_runs == 3);
  CHECK(r.rows[0].real_epoch_s == std::vector<double>{10, 10});
  CHECK(r.rows[0].mean_abs_error == doctest::Approx(0.10));
  CHECK(r.rows[2].mean_real_epoch_s == doctest::Approx(6.0));  // osa: the mean of 5, 6 and 7
  CHECK(r.rows[2].mean_abs_error == doctest::Approx(0.10));
  CHECK(*r.rows[0].real_time_to_target_s == doctest::Approx(15.0));
  CHECK(*r.rows[2].real_time_to_target_s == doctest::Approx(8.0));  // the mean of the runs that reached it
  // Epoch time: dsgd/lbb in doubt (r1 and r3 have lbb faster, r2 dsgd); osa below both everywhere.
  CHECK(r.epoch_pairs_in_doubt == std::vector<std::string>{"dsgd/lbb"});
  CHECK(r.epoch_pairs_reversed.empty());
  CHECK(r.epoch_ranking_agrees);
  // Time to target: osa missed in r1 and r3 (last there) but was first in r2: in doubt with both;
  // dsgd/lbb: lbb first in r1, dsgd in r2 and r3: in doubt too.
  CHECK(r.target_pairs_in_doubt == std::vector<std::string>{"dsgd/lbb", "dsgd/osa", "lbb/osa"});
  CHECK(r.target_ranking_agrees);
  const std::string table = fidelity_markdown(r);
  CHECK(table.find("| policy | real epoch (s, mean of 3 runs) |") != std::string::npos);
  CHECK(table.find("ranking by epoch time: same on every pair the real runs order alike; they order dsgd/lbb differently") != std::string::npos);

  // A pair every real run orders alike and the simulation reverses is a DIFFERENT ranking.
  write_policy(dir / "sim2", "dsgd", {10, 20}, "15", false);
  write_policy(dir / "sim2", "lbb", {10, 20}, "15", false);
  write_policy(dir / "sim2", "osa", {12, 24}, "9", false);  // slower than dsgd: every real run has osa faster
  const FidelityReport bad = compare_fidelity(reals, read_results({dir / "sim2"}).front());
  CHECK(bad.epoch_pairs_reversed == std::vector<std::string>{"dsgd/osa", "lbb/osa"});
  CHECK_FALSE(bad.epoch_ranking_agrees);
  CHECK(fidelity_markdown(bad).find("ranking by epoch time: DIFFERENT: dsgd/osa, lbb/osa reversed") != std::string::npos);

  // The command: orchestra compare R1 R2 R3 --sim SIM writes R1/fidelity.md.
  const auto out = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (dir / "r1") + " " + (dir / "r2") + " " + (dir / "r3") + " --sim " +
                                        (dir / "sim"));
  CHECK(out.exit_code == 0);
  CHECK(out.output.find("mean of 3 runs") != std::string::npos);
  CHECK(std::filesystem::exists(dir / "r1/fidelity.md"));
  const auto two = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (dir / "r1") + " " + (dir / "r2") + " --repeat " + (dir / "r3"));
  CHECK(two.exit_code != 0);
  CHECK(two.output.find("give one REAL_DIR") != std::string::npos);
}
