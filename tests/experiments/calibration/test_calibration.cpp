// Calibration (experiments/calibration/): from a real run's rounds to a simulated cluster. The
// real run here is synthetic: rounds.csv made from known time models, a known network, a known
// round overhead and +-3% noise, so every fitted number can be checked against its truth.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "common/errors.hpp"
#include "experiments/calibration/calibrate.hpp"
#include "experiments/calibration/calibrated_config.hpp"
#include "env/sim/batch_time_model.hpp"
#include "experiments/results/round_csv.hpp"
#include "test_helpers.hpp"

using namespace experiments::calibration;
using experiments::csv_number;

namespace {

// The truth the synthetic run is made from.
constexpr double kFastA0 = 3.0, kFastA1 = 0.05;  // fast: t(B) = 3 + 0.05 B ms
constexpr double kSlowA0 = 2.0, kSlowA1 = 0.04;  // slow: 2 + 0.04 B before its slowdown
constexpr double kSlowdown = 2.5;                // the real run's perturbation on slow
constexpr double kAlphaMs = 0.4;                 // all-reduce latency per message hop
constexpr double kMessageBytes = 1e5;            // over the default intra-server 80 Gbit/s (1e7 B/ms)
constexpr double kFixedMs = 2.0, kPerStepMs = 0.3, kGapMs = 0.1;
constexpr double kNoise = 0.03;  // uniform +-3% on every measured time

// Deterministic noise: std::mt19937's output is fixed by the standard (its distributions are not).
struct Noise {
  std::mt19937 rng{12345};
  double operator()() { return 1.0 + kNoise * (2.0 * (rng() / 4294967295.0) - 1.0); }
};

struct PolicyShape {
  std::string label;
  // Per round: fast's batch and steps, slow's batch and steps.
  std::vector<std::array<int, 4>> rounds;
};

std::string summary(const std::string& label, double end_s, bool real, std::size_t rounds) {
  nlohmann::json s = {{"policy", label}, {"label", label}, {"target_accuracy", 0.5}, {"time_to_target_s", end_s / 2}, {"final_accuracy", 0.6},
                      {"final_loss", 1.0}, {"epochs", 1}, {"rounds", rounds}, {"mean_straggler_effect", 0.1}, {"mean_utilization", 0.5},
                      {"idle_s_per_worker", {0.0, 0.0}}};
  s[real ? "wall_time_s" : "sim_time_s"] = end_s;
  return s.dump();
}

// A results folder shaped like `orchestra launch`'s, from the truth above.
void write_real_run(const std::string& dir, const std::vector<PolicyShape>& policies, bool real = true) {
  Noise noise;
  for (const auto& p : policies) {
    const std::string d = dir + "/" + p.label;
    std::filesystem::create_directories(d);
    nlohmann::json config = {
        {"name", "synthetic"},
        {"seed", 4},
        {"data", {{"dataset", "synthetic"}, {"synthetic", {{"train", 512}, {"test", 128}, {"channels", 1}, {"side", 8}, {"noise", 1.0}}}}},
        {"model", {{"arch", "mlp"}, {"hidden", {16}}}},
        {"training", {{"global_batch", 256}, {"epochs", 1}, {"target_accuracy", 0.5}}},
        {"cluster",
         {{"mode", real ? "real" : "simulated"},
          {"workers", {{{"name", "fast"}, {"max_batch", 512}, {"server", "server0"}}, {{"name", "slow"}, {"max_batch", 512}, {"server", "server0"}}}},
          {"perturbations", {{{"worker", "slow"}, {"slowdown", kSlowdown}}}}}},
        {"network", nlohmann::json::object()},
        {"runtime", {{"threads", 1}}},
        {"policy", {{"name", p.label == "lbb-like" ? "lbb" : "dsgd"}, {"label", p.label}}}};
    if (real) config["real"] = {{"world_size", 2}, {"backend", "gloo"}};
    testing::write_text(d + "/config.json", config.dump(2));
    std::string csv = experiments::rounds_csv_header();
    double clock = 0;
    for (std::size_t r = 0; r < p.rounds.size(); ++r) {
      const auto [fb, fs, sb, ss] = p.rounds[r];
      const double fast = fs * (kFastA0 + kFastA1 * fb) * noise();
      const double slow = ss * kSlowdown * (kSlowA0 + kSlowA1 * sb) * noise();
      const double comm = (2 * kAlphaMs + kMessageBytes / 1e7) * noise();
      const int slowest_steps = slow >= fast ? ss : fs;
      const double round_ms = std::max(fast, slow) + comm + (kFixedMs + kPerStepMs * slowest_steps) * noise();
      if (r > 0) clock += kGapMs;
      clock += round_ms;
      const auto row = [&](const char* name, int b, int s, double ms) {
        csv += std::to_string(r) + ",0," + name + "," + std::to_string(b) + "," + std::to_string(s) + "," + csv_number(ms) + "," +
               csv_number(std::max(fast, slow) - ms) + "," + csv_number(comm) + "," + csv_number(round_ms) + "," + csv_number(clock) + ",0.1,0\n";
      };
      row("fast", fb, fs, fast);
      row("slow", sb, ss, slow);
    }
    testing::write_text(d + "/rounds.csv", csv);
    testing::write_text(d + "/summary.json", summary(p.label, clock / 1000.0, real, p.rounds.size()));
    testing::write_text(d + "/epochs.csv", std::string("epoch,") + (real ? "wall_time_s" : "sim_time_s") +
                                               ",epoch_time_s,accuracy,loss,train_loss,straggler_effect,utilization,rounds\n1," +
                                               csv_number(clock / 1000.0) + "," + csv_number(clock / 1000.0) + ",0.6,1,1,0.1,0.5,10\n");
    testing::write_text(d + "/evals.csv", "round,epoch,sim_time_s,accuracy,loss\n");
  }
}

// Equal batches (DSGD-like), moving batches (LBB-like) and 4 local steps (Local-SGD-like).
std::vector<PolicyShape> three_policies() {
  PolicyShape dsgd{"dsgd-like", {}}, lbb{"lbb-like", {}}, local{"local-like", {}};
  for (int r = 0; r < 20; ++r) dsgd.rounds.push_back({128, 1, 128, 1});
  for (int r = 0; r < 40; ++r) {
    const int fast = 140 + 3 * r;  // 140 .. 257: the batches LBB moves
    lbb.rounds.push_back({fast, 1, 256 - fast + 40, 1});
  }
  for (int r = 0; r < 20; ++r) local.rounds.push_back({64, 4, 64, 4});
  return {dsgd, lbb, local};
}

experiments::ExperimentConfig config_of(const RealRun& run) {
  return experiments::parse_config(real_config_text(run), run.dir + "/config.json");
}

CalibrateOptions options() {
  CalibrateOptions o;
  o.message_bytes = kMessageBytes;
  return o;
}

}  // namespace

