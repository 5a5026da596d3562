// The surrogate against real training (experiments/surrogate/surrogate_fidelity.hpp): hand-made
// evaluations whose best static T, adjacency and errors are worked out by hand; the calibration of
// its drift scales (surrogate_calibration.hpp) and the calibrated file shipped in pretrained/.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/errors.hpp"
#include "env/surrogate/surrogate_file.hpp"
#include "experiments/surrogate/fidelity_run.hpp"
#include "experiments/surrogate/surrogate_calibration.hpp"
#include "experiments/surrogate/surrogate_fidelity.hpp"
#include "sweep_run.hpp"
#include "test_helpers.hpp"

using experiments::ControllerRun;

using testing::sweep_run;

TEST_CASE("surrogate fidelity: best static T on each side, adjacency and the errors, by hand") {
  // Cluster a: real best 200 ms (8 s), surrogate best 400 ms (7 s): adjacent; at 200 ms the
  // surrogate says 9 s, 12.5% over.
  std::vector<ControllerRun> real = {sweep_run("a", 1, 100, 10), sweep_run("a", 2, 100, 12), sweep_run("a", 1, 200, 8), sweep_run("a", 2, 200, 8),
                                     sweep_run("a", 1, 400, 9), sweep_run("a", 2, 400, 11)};
  std::vector<ControllerRun> surrogate = {sweep_run("a", 1, 100, 11), sweep_run("a", 2, 100, 11), sweep_run("a", 1, 200, 9),
                                          sweep_run("a", 2, 200, 9),  sweep_run("a", 1, 400, 7),  sweep_run("a", 2, 400, 7)};
  // Cluster b: the real 100 ms missed on one seed (counted at its 50 s run time), so 800 ms is
  // its best; the surrogate's best is 100 ms, two points away.
  for (auto* runs : {&real, &surrogate}) {
    const bool is_real = runs == &real;
    runs->push_back(sweep_run("b", 1, 100, is_real ? std::nullopt : std::optional<double>(3), 50));
    runs->push_back(sweep_run("b", 2, 100, 3));
    runs->push_back(sweep_run("b", 1, 200, 6));
    runs->push_back(sweep_run("b", 2, 200, 6));
    runs->push_back(sweep_run("b", 1, 800, 4));
    runs->push_back(sweep_run("b", 2, 800, is_real ? 4 : 4.41));
  }
  ControllerRun lcm;
  lcm.cluster = "a";
  lcm.controller = "orchestra-lcm";
  for (std::uint64_t seed : {1, 2}) {
    lcm.seed = seed;
    lcm.time_to_target_s = 10;
    real.push_back(lcm);
    lcm.time_to_target_s = 12;
    surrogate.push_back(lcm);
  }
  const auto f = experiments::compare_surrogate(real, surrogate);
  REQUIRE(f.clusters.size() == 2);
  const auto& a = f.clusters[0];
  CHECK(a.cluster == "a");
  CHECK(a.sweep[static_cast<std::size_t>(a.real_best)].barrier_ms == 200);
  CHECK(a.sweep[static_cast<std::size_t>(a.surrogate_best)].barrier_ms == 400);
  CHECK(a.best_same_or_adjacent());
  CHECK(a.error_at_real_best() == doctest::Approx(0.125));
  CHECK(a.real_oracle_s() == doctest::Approx(8));
  CHECK(a.surrogate_oracle_s() == doctest::Approx(7));
  CHECK(a.sweep[0].real_s == doctest::Approx(std::sqrt(120.0)));  // geometric mean of 10 and 12
  REQUIRE(a.others.size() == 1);
  CHECK(a.others[0].error() == doctest::Approx(0.2));
  const auto& b = f.clusters[1];
  CHECK(b.sweep[0].real_misses == 1);
  CHECK(b.sweep[static_cast<std::size_t>(b.real_best)].barrier_ms == 800);
  CHECK(b.sweep[static_cast<std::size_t>(b.surrogate_best)].barrier_ms == 100);
  CHECK_FALSE(b.best_same_or_adjacent());
  CHECK(f.best_same_or_adjacent == 1);
  CHECK(b.error_at_real_best() == doctest::Approx(0.05));  // 4 s against the geomean of 4 and 4.41: 4.2 s
  CHECK(f.within_10_percent == 1);                          // b, not a (12.5%)
  // The surrogate's pick in real training: a at 400 ms, sqrt(9 x 11) s over 8 s; b at 100 ms, its
  // real miss at the 50 s run time: sqrt(50 x 3) s over 4 s, the worst. Over both, their geomean;
  // orchestra-lcm ran on a alone: 10 s over 8 s.
  CHECK(a.pick_over_real_best() == doctest::Approx(std::sqrt(99.0) / 8));
  CHECK(b.pick_over_real_best() == doctest::Approx(std::sqrt(150.0) / 4));
  CHECK(f.pick_over_real_best == doctest::Approx(std::sqrt(std::sqrt(99.0) / 8 * std::sqrt(150.0) / 4)));
  CHECK(f.pick_worst == doctest::Approx(std::sqrt(150.0) / 4));
  CHECK(f.pick_worst_cluster == "b");
  CHECK(f.pick_real_misses == 1);
  CHECK(f.pick_real_runs == 4);
  REQUIRE(f.others_over_real_best.size() == 1);
  CHECK(f.others_over_real_best[0].controller == "orchestra-lcm");
  CHECK(f.others_over_real_best[0].geomean == doctest::Approx(1.25));
  CHECK(f.others_over_real_best[0].clusters == 1);
  const std::string md = experiments::surrogate_fidelity_markdown(f);
  CHECK(md.find("| a | 200 | 400 | adjacent |") != std::string::npos);
  CHECK(md.find("**no**") != std::string::npos);
  CHECK(md.find("| 3.062x (1 of 2 missed) |") != std::string::npos);  // b's pick, sqrt(150) / 4, its real miss said
  CHECK(md.find("the static T chosen on the surrogate 1.951x (at most 3.06x, b; 1 of its 4 real runs missed the target); "
                "orchestra-lcm 1.250x (1 of 2 clusters).") != std::string::npos);
  CHECK(experiments::surrogate_fidelity_csv(f).find("a,fixed-t-T_ms=200,200.000,2,8.0000,0,9.0000,0,0.12500,1,0") != std::string::npos);
  CHECK_THROWS_AS(experiments::compare_surrogate(real, {}), common::DataError);
}

