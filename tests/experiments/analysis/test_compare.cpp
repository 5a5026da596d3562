// `orchestra compare`: the results reader, the comparison table (Markdown and CSV) and the command.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/folder_lock.hpp"
#include "experiments/analysis/comparison.hpp"
#include "common/csv_table.hpp"
#include "experiments/results/results_reader.hpp"
#include "results_fixture.hpp"
#include "test_helpers.hpp"

using namespace experiments;

TEST_CASE("compare: speedup over dsgd, mean idle per worker and a missed target, by hand") {
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  const auto runs = read_results({tmp / "exp"});
  REQUIRE(runs.size() == 1);
  REQUIRE(runs[0].policies.size() == 3);
  CHECK(runs[0].name == "exp");
  const auto rows = comparison_rows(runs);
  // 100 s / 50 s = 2; idle (5 + 15) / 2 = 10.
  CHECK(rows[1].label == "lbb");
  REQUIRE(rows[1].speedup.has_value());
  CHECK(*rows[1].speedup == doctest::Approx(2.0));
  CHECK(rows[1].mean_idle_s_per_worker == doctest::Approx(10.0));
  CHECK(rows[0].mean_idle_s_per_worker == doctest::Approx(15.0));
  CHECK_FALSE(rows[2].time_to_target_s.has_value());
  CHECK_FALSE(rows[2].speedup.has_value());
  const std::string md = comparison_markdown(rows);
  CHECK(md.find("| policy | time to 80.0% (s) | speedup vs dsgd | final acc | final loss | mean SE | utilization | idle/worker (s) | epochs | sim time (s) |\n") == 0);
  CHECK(md.find("| dsgd | 100.00 | 1.00x | 0.8125 | 0.5000 | 0.250 | 0.750 | 15.00 | 2 | 150.50 |\n") != std::string::npos);
  CHECK(md.find("| lbb | 50.00 | 2.00x | 0.8125 | 0.5000 | 0.250 | 0.750 | 10.00 | 2 | 150.50 |\n") != std::string::npos);
  CHECK(md.find("| fixed-t | not reached | - | 0.8125 | 0.5000 | 0.250 | 0.750 | 2.00 | 2 | 150.50 |\n") != std::string::npos);
}

TEST_CASE("compare: the table names its clock: sim time, wall time for real runs, and each row's when mixed") {
  experiments::ComparisonRow sim, real;
  sim.run = real.run = "exp";
  sim.label = "dsgd";
  real.label = "lbb";
  sim.reference = real.reference = "dsgd";
  sim.sim_time_s = real.sim_time_s = 2;
  real.clock = env::ClockKind::Wall;
  CHECK(comparison_markdown({sim}).find("| epochs | sim time (s) |\n") != std::string::npos);
  CHECK(comparison_markdown({real}).find("| epochs | wall time (s) |\n") != std::string::npos);
  const std::string mixed = comparison_markdown({sim, real});
  CHECK(mixed.find("| epochs | time (s) |\n") != std::string::npos);
  CHECK(mixed.find("| 2.00 (wall) |\n") != std::string::npos);
  CHECK(mixed.find("| 2.00 (sim) |\n") != std::string::npos);
}

TEST_CASE("compare: the CSV has every column, full precision, and an empty cell for a missing value") {
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  const std::string csv = comparison_csv(comparison_rows(read_results({tmp / "exp"})));
  CHECK(csv ==
        "run,label,policy,target_accuracy,time_to_target_s,speedup,speedup_reference,final_accuracy,final_loss,"
        "mean_straggler_effect,mean_utilization,mean_idle_s_per_worker,epochs,time_s,clock,timing_only\n"
        "exp,dsgd,dsgd,0.8,100,1,dsgd,0.8125,0.5,0.25,0.75,15,2,150.5,sim,0\n"
        "exp,lbb,lbb,0.8,50,2,dsgd,0.8125,0.5,0.25,0.75,10,2,150.5,sim,0\n"
        "exp,fixed-t,fixed-t,0.8,,,dsgd,0.8125,0.5,0.25,0.75,2,2,150.5,sim,0\n");
  // It reads back with the toolkit's own CSV reader, row for row.
  const common::CsvTable t = common::parse_csv(csv, "compare.csv");
  CHECK(t.rows.size() == 3);
  CHECK(t.number(1, t.column("speedup")) == doctest::Approx(2.0));
}

TEST_CASE("compare: policies keep the order they ran in, not the folders' name order") {
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  const auto runs = read_results({tmp / "exp"});
  REQUIRE(runs[0].policies.size() == 3);
  CHECK(runs[0].policies[0].label == "dsgd");
  CHECK(runs[0].policies[1].label == "lbb");
  CHECK(runs[0].policies[2].label == "fixed-t");
}

TEST_CASE("compare: without dsgd the speedup is over the run's first policy") {
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  std::filesystem::remove_all(tmp / "exp/dsgd");
  // lbb (50 s) now comes first; fixed-t never reached the target.
  const auto rows = comparison_rows(read_results({tmp / "exp"}));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].reference == "lbb");
  CHECK(*rows[0].speedup == doctest::Approx(1.0));
  CHECK(comparison_markdown(rows).find("speedup vs lbb") != std::string::npos);
}