TEST_CASE("the time-model fit recovers a line from noisy points and prefers it to a cubic by BIC") {
  Noise noise;
  std::vector<MeasuredStep> points;
  for (int b = 16; b <= 512; b += 16) points.push_back({double(b), (5.0 + 0.1 * b) * noise(), 1});
  const TimeModelFit fit = fit_time_model(points, 512, "w");
  CHECK(fit.form == TimeModelForm::Linear);
  REQUIRE(fit.coefficients.size() == 2);
  // Stated tolerance: a0 within 1 ms and a1 within 5% for +-3% noise over 32 points.
  CHECK(fit.coefficients[0] == doctest::Approx(5.0).epsilon(0.2));
  CHECK(fit.coefficients[1] == doctest::Approx(0.1).epsilon(0.05));
  CHECK(fit.noise_sigma > 0.005);
  CHECK(fit.noise_sigma < 0.03);
}

TEST_CASE("the time-model fit chooses the cubic when the curve bends (LBB Eq. 1)") {
  Noise noise;
  std::vector<MeasuredStep> points;
  const auto truth = [](double b) { return 4.0 + 0.02 * b + 4e-4 * b * b + 1e-6 * b * b * b; };
  for (int b = 8; b <= 512; b += 8) points.push_back({double(b), truth(b) * (1.0 + 0.2 * (noise() - 1.0)), 1});
  const TimeModelFit fit = fit_time_model(points, 512, "w");
  CHECK(fit.form == TimeModelForm::Cubic);
  REQUIRE(fit.coefficients.size() == 4);
  for (int b : {32, 128, 256, 512}) CHECK(env::BatchTimeModel(fit.coefficients).polynomial(b) == doctest::Approx(truth(b)).epsilon(0.02));
  CHECK(fit.bic_cubic < fit.bic_linear);
}

TEST_CASE("a line whose intercept comes out negative is refitted through the origin") {
  const TimeModelFit fit = fit_time_model({{100, 4.0, 1}, {200, 10.0, 1}, {300, 16.0, 1}}, 512, "w");
  CHECK(fit.through_origin);
  CHECK(fit.coefficients[0] == 0.0);
  CHECK(fit.coefficients[1] == doctest::Approx(7200.0 / 140000.0));  // sum(B t) / sum(B^2)
}