TEST_CASE("surrogate fidelity: a config's surrogate variant trains on the surrogate, paths made absolute") {
  testing::TempDir dir;
  testing::write_text(dir / "c.yaml", "name: c\ndata: {dataset: fashion-mnist, path: data}\nruntime: {threads: 1}\n");
  const std::string text = experiments::surrogate_variant(dir / "c.yaml", "s.json");
  CHECK(text.find("training: surrogate") != std::string::npos);
  CHECK(text.find(std::filesystem::absolute("s.json").string()) != std::string::npos);
  CHECK(text.find((dir.path / "data").string()) != std::string::npos);
  CHECK(text.find("threads: 1") != std::string::npos);
  // The user's file's own errors name it (and its line), before any variant is written.
  testing::write_text(dir / "bad.yaml", "name: x\n  bad: [\n");
  CHECK_THROWS_WITH_AS(experiments::surrogate_variant(dir / "bad.yaml", "s.json"), doctest::Contains("bad.yaml:2: not valid YAML"),
                       common::ConfigError);
  testing::write_text(dir / "list.yaml", "- a\n- b\n");
  CHECK_THROWS_WITH_AS(experiments::surrogate_variant(dir / "list.yaml", "s.json"), doctest::Contains("list.yaml: expected a mapping"),
                       common::ConfigError);
  testing::write_text(dir / "scalar.yaml", "name: x\ndata: 5\n");
  CHECK_THROWS_WITH_AS(experiments::surrogate_variant(dir / "scalar.yaml", "s.json"), doctest::Contains("scalar.yaml:2: data: expected a mapping"),
                       common::ConfigError);
  CHECK_THROWS_WITH_AS(experiments::surrogate_variant(dir / "none.yaml", "s.json"), doctest::Contains("none.yaml: no such config file"),
                       common::ConfigError);
}