TEST_CASE("compare: several runs get a run column, and a folder of experiments reads as several runs") {
  testing::TempDir tmp;
  testing::write_results(tmp / "results/seed1");
  testing::write_results(tmp / "results/seed2");
  const auto from_parent = read_results({tmp / "results"});
  REQUIRE(from_parent.size() == 2);
  const auto from_both = read_results({tmp / "results/seed1", tmp / "results/seed2"});
  REQUIRE(from_both.size() == 2);
  const std::string md = comparison_markdown(comparison_rows(from_both));
  CHECK(md.find("| run | policy |") == 0);
  CHECK(md.find("| seed2 | lbb | 50.00 | 2.00x |") != std::string::npos);
}

TEST_CASE("compare: a directory with no results, or none at all, is a clear error") {
  testing::TempDir tmp;
  std::filesystem::create_directories(tmp / "empty/sub");
  CHECK_THROWS_WITH_AS(read_results({tmp / "empty"}),
                       (tmp / "empty" + ": no results here (expected policy folders holding summary.json, as written by `orchestra run`)").c_str(),
                       common::DataError);
  CHECK_THROWS_WITH_AS(read_results({tmp / "nope"}), (tmp / "nope" + ": no such directory").c_str(), common::DataError);
  CHECK_THROWS_AS(read_results({}), common::DataError);
}

TEST_CASE("compare: a malformed results file names itself") {
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  SUBCASE("summary.json that is not JSON") {
    testing::write_text(tmp / "exp/lbb/summary.json", "{\"label\": ");
    CHECK_THROWS_WITH_AS(read_results({tmp / "exp"}), doctest::Contains((tmp / "exp/lbb/summary.json: not valid JSON").c_str()),
                         common::DataError);
  }
  SUBCASE("a number of the wrong type") {
    testing::write_text(tmp / "exp/lbb/summary.json",
                        R"({"label": "lbb", "target_accuracy": 0.8, "time_to_target_s": null, "epochs": 2, "sim_time_s": 150.5, "final_loss": "low"})");
    CHECK_THROWS_WITH_AS(read_results({tmp / "exp"}), (tmp / "exp/lbb/summary.json" + ": final_loss: expected a number, got \"low\"").c_str(),
                         common::DataError);
  }
  SUBCASE("a utilization above 1, in summary.json or epochs.csv, and an epoch that is no number") {
    auto summary = nlohmann::json::parse(testing::read_text(tmp / "exp/lbb/summary.json"));
    summary["mean_utilization"] = 7.5;
    testing::write_text(tmp / "exp/lbb/summary.json", summary.dump());
    CHECK_THROWS_WITH_AS(read_results({tmp / "exp"}), doctest::Contains("mean_utilization: expected a number >= 0 and <= 1, got 7.5"),
                         common::DataError);
    summary["mean_utilization"] = 0.75;
    testing::write_text(tmp / "exp/lbb/summary.json", summary.dump());
    const std::string header = "epoch,sim_time_s,epoch_time_s,accuracy,loss,train_loss,straggler_effect,utilization,rounds\n";
    testing::write_text(tmp / "exp/lbb/epochs.csv", header + "1,75,75,0.7,0.8,0.9,0.3,7.5,2\n2,150.5,75.5,0.8125,0.5,0.6,0.2,0.8,2\n");
    CHECK_THROWS_WITH_AS(read_results({tmp / "exp"}), doctest::Contains("epochs.csv:2: utilization: 7.500000 is out of range"), common::DataError);
    testing::write_text(tmp / "exp/lbb/epochs.csv", header + "1,75,75,0.7,0.8,0.9,0.3,0.7,2\nnan,150.5,75.5,0.8125,0.5,0.6,0.2,0.8,2\n");
    CHECK_THROWS_WITH_AS(read_results({tmp / "exp"}), doctest::Contains("epochs.csv:3: epoch: nan is out of range"), common::DataError);
  }
  SUBCASE("two folders of one label (a copy keeps its summary.json's label)") {
    std::filesystem::copy(tmp / "exp/lbb", tmp / "exp/lbb-again", std::filesystem::copy_options::recursive);
    CHECK_THROWS_WITH_AS(read_results({tmp / "exp"}), doctest::Contains("two policy folders labelled 'lbb'"), common::DataError);
  }
  SUBCASE("epochs.csv with a short row") {
    testing::write_text(tmp / "exp/dsgd/epochs.csv", "epoch,sim_time_s,accuracy,loss\n1,2,0.5\n");
    CHECK_THROWS_WITH_AS(read_results({tmp / "exp"}), (tmp / "exp/dsgd/epochs.csv" + ":2: expected 4 cells as in the header, got 3").c_str(),
                         common::DataError);
  }
}