TEST_CASE("a line that falls is fitted flat at the mean (least squares with a slope >= 0)") {
  // configs/real_quick.yaml's fast worker on 2 cores: about 0.2 ms a step at batch 32 and at 64, the
  // warm-up rounds slower. The free line fell; `calibrate` refused the README's example.
  const std::vector<MeasuredStep> points = {{32, 0.25, 1}, {32, 0.21, 1}, {64, 0.20, 1}, {64, 0.19, 1}};
  const TimeModelFit fit = fit_time_model(points, 64, "w");
  CHECK(fit.flat);
  CHECK_FALSE(fit.through_origin);
  REQUIRE(fit.coefficients.size() == 2);
  CHECK(fit.coefficients[0] == doctest::Approx((0.25 + 0.21 + 0.20 + 0.19) / 4));
  CHECK(fit.coefficients[1] == 0.0);
  // The config reader takes it (positive at 1, never falling).
  CHECK(env::given_model_problem(env::BatchTimeModel(fit.coefficients, 64), 64).empty());
  // A rising line is not flattened.
  CHECK_FALSE(fit_time_model({{32, 1.0, 1}, {64, 2.0, 1}}, 64, "w").flat);
  // Nothing measured at all is still an error.
  CHECK_THROWS_AS(fit_time_model({{32, 0.0, 1}, {64, 0.0, 1}}, 64, "w"), common::DataError);
}

TEST_CASE("calibration recovers the time models, the network and the round overhead of a synthetic real run") {
  testing::TempDir dir;
  write_real_run(dir / "real", three_policies());
  const RealRun run = read_real_run(dir / "real");
  REQUIRE(run.policies.size() == 3);
  const auto config = config_of(run);
  const Calibration c = calibrate(run, config, options());
  REQUIRE(c.workers.size() == 2);
  // Stated tolerance for +-3% noise: a0 within 15%, a1 within 5%.
  CHECK(c.workers[0].fit.form == TimeModelForm::Linear);
  CHECK(c.workers[0].fit.coefficients[0] == doctest::Approx(kFastA0).epsilon(0.15));
  CHECK(c.workers[0].fit.coefficients[1] == doctest::Approx(kFastA1).epsilon(0.05));
  // slow's measured times were 2.5x its own: the fit has the perturbation divided out.
  CHECK(c.workers[1].fit.coefficients[0] == doctest::Approx(kSlowA0).epsilon(0.15));
  CHECK(c.workers[1].fit.coefficients[1] == doctest::Approx(kSlowA1).epsilon(0.05));
  CHECK(c.network.kind == NetworkFitKind::AlphaOnly);  // one message size, two ranks
  CHECK(c.network.link.alpha_ms == doctest::Approx(kAlphaMs).epsilon(0.05));
  CHECK(c.overhead.overhead.per_step_ms == doctest::Approx(kPerStepMs).epsilon(0.15));
  CHECK(c.overhead.overhead.fixed_ms == doctest::Approx(kFixedMs + kGapMs).epsilon(0.1));
  CHECK(c.overhead.median_gap_ms == doctest::Approx(kGapMs).epsilon(0.01));
}

TEST_CASE("the calibrated config loads as a simulated cluster with the fitted numbers, and is the same every time") {
  testing::TempDir dir;
  write_real_run(dir / "real", three_policies());
  const RealRun run = read_real_run(dir / "real");
  const auto config = config_of(run);
  const Calibration c = calibrate(run, config, options());
  const std::string yaml = calibrated_config_yaml(c, run);
  CHECK(yaml == calibrated_config_yaml(calibrate(read_real_run(dir / "real"), config, options()), read_real_run(dir / "real")));
  CHECK(yaml.find("# fast: LBB Eq. 1, linear") != std::string::npos);
  CHECK(yaml.find("perturbations divided out") != std::string::npos);
  const auto sim = experiments::parse_config(yaml, dir / "calibrated.yaml");
  CHECK(sim.mode == experiments::ClusterMode::Simulated);
  REQUIRE(sim.cluster.workers.size() == 2);
  CHECK(sim.cluster.workers[1].time_model->coefficients()[1] == doctest::Approx(kSlowA1).epsilon(0.05));
  REQUIRE(sim.cluster.perturbations.size() == 1);  // kept: the fit has it divided out
  CHECK(sim.cluster.perturbations[0].slowdown == kSlowdown);
  CHECK(sim.cluster.overhead.fixed_ms == doctest::Approx(c.overhead.overhead.fixed_ms));
  CHECK(sim.network.intra_server.alpha_ms == doctest::Approx(c.network.link.alpha_ms));
  CHECK(sim.policies.size() == 3);
  CHECK(sim.data.dataset == "synthetic");
  CHECK(sim.training.model.hidden == std::vector<int>{16});
}

