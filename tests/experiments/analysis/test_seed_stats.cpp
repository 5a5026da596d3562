// The summary over seeds, with values worked out by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"

#include "experiments/analysis/seed_stats.hpp"
#include "results_fixture.hpp"

using namespace experiments;

TEST_CASE("seeds: Student's t at 97.5% and a sample's mean, sd and 95% CI half-width") {
  CHECK(t_critical_95(1) == doctest::Approx(12.706));
  CHECK(t_critical_95(4) == doctest::Approx(2.776));
  CHECK(t_critical_95(30) == doctest::Approx(2.042));
  // Above the table: the exact quantiles (R's qt(0.975, df)) within 1e-4, where the values at 40,
  // 60 and 120 stood for every df up to them (df 31 read 2.021).
  CHECK(t_critical_95(31) == doctest::Approx(2.039513).epsilon(5e-5));
  CHECK(t_critical_95(35) == doctest::Approx(2.030108).epsilon(5e-5));
  CHECK(t_critical_95(47) == doctest::Approx(2.011741).epsilon(5e-5));
  CHECK(t_critical_95(119) == doctest::Approx(1.980100).epsilon(5e-5));
  CHECK(t_critical_95(1000) == doctest::Approx(1.962339).epsilon(5e-5));
  const Spread s = spread_of({10, 12, 14});
  CHECK(s.n == 3);
  CHECK(s.mean == doctest::Approx(12));
  CHECK(s.sd == doctest::Approx(2));
  CHECK(s.ci95 == doctest::Approx(4.303 * 2 / std::sqrt(3.0)));
  const Spread one = spread_of({5});
  CHECK(one.mean == 5);
  CHECK(std::isnan(one.ci95));
  CHECK(std::isnan(spread_of({}).mean));
}

TEST_CASE("seeds: per-policy summary with the paired speedup, by hand from two seeds") {
  testing::TempDir tmp;
  // seed 1: dsgd 100 s, lbb 50 s (2x); seed 2: dsgd 120 s, lbb 40 s (3x); fixed-t never reaches it.
  testing::write_results(tmp / "run/seed-1");
  testing::write_results(tmp / "run/seed-2");
  testing::write_policy(tmp / "run/seed-2", "dsgd", "120", "[10, 20]", "round,epoch,worker\n");
  testing::write_policy(tmp / "run/seed-2", "lbb", "40", "[5, 15]", "round,epoch,worker\n");
  const auto runs = read_results({tmp / "run"});
  REQUIRE(is_seed_folder(runs));
  const auto rows = seed_rows(runs);
  REQUIRE(rows.size() == 3);
  const SeedRow& dsgd = rows[0];
  const SeedRow& lbb = rows[1];
  const SeedRow& fixed = rows[2];
  CHECK(dsgd.label == "dsgd");
  CHECK(dsgd.reference == "dsgd");
  CHECK(dsgd.time_to_target_s.mean == doctest::Approx(110));
  CHECK(dsgd.time_to_target_s.sd == doctest::Approx(std::sqrt(200.0)));
  CHECK(dsgd.speedup.mean == doctest::Approx(1.0));
  CHECK(lbb.reached == 2);
  CHECK(lbb.time_to_target_s.mean == doctest::Approx(45));
  CHECK(lbb.time_to_target_s.ci95 == doctest::Approx(12.706 * std::sqrt(50.0) / std::sqrt(2.0)));
  // Paired: (100/50 + 120/40) / 2 = 2.5, not 110/45 = 2.44 (the ratio of the means).
  CHECK(lbb.speedup.mean == doctest::Approx(2.5));
  CHECK(lbb.speedup.sd == doctest::Approx(std::sqrt(0.5)));
  CHECK(fixed.reached == 0);
  CHECK(fixed.seeds == 2);
  CHECK(fixed.speedup.n == 0);
  CHECK(lbb.epoch_time_s.mean == doctest::Approx(150.5 / 2));
  const std::string md = seed_markdown(rows);
  CHECK(md.find("| policy | seeds reached | time to 80.0% (s), mean ± 95% CI | sd | paired speedup vs dsgd |") == 0);
  CHECK(md.find("| lbb | 2/2 | 45.00 ± 63.53 | 7.07 | 2.50x ± 6.35x |") != std::string::npos);
  CHECK(md.find("| fixed-t | 0/2 | - | - | - |") != std::string::npos);
  const std::string csv = seed_csv(rows);
  CHECK(csv.find("lbb,lbb,2,2,0.8,45,7.07106781,63.53,") != std::string::npos);
  // One run, or runs not named seed-<N>, are not a multi-seed folder.
  CHECK_FALSE(is_seed_folder(read_results({tmp / "run/seed-1"})));
}