TEST_CASE("surrogate calibration: both drift scales scaled, misses counted per side, the choice by its rules") {
  env::SurrogateModel model;
  model.progress.drift_scale = 300;
  model.noise.divergence_scale = 400;
  model.progress.drift_exponent = 4;
  const auto scaled = experiments::with_drift_scale(model, 1.5);
  CHECK(scaled.progress.drift_scale == doctest::Approx(450));
  CHECK(scaled.noise.divergence_scale == doctest::Approx(600));
  CHECK(scaled.progress.drift_exponent == 4);
  for (double bad : {0.0, -1.0, std::nan("")}) CHECK_THROWS_AS(experiments::with_drift_scale(model, bad), std::invalid_argument);

  // One cluster, two seeds: at 400 ms the surrogate misses once where real training reached on
  // both seeds; at 800 ms real training misses twice where the surrogate reached on both.
  std::vector<ControllerRun> real = {sweep_run("a", 1, 200, 8), sweep_run("a", 2, 200, 8), sweep_run("a", 1, 400, 9), sweep_run("a", 2, 400, 9),
                                     sweep_run("a", 1, 800, std::nullopt), sweep_run("a", 2, 800, std::nullopt)};
  std::vector<ControllerRun> surrogate = {sweep_run("a", 1, 200, 8), sweep_run("a", 2, 200, 8), sweep_run("a", 1, 400, std::nullopt),
                                          sweep_run("a", 2, 400, 9), sweep_run("a", 1, 800, 12), sweep_run("a", 2, 800, 12)};
  const auto point = experiments::calibration_point(1.3, experiments::compare_surrogate(real, surrogate));
  CHECK(point.scale == 1.3);
  CHECK(point.clusters == 1);
  CHECK(point.best_same_or_adjacent == 1);
  CHECK(point.surrogate_only_misses == 1);
  CHECK(point.real_only_misses == 2);

  using P = experiments::CalibrationPoint;
  const auto p = [](double scale, int same, double error) {
    P x;
    x.scale = scale;
    x.clusters = 16;
    x.best_same_or_adjacent = same;
    x.mean_abs_error_sweep = error;
    return x;
  };
  // More clusters with the best T found beats a lower error; then the lower error; then nearer 1.
  CHECK(experiments::choose_calibration({p(1, 12, 0.10), p(1.2, 14, 0.20), p(1.4, 13, 0.05)}) == 1);
  CHECK(experiments::choose_calibration({p(1, 14, 0.13), p(1.2, 14, 0.09), p(1.3, 14, 0.10)}) == 1);
  CHECK(experiments::choose_calibration({p(1.5, 14, 0.1), p(0.8, 14, 0.1), p(1.1, 14, 0.1)}) == 2);
  CHECK_THROWS_AS(experiments::choose_calibration({}), std::invalid_argument);
  const std::string md = experiments::calibration_markdown({{p(1, 12, 0.1), p(1.2, 14, 0.2)}, 1, model});
  CHECK(md.find("| **1.2** (chosen) | 0 | 14 of 16 | 20.0% |") != std::string::npos);

  // The steps gain: set by with_calibration beside the scale; a tie on everything else keeps the
  // smaller gain (the fit's map as it is).
  const auto both = experiments::with_calibration(model, 1.5, 0.004, 6);
  CHECK(both.progress.drift_scale == doctest::Approx(450));
  CHECK(both.accuracy.steps_gain == 0.004);
  CHECK(both.accuracy.steps_reference == 6);
  CHECK_THROWS_AS(experiments::with_calibration(model, 1.5, std::nan(""), 6), std::invalid_argument);
  CHECK_THROWS_AS(experiments::with_calibration(model, 1.5, 0.004, -1), std::invalid_argument);
  const auto g = [&](double gain, int same, double error) {
    P x = p(1.2, same, error);
    x.steps_gain = gain;
    return x;
  };
  CHECK(experiments::choose_calibration({g(0.006, 14, 0.1), g(0, 14, 0.1), g(0.003, 14, 0.1)}) == 1);
  CHECK(experiments::choose_calibration({g(0, 14, 0.1), g(0.003, 15, 0.2)}) == 1);
}

TEST_CASE("pretrained/surrogate-controller-task-calibrated.json is the shipped fit with its recorded drift scale, nothing else changed") {
  const std::string dir = std::string(ORCHESTRA_SOURCE_DIR) + "/pretrained/";
  const auto fitted = env::read_surrogate(dir + "surrogate-controller-task.json");
  const auto calibrated = env::read_surrogate(dir + "surrogate-controller-task-calibrated.json");
  const auto report = nlohmann::json::parse(testing::read_text(dir + "surrogate-controller-task-calibrated.json"))["fit"]["calibration"];
  const double scale = report["drift_scale"].get<double>();
  CHECK(scale != 1.0);
  CHECK(report["fitted"] == "pretrained/surrogate-controller-task.json");
  bool chosen_in_grid = false;
  for (const auto& point : report["grid"]) chosen_in_grid = chosen_in_grid || point["drift_scale"].get<double>() == scale;
  CHECK(chosen_in_grid);
  auto expected = env::surrogate_to_json(experiments::with_drift_scale(*fitted, scale));
  auto actual = env::surrogate_to_json(*calibrated);
  CHECK(actual == expected);
}