TEST_CASE("calibration explains too few batch sizes and points to orchestra profile") {
  testing::TempDir dir;
  PolicyShape dsgd{"dsgd-like", {}};
  for (int r = 0; r < 10; ++r) dsgd.rounds.push_back({128, 1, 128, 1});
  write_real_run(dir / "real", {dsgd});
  const RealRun run = read_real_run(dir / "real");
  const auto config = config_of(run);
  CHECK_THROWS_WITH_AS(calibrate(run, config, options()),
                       doctest::Contains("worker 'fast': measured 10 steps of batch sizes {128}: too few to fit the slope of LBB Eq. 1"),
                       common::DataError);
  CHECK_THROWS_WITH_AS(calibrate(run, config, options()), doctest::Contains("--profile fast=fast.json"), common::DataError);
  // With profiles of both workers it goes through, their models from the profiles.
  CalibrateOptions o = options();
  o.profiles["fast"] = {{32, 4.6, 1}, {64, 6.2, 1}, {128, 9.4, 1}, {256, 15.8, 1}};
  o.profiles["slow"] = {{32, 3.3, 1}, {64, 4.6, 1}, {128, 7.1, 1}, {256, 12.2, 1}};
  const Calibration c = calibrate(run, config, o);
  CHECK(c.workers[0].source == PointSource::Profile);
  CHECK(c.workers[0].fit.coefficients[1] == doctest::Approx(0.05).epsilon(0.02));
  o.profiles["nobody"] = o.profiles["fast"];
  CHECK_THROWS_WITH_AS(calibrate(run, config, o), doctest::Contains("no worker named 'nobody'"), common::DataError);
}

TEST_CASE("calibration refuses a results folder that is not a real run") {
  testing::TempDir dir;
  write_real_run(dir / "sim", three_policies(), false);
  CHECK_THROWS_WITH_AS(read_real_run(dir / "sim"), doctest::Contains("not a real run"), common::DataError);
  std::filesystem::create_directories(dir / "empty");
  CHECK_THROWS_AS(read_real_run(dir / "empty"), common::DataError);
  // The command: one readable line, exit code 2 (bad input).
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " calibrate " + (dir / "sim"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("not a real run") != std::string::npos);
}

TEST_CASE("orchestra calibrate writes a config that orchestra run accepts, the residuals, and replayable traces") {
  testing::TempDir dir;
  write_real_run(dir / "real", three_policies());
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " calibrate " + (dir / "real") + " --out " + (dir / "cal.yaml") +
                                      " --traces " + (dir / "traces"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("worker fast: linear") != std::string::npos);
  CHECK(r.output.find("residual RMS") != std::string::npos);
  const auto sim = experiments::load_config(dir / "cal.yaml");
  CHECK(sim.cluster.workers.size() == 2);
  // A trace written from the run replays its measured steps (perturbations divided out).
  const env::StepTrace trace = env::StepTrace::read(dir / "traces/lbb-like.csv", "fast", {"fast", "slow"});
  CHECK(trace.rows().size() == 40);
  CHECK(trace.rows()[0].batch == 140);
}