TEST_CASE("csv reader: quoted cells, blank lines, NaN, and errors with their line") {
  const common::CsvTable t = common::parse_csv("a,b\n\"x,y\",\"say \"\"hi\"\"\"\n\n\"two\nlines\",nan\n1,2\r\n", "t.csv");
  REQUIRE(t.rows.size() == 3);
  CHECK(t.rows[0][0] == "x,y");
  CHECK(t.rows[0][1] == "say \"hi\"");
  CHECK(t.rows[1][0] == "two\nlines");
  CHECK(std::isnan(t.number(1, 1)));
  CHECK(t.number(2, 1) == 2.0);  // the \r of a Windows line end is not part of the cell
  CHECK(t.lines[2] == 6);
  CHECK_THROWS_WITH_AS(t.number(0, 0), "t.csv:2: a: expected a number, got 'x,y'", common::DataError);
  CHECK_THROWS_WITH_AS(t.column("c"), "t.csv: no column 'c' in the header", common::DataError);
  CHECK_THROWS_WITH_AS(common::parse_csv("", "e.csv"), "e.csv: empty file (expected a CSV header)", common::DataError);
  CHECK_THROWS_WITH_AS(common::parse_csv("a\n\"open\n", "q.csv"), "q.csv:2: unterminated quoted cell", common::DataError);
}

TEST_CASE("orchestra compare: prints the table, writes compare.md and compare.csv") {
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (tmp / "exp") + " --out " + (tmp / "out"));
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("| lbb | 50.00 | 2.00x |") != std::string::npos);
  CHECK(testing::read_text(tmp / "out/compare.md").find("| lbb | 50.00 | 2.00x |") != std::string::npos);
  CHECK(testing::read_text(tmp / "out/compare.csv").find("exp,lbb,lbb,0.8,50,2,dsgd,") != std::string::npos);
  // Its own tables are replaced on a second compare; a user's notes of the same names are kept
  // (report.html too, where gnuplot draws the report's figures).
  const bool html = testing::on_path("gnuplot");
  const std::string flags = html ? " --html" : "";
  CHECK(testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (tmp / "exp") + " --out " + (tmp / "out") + flags).exit_code == 0);
  CHECK(testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (tmp / "exp") + " --out " + (tmp / "out") + flags).exit_code == 0);
  std::vector<std::string> names = {"compare.md", "compare.csv"};
  if (html) names.push_back("report.html");
  for (const std::string& mine : names) {
    CAPTURE(mine);
    std::filesystem::create_directories(tmp / "notes");
    testing::write_text(tmp / "notes" + "/" + mine, "my own notes\n");
    const auto kept = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (tmp / "exp") + " --out " + (tmp / "notes") + flags);
    CHECK(kept.exit_code == 2);
    CHECK(kept.output.find("--out " + (tmp / "notes") + "/" + mine + ": holds a file that is not a") != std::string::npos);
    CHECK(testing::read_text(tmp / "notes" + "/" + mine) == "my own notes\n");
    std::filesystem::remove_all(tmp / "notes");
  }
  // A folder a run is still writing (it holds the lock): refused with its pid, nothing written.
  {
    const common::FolderLock running(tmp / "exp");
    const auto busy = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (tmp / "exp"));
    CHECK(busy.exit_code == 1);
    CHECK(busy.output.find("orchestra: results folder: " + (tmp / "exp") + ": another orchestra run is writing here (pid ") == 0);
    CHECK_FALSE(std::filesystem::exists(tmp / "exp/compare.md"));
  }
  CHECK(testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (tmp / "exp")).exit_code == 0);
  CHECK(std::filesystem::exists(tmp / "exp/compare.md"));
}

TEST_CASE("orchestra compare: bad input exits non-zero with one line, two runs of one name included") {
  testing::TempDir tmp;
  std::filesystem::create_directories(tmp / "empty");
  const auto none = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (tmp / "empty"));
  CHECK(none.exit_code != 0);
  CHECK(none.output == "orchestra: data error: " + (tmp / "empty") +
                           ": no results here (expected policy folders holding summary.json, as written by `orchestra run`)\n");
  const auto no_args = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare");
  CHECK(no_args.exit_code == 2);
  CHECK(no_args.output.find("orchestra compare: needs at least one RESULTS_DIR (try: orchestra compare --help)") != std::string::npos);
  // Two runs of one name would share their rows and figures: the second's written over the first's.
  testing::write_results(tmp / "exp");
  testing::write_results(tmp / "other/exp");
  const auto same_name = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (tmp / "exp") + " " + (tmp / "other/exp") + " --out " + (tmp / "c"));
  CHECK(same_name.exit_code == 2);
  CHECK(same_name.output == "orchestra compare: two runs named 'exp' (" + (tmp / "exp") + " and " + (tmp / "other/exp") +
                                "): their rows and figures would share one name; copy or link one under another name (try: orchestra compare --help)\n");
  const auto twice = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (tmp / "exp") + " " + (tmp / "exp") + " --out " + (tmp / "c"));
  CHECK(twice.exit_code == 2);
  CHECK(twice.output == "orchestra compare: " + (tmp / "exp") + " is given twice (try: orchestra compare --help)\n");
  CHECK_FALSE(std::filesystem::exists(tmp / "c"));
  const auto help = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare --help");
  CHECK(help.exit_code == 0);
  CHECK(help.output.find("example:\n  orchestra run configs/quickstart.yaml") != std::string::npos);
}