TEST_CASE("seeds: folders of two experiments are not pooled as seeds of one") {
  testing::TempDir tmp;
  testing::write_results(tmp / "run/seed-1");
  testing::write_results(tmp / "run/seed-2");
  // What `orchestra run` records per policy folder (config.json), reduced to what matters here.
  const auto record = [&](int seed, const std::string& label, double target, int window) {
    nlohmann::json config = {{"name", "probe"}, {"seed", seed}, {"file", "/configs/seed-" + std::to_string(seed) + ".yaml"},
                             {"training", {{"target_accuracy", target}}}, {"runtime", {{"threads", seed}}},
                             {"policy", {{"name", label}, {"label", label}, {"window", window}}}};
    testing::write_text(tmp / ("run/seed-" + std::to_string(seed) + "/" + label + "/config.json"), config.dump(2));
  };
  for (int seed : {1, 2})
    for (const char* label : {"dsgd", "lbb", "fixed-t"}) record(seed, label, 0.8, 10);
  // The seed, the config's path and the threads differ: one experiment.
  CHECK_NOTHROW(check_one_experiment(read_results({tmp / "run"})));

  record(2, "lbb", 0.85, 10);
  const auto runs = read_results({tmp / "run"});
  REQUIRE(is_seed_folder(runs));
  const std::string other_target = "seed-2/lbb: not a seed of the experiment of " + (tmp / "run/seed-1/dsgd") +
                                   ": its config.json differs in training.target_accuracy (0.8, now 0.85)";
  CHECK_THROWS_WITH_AS(check_one_experiment(runs), doctest::Contains(other_target.c_str()), common::DataError);

  record(2, "lbb", 0.8, 5);
  const std::string other_keys = "seed-2/lbb: policy 'lbb' ran with other keys than in " + (tmp / "run/seed-1/lbb") + ": window (10, now 5)";
  CHECK_THROWS_WITH_AS(check_one_experiment(read_results({tmp / "run"})), doctest::Contains(other_keys.c_str()), common::DataError);

  // A policy's own seed that follows the run's (orchestra-random's default) differs as the run's
  // does: one experiment. A seed the config gave must be the same on every seed.
  const auto record_seeded = [&](int run_seed, int policy_seed) {
    nlohmann::json config = {{"name", "probe"}, {"seed", run_seed}, {"training", {{"target_accuracy", 0.8}}}, {"runtime", {{"threads", 1}}},
                             {"policy", {{"name", "orchestra-random"}, {"label", "orchestra-random"}, {"seed", policy_seed}}}};
    testing::write_text(tmp / ("run/seed-" + std::to_string(run_seed) + "/orchestra-random/config.json"), config.dump(2));
  };
  record(2, "lbb", 0.8, 10);
  testing::write_policy(tmp / "run/seed-1", "orchestra-random", "70", "[1, 3]", testing::rounds_with_barrier());
  testing::write_policy(tmp / "run/seed-2", "orchestra-random", "80", "[1, 3]", testing::rounds_with_barrier());
  record_seeded(1, 1);
  record_seeded(2, 2);
  CHECK_NOTHROW(check_one_experiment(read_results({tmp / "run"})));
  record_seeded(1, 7);
  record_seeded(2, 7);
  CHECK_NOTHROW(check_one_experiment(read_results({tmp / "run"})));
  record_seeded(2, 8);
  CHECK_THROWS_WITH_AS(check_one_experiment(read_results({tmp / "run"})), doctest::Contains("seed (7, now 8)"), common::DataError);
  record_seeded(1, 1);
  record_seeded(2, 2);

  // A policy folder without a readable config.json (results written by hand) is not checked.
  std::filesystem::remove(tmp / "run/seed-2/lbb/config.json");
  CHECK_NOTHROW(check_one_experiment(read_results({tmp / "run"})));
}