// Issue 39: calibrate fitted damaged runs without a word. Each damage is one line naming the file.
TEST_CASE("calibration refuses what it cannot trust: non-finite or negative times, a truncated rounds.csv, another run's config") {
  testing::TempDir dir;
  const auto damaged = [&](const std::string& file, const std::function<std::string(std::string)>& damage, const std::string& expected) {
    std::filesystem::remove_all(dir / "real");
    write_real_run(dir / "real", three_policies());
    const std::string path = dir / ("real/" + file);
    testing::write_text(path, damage(testing::read_text(path)));
    CHECK_THROWS_WITH_AS(read_real_run(dir / "real"), doctest::Contains(expected.c_str()), common::DataError);
  };
  // The third line's compute_ms (the sixth column) replaced.
  const auto third_compute = [](const std::string& value) {
    return [value](std::string text) {
      std::size_t at = 0;
      for (int line = 0; line < 2; ++line) at = text.find('\n', at) + 1;
      for (int comma = 0; comma < 5; ++comma) at = text.find(',', at) + 1;
      return text.replace(at, text.find(',', at) - at, value);
    };
  };
  damaged("dsgd-like/rounds.csv", third_compute("nan"), "dsgd-like/rounds.csv:3: compute_ms: expected a finite number >= 0, got nan");
  damaged("dsgd-like/rounds.csv", third_compute("-4"), "dsgd-like/rounds.csv:3: compute_ms: expected a finite number >= 0, got -4");
  // Counts no round has: a batch of 1e300 was fitted, 1e23 steps failed in the fit without the file.
  const auto third_cell = [](int column, const std::string& value) {
    return [column, value](std::string text) {
      std::size_t at = 0;
      for (int line = 0; line < 2; ++line) at = text.find('\n', at) + 1;
      for (int comma = 0; comma < column; ++comma) at = text.find(',', at) + 1;
      return text.replace(at, text.find(',', at) - at, value);
    };
  };
  damaged("dsgd-like/rounds.csv", third_cell(3, "1e300"), "dsgd-like/rounds.csv:3: batch_size: expected a whole number in [0, 16777216], got 1e300");
  damaged("dsgd-like/rounds.csv", third_cell(4, "99999999999999999999999"), "dsgd-like/rounds.csv:3: local_steps: expected a whole number in [0, ");
  damaged("dsgd-like/rounds.csv", third_cell(4, "1.5"), "dsgd-like/rounds.csv:3: local_steps: expected a whole number");
  // A batch above the worker's max_batch (512 here): no run took it.
  std::filesystem::remove_all(dir / "real");
  write_real_run(dir / "real", three_policies());
  testing::write_text(dir / "real/dsgd-like/rounds.csv", third_cell(3, "600")(testing::read_text(dir / "real/dsgd-like/rounds.csv")));
  const RealRun above = read_real_run(dir / "real");
  CHECK_THROWS_WITH_AS(calibrate(above, config_of(above), options()),
                       doctest::Contains("dsgd-like/rounds.csv: round 0, worker slow: batch_size 600 above its max_batch 512"), common::DataError);
  // Cut at a line boundary: 5 of its 41 lines.
  damaged("dsgd-like/rounds.csv", [](std::string text) {
    std::size_t at = 0;
    for (int line = 0; line < 6; ++line) at = text.find('\n', at) + 1;
    return text.substr(0, at);
  }, "dsgd-like/rounds.csv: 3 rounds, but summary.json says 20: a truncated file is not fitted");
  // A row of one worker missing from a round.
  damaged("dsgd-like/rounds.csv", [](std::string text) {
    const std::size_t first = text.find('\n') + 1;
    return text.erase(first, text.find('\n', first) + 1 - first);
  }, "dsgd-like/rounds.csv: round 0 has no row of worker fast");
  // Another policy's config.json of another experiment (or damaged): not this run's.
  damaged("lbb-like/config.json", [](std::string) { return R"({"real": 1, "data": {"dataset": 5}, "cluster": 5, "policy": {"name": "lbb"}})"; },
          "lbb-like/config.json: not the config of");
  // A policy whose summary.json is gone was passed over: the fit was of the others alone.
  std::filesystem::remove_all(dir / "real");
  write_real_run(dir / "real", three_policies());
  std::filesystem::remove(dir / "real/lbb-like/summary.json");
  CHECK_THROWS_WITH_AS(read_real_run(dir / "real"), doctest::Contains("lbb-like: a policy's results without summary.json"), common::DataError);
}

TEST_CASE("the README's chain on configs/real_quick.yaml: launch, calibrate, run the calibration, compare --sim") {
  // The README's example of how far to trust the simulator; calibrate refused it on 2 cores (the
  // slow worker ran one batch size, the fast one's line fell within the noise).
  testing::TempDir dir;
  const std::string orchestra = ORCHESTRA_BINARY;
  const auto launch = testing::run_command(orchestra + " launch --nproc 2 " + ORCHESTRA_SOURCE_DIR + "/configs/real_quick.yaml --out " +
                                           (dir / "real") + " --quiet --timeout 60");
  REQUIRE_MESSAGE(launch.exit_code == 0, launch.output);
  const auto calibrate = testing::run_command(orchestra + " calibrate " + (dir / "real") + " --out " + (dir / "sim.yaml"));
  REQUIRE_MESSAGE(calibrate.exit_code == 0, calibrate.output);
  const auto run = testing::run_command(orchestra + " run " + (dir / "sim.yaml") + " --out " + (dir / "sim") + " --quiet");
  REQUIRE_MESSAGE(run.exit_code == 0, run.output);
  const auto compare = testing::run_command(orchestra + " compare " + (dir / "real") + " --sim " + (dir / "sim"));
  REQUIRE_MESSAGE(compare.exit_code == 0, compare.output);
  CHECK(compare.output.find("| lbb |") != std::string::npos);
  CHECK(std::filesystem::exists(dir / "real/fidelity.md"));
}
