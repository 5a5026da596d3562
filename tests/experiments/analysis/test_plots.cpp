// The figures: each type rendered by gnuplot from a small results directory, checked as a real PNG
// (its signature and IHDR) and SVG (an XML document whose series carry the expected names).
#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <vector>
#include <string>

#include "common/csv_table.hpp"
#include "common/errors.hpp"
#include "experiments/analysis/gnuplot.hpp"
#include "experiments/analysis/plot_scripts.hpp"
#include "experiments/analysis/plots.hpp"
#include "experiments/results/results_reader.hpp"
#include "experiments/results/round_series.hpp"
#include "results_fixture.hpp"
#include "test_helpers.hpp"

using namespace experiments;

namespace {

// PNG: the 8-byte signature, then the IHDR chunk with a non-zero width and height.
void check_png(const std::string& path) {
  const std::string bytes = testing::read_text(path);
  REQUIRE(bytes.size() > 33);
  CHECK(bytes.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0);
  CHECK(bytes.compare(12, 4, "IHDR") == 0);
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  CHECK((byte(16) | byte(17) | byte(18) | byte(19)) != 0);  // width
  CHECK((byte(20) | byte(21) | byte(22) | byte(23)) != 0);  // height
}

// SVG: an XML declaration, one <svg> root closed at the end, and a <title> per series (gnuplot's
// svg terminal titles each plotted series' group with its key entry).
void check_svg(const std::string& path, const std::vector<std::string>& series, const std::string& title) {
  std::string text = testing::read_text(path);
  REQUIRE_FALSE(text.empty());
  CHECK(text.rfind("<?xml", 0) == 0);
  CHECK(text.find("<svg") != std::string::npos);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  CHECK(text.size() >= 6);
  CHECK(text.compare(text.size() - 6, 6, "</svg>") == 0);
  for (const auto& s : series) CHECK_MESSAGE(text.find("<title>" + s + "</title>") != std::string::npos, "series ", s);
  CHECK_MESSAGE(text.find(title) != std::string::npos, "title ", title);
}

struct Rendered {
  std::string png, svg;
};

Rendered render_both(const Figure& figure, const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string base = dir + "/" + figure.name;
  testing::write_text(base + ".gp", figure.script);
  GnuplotOptions options;
  render_gnuplot(base + ".gp", base + ".png", ImageFormat::Png, options);
  render_gnuplot(base + ".gp", base + ".svg", ImageFormat::Svg, options);
  return {base + ".png", base + ".svg"};
}

}  // namespace

TEST_CASE("plots: test accuracy vs simulated time, one series per policy") {
  if (!testing::gnuplot_or_skip()) return;
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  const auto runs = read_results({tmp / "exp"});
  const Figure f = accuracy_figure(runs[0], "accuracy_vs_time");
  CHECK(f.series == std::vector<std::string>{"dsgd", "lbb", "fixed-t"});
  CHECK(f.script.find("$p1 << EOD\n75 0.7\n150.5 0.8125\nEOD\n") != std::string::npos);  // lbb's evals.csv
  CHECK(f.script.find("set arrow from graph 0, first 0.8 to graph 1, first 0.8") != std::string::npos);  // the target
  const Rendered r = render_both(f, tmp / "plots");
  check_png(r.png);
  check_svg(r.svg, f.series, "Test accuracy vs simulated time: exp");
}

TEST_CASE("plots: per-worker compute time, batch size and SE per round (LBB Fig. 7)") {
  if (!testing::gnuplot_or_skip()) return;
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  const PolicyResults lbb = read_policy_folder(tmp / "exp/lbb");
  const RoundSeries rounds = read_rounds_csv(lbb.rounds_csv);
  REQUIRE(rounds.workers.size() == 2);
  CHECK(rounds.round == std::vector<std::int64_t>{1, 2, 3, 4});
  CHECK(rounds.workers[1].batch_size == std::vector<double>{32, 38, 40, 40});
  CHECK_FALSE(has_barrier(rounds));
  const Figure f = iterations_figure(lbb, rounds, "lbb.iterations", FigureOptions{});
  CHECK(f.series == std::vector<std::string>{"fast", "slow", "straggler effect"});
  CHECK(f.script.find("$w1 << EOD\n1 60 32\n2 55 38\n3 53 40\n4 52 40\nEOD\n") != std::string::npos);
  const Rendered r = render_both(f, tmp / "plots");
  check_png(r.png);
  check_svg(r.svg, f.series, "lbb: compute time, batch size and straggler effect per round");
}

TEST_CASE("plots: long runs are averaged over buckets, many workers capped, and the title says so") {
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  const PolicyResults lbb = read_policy_folder(tmp / "exp/lbb");
  FigureOptions options;
  options.max_points = 2;  // 4 rounds -> buckets of 2
  options.max_workers = 1;
  const Figure f = iterations_figure(lbb, read_rounds_csv(lbb.rounds_csv), "lbb.iterations", options);
  // fast: compute (40+45)/2 = 42.5, batch (96+90)/2 = 93 at round 1; (47+48)/2 = 47.5, 88 at round 3.
  CHECK(f.script.find("$w0 << EOD\n1 42.5 93\n3 47.5 88\nEOD\n") != std::string::npos);
  CHECK(f.script.find("$w1") == std::string::npos);
  CHECK(f.script.find("compute time (ms) (mean of 2 rounds)") != std::string::npos);
  CHECK(f.title.find("(first 1 of 2 workers)") != std::string::npos);
}

TEST_CASE("plots: Orchestra's barrier T and tau_n per epoch") {
  if (!testing::gnuplot_or_skip()) return;
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  const PolicyResults fixed = read_policy_folder(tmp / "exp/fixed-t");
  const RoundSeries rounds = read_rounds_csv(fixed.rounds_csv);
  REQUIRE(has_barrier(rounds));
  const Figure f = barrier_figure(fixed, rounds, "fixed-t.barrier", FigureOptions{});
  // Epoch 1: T 120 ms, tau 4 (fast) and 2 (slow); epoch 2: T 150 ms, tau 5 and 2.
  CHECK(f.script.find("$epochs << EOD\n1 120 4 2\n2 150 5 2\nEOD\n") != std::string::npos);
  CHECK(f.series == std::vector<std::string>{"T", "tau fast", "tau slow"});
  const Rendered r = render_both(f, tmp / "plots");
  check_png(r.png);
  check_svg(r.svg, f.series, "fixed-t: barrier T and local steps tau_n per epoch");
}

TEST_CASE("plots: the A3C training curve from train.csv") {
  if (!testing::gnuplot_or_skip()) return;
  testing::TempDir tmp;
  // The parameter server's header (agents/parameter_server.cpp); an empty cell is a window
  // without an episode that reached the target.
  testing::write_text(tmp / "train.csv",
                      "update,episodes,mean_reward,mean_time_to_target_ms,reached_share,dropped\n"
                      "10,4,-0.5,,0,0\n20,8,0.25,280000,0.5,1\n30,12,0.5,250000,1,1\n");
  const Figure f = training_figure(common::read_csv(tmp / "train.csv"), "a3c_training");
  CHECK(f.series == std::vector<std::string>{"mean_reward", "mean_time_to_target_ms", "reached_share"});  // not the counters
  // Against episodes (not updates: an update of an agent with K environments is K rollouts).
  CHECK(f.script.find("$train << EOD\n4 -0.5 NaN 0\n8 0.25 280000 0.5\n12 0.5 250000 1\nEOD\n") != std::string::npos);
  CHECK(f.script.find("set xlabel 'episodes'") != std::string::npos);
  const Rendered r = render_both(f, tmp / "plots");
  check_png(r.png);
  check_svg(r.svg, f.series, "A3C training");
}

TEST_CASE("plots: the timeline, boxes of compute, idle and communication per worker from each policy's first round") {
  if (!testing::gnuplot_or_skip()) return;
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  const auto runs = read_results({tmp / "exp"});
  std::vector<RoundSeries> rounds;
  for (const auto& p : runs[0].policies) rounds.push_back(read_rounds_csv(p.rounds_csv));
  std::vector<TimelinePanel> panels;
  for (std::size_t i = 0; i < rounds.size(); ++i) panels.push_back({runs[0].policies[i].label, &rounds[i], i == 0 ? "compute 75%" : ""});
  const Figure f = timeline_figure(panels, "exp", "timeline", FigureOptions{});
  // Window: 3 rounds of fixed-t's (median 155 ms), at most 100 of dsgd's (60 ms), within the
  // shortest run (dsgd, lbb: 240 ms): 0.24 s.
  CHECK(f.title == "Where the time goes: the first 0.24 s of each policy, per worker: exp");
  // dsgd round 1 (0-65 ms): fast computes 40 ms then idles 20 (the top lane, y = 1); slow computes
  // 60 (y = 0); both communicate 5 ms at the end. Boxes: centre, lane, half width, half height (s).
  CHECK(f.script.find("$t0k0 << EOD\n0.02 1 0.02 0.38\n0.03 0 0.03 0.38\n0.0875 1 0.0225 0.38\n") != std::string::npos);
  CHECK(f.script.find("$t0k1 << EOD\n0.05 1 0.01 0.38\n") != std::string::npos);  // slow never idles: no box
  CHECK(f.script.find("$t0k2 << EOD\n0.0625 1 0.0025 0.38\n0.0625 0 0.0025 0.38\n") != std::string::npos);
  CHECK(f.script.find("set title 'dsgd: compute 75%' noenhanced") != std::string::npos);
  CHECK(f.script.find("set ytics ('fast' 1, 'slow' 0) noenhanced") != std::string::npos);
  CHECK(f.script.find("$t2k0") != std::string::npos);  // fixed-t's panel
  CHECK(f.series == std::vector<std::string>{"compute", "idle at the barrier", "communication"});
  const Rendered r = render_both(f, tmp / "plots");
  check_png(r.png);
  check_svg(r.svg, f.series, "Where the time goes");
}

TEST_CASE("plots: make_plots draws every figure a results directory calls for") {
  if (!testing::gnuplot_or_skip()) return;
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  testing::write_text(tmp / "exp/train.csv", "update,mean_reward\n1,0\n2,1\n");
  PlotOptions options;
  options.out_dir = tmp / "exp/plots";
  const PlotReport report = make_plots(read_results({tmp / "exp"}), options);
  std::vector<std::string> names;
  for (const auto& f : report.files) names.push_back(std::filesystem::path(f).filename().string());
  CHECK(names == std::vector<std::string>{"accuracy_vs_time.png", "accuracy_vs_time.svg", "timeline.png", "timeline.svg", "dsgd.iterations.png",
                                          "dsgd.iterations.svg", "lbb.iterations.png", "lbb.iterations.svg",
                                          "fixed-t.iterations.png", "fixed-t.iterations.svg", "fixed-t.barrier.png",
                                          "fixed-t.barrier.svg", "a3c_training.png", "a3c_training.svg"});
  for (const auto& f : report.files) CHECK(std::filesystem::file_size(f) > 0);
  CHECK(std::filesystem::exists(tmp / "exp/plots/fixed-t.barrier.gp"));  // the script stays for restyling
  // Drawn again: its own files are replaced. A user's image of a figure's name is not.
  CHECK_NOTHROW(make_plots(read_results({tmp / "exp"}), options));
  std::filesystem::remove(tmp / "exp/plots/timeline.gp");
  testing::write_text(tmp / "exp/plots/timeline.png", "a user's image");
  CHECK_THROWS_WITH_AS(make_plots(read_results({tmp / "exp"}), options), doctest::Contains("timeline.png: an image orchestra did not draw"),
                       common::UsageError);
  CHECK(testing::read_text(tmp / "exp/plots/timeline.png") == "a user's image");
  testing::write_text(tmp / "exp/plots/timeline.gp", "plot sin(x)\n");  // a user's script of that name
  CHECK_THROWS_WITH_AS(make_plots(read_results({tmp / "exp"}), options), doctest::Contains("is not a figure script of orchestra"),
                       common::UsageError);
  // The same refusals before a long run (run and evaluate --plot), from the folder alone.
  CHECK_THROWS_WITH_AS(check_plots_folder(tmp / "exp/plots"), doctest::Contains("is not a figure script of orchestra"), common::UsageError);
  std::filesystem::remove(tmp / "exp/plots/timeline.gp");
  CHECK_THROWS_WITH_AS(check_plots_folder(tmp / "exp/plots"), doctest::Contains("timeline.png: an image orchestra did not draw"),
                       common::UsageError);
  std::filesystem::remove(tmp / "exp/plots/timeline.png");
  std::filesystem::remove(tmp / "exp/plots/timeline.svg");  // drawn here, but without its script nothing says so
  CHECK_NOTHROW(check_plots_folder(tmp / "exp/plots"));  // only its own figures
  testing::write_text(tmp / "exp/plots/notes.png", "no figure has this name");
  CHECK_NOTHROW(check_plots_folder(tmp / "exp/plots"));
  testing::write_text(tmp / "exp/plots/seed-3.osa.barrier.svg", "a user's image of a figure's name");
  CHECK_THROWS_WITH_AS(check_plots_folder(tmp / "exp/plots"), doctest::Contains("seed-3.osa.barrier.svg: an image orchestra did not draw"),
                       common::UsageError);
  CHECK_NOTHROW(check_plots_folder(tmp / "nowhere"));
}

TEST_CASE("plots: a missing gnuplot is a clear error, before any file is written") {
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  PlotOptions options;
  options.out_dir = tmp / "plots";
  options.gnuplot.program = "/nonexistent/gnuplot";
  CHECK_THROWS_WITH_AS(make_plots(read_results({tmp / "exp"}), options), doctest::Contains("Debian's gnuplot-nox package"), common::PlotError);
  CHECK_FALSE(std::filesystem::exists(tmp / "plots"));
}

TEST_CASE("plots: a gnuplot error is reported with gnuplot's message on one line, and no image is left") {
  if (!testing::gnuplot_or_skip()) return;
  testing::TempDir tmp;
  testing::write_text(tmp / "bad.gp", "plot $nowhere using 1:2\n");
  CHECK_THROWS_WITH_AS(render_gnuplot(tmp / "bad.gp", tmp / "bad.png", ImageFormat::Png, GnuplotOptions{}),
                       doctest::Contains("gnuplot failed (exit 1)"), common::PlotError);
  CHECK_FALSE(std::filesystem::exists(tmp / "bad.png"));
  // One line: gnuplot's own error line, without the script it echoes above it.
  try {
    render_gnuplot(tmp / "bad.gp", tmp / "bad.png", ImageFormat::Png, GnuplotOptions{});
  } catch (const common::PlotError& e) {
    const std::string message = e.what();
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.find("line 1: ") != std::string::npos);
  }
}

TEST_CASE("plots: labels become safe file names and quotes in titles stay gnuplot strings") {
  CHECK(file_name_part("lbb (H=8)/x") == "lbb__H_8__x");
  CHECK(file_name_part("..") == "_..");
  CHECK(gnuplot_quote("it's") == "'it''s'");
}

TEST_CASE("orchestra compare --plot: the table and every figure, PNG and SVG, without gnuplot, one clear line") {
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  const auto missing = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (tmp / "exp") + " --plot --gnuplot /nonexistent/gp");
  CHECK(missing.exit_code != 0);
  CHECK(missing.output.find("gnuplot-nox") != std::string::npos);
  // A machine without gnuplot at all: none on PATH.
  const auto none = testing::run_command("PATH=" + testing::path_without_gnuplot() + " " + ORCHESTRA_BINARY + " compare " + (tmp / "exp") + " --plot");
  CHECK(none.exit_code == 1);
  CHECK(none.output == "orchestra: plot error: gnuplot not found (gnuplot): plots need Debian's gnuplot-nox package "
                       "(scripts/install-deps.sh installs it, or: sudo apt-get install gnuplot-nox)\n");
  CHECK_FALSE(std::filesystem::exists(tmp / "exp/plots"));
  if (!testing::gnuplot_or_skip()) return;
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (tmp / "exp") + " --plot --quiet");
  CHECK(r.exit_code == 0);
  CHECK(r.output.empty());
  check_png(tmp / "exp/plots/accuracy_vs_time.png");
  check_svg(tmp / "exp/plots/accuracy_vs_time.svg", {"dsgd", "lbb", "fixed-t"}, "Test accuracy vs simulated time");
  check_svg(tmp / "exp/plots/fixed-t.barrier.svg", {"T", "tau fast"}, "barrier T");
}

TEST_CASE("plots: an `orchestra train` folder (train.csv, no policies) gives its training curve") {
  if (!testing::gnuplot_or_skip()) return;
  testing::TempDir tmp;
  std::filesystem::create_directories(tmp / "a3c");
  testing::write_text(tmp / "a3c/train.csv", "update,episodes,mean_reward\n1,1,0\n2,2,1\n");
  const auto runs = read_results({tmp / "a3c"});
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].policies.empty());
  PlotOptions options;
  options.out_dir = tmp / "plots";
  const PlotReport report = make_plots(runs, options);
  REQUIRE(report.files.size() == 2);
  check_png(tmp / "plots/a3c_training.png");
  check_svg(tmp / "plots/a3c_training.svg", {"mean_reward"}, "A3C training");
}

TEST_CASE("orchestra compare --plot on an `orchestra train` folder: the curve, and no empty table") {
  if (!testing::gnuplot_or_skip()) return;
  testing::TempDir tmp;
  std::filesystem::create_directories(tmp / "a3c");
  testing::write_text(tmp / "a3c/train.csv", "update,episodes,mean_reward\n1,1,0\n2,2,1\n");
  const auto r = testing::run_command(std::string(ORCHESTRA_BINARY) + " compare " + (tmp / "a3c") + " --plot");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("no policy results to compare") != std::string::npos);
  CHECK(r.output.find("| policy |") == std::string::npos);
  CHECK_FALSE(std::filesystem::exists(tmp / "a3c/compare.md"));
  check_png(tmp / "a3c/plots/a3c_training.png");
}

TEST_CASE("plots: a timing-only run (no accuracy) gets simulated time vs epoch, not an empty accuracy plot") {
  if (!testing::gnuplot_or_skip()) return;
  testing::TempDir tmp;
  testing::write_results(tmp / "exp");
  for (const char* label : {"dsgd", "lbb", "fixed-t"}) {
    const std::string path = tmp / (std::string("exp/") + label + "/summary.json");
    std::string summary = testing::read_text(path);
    summary.insert(1, R"("timing_only": true, )");
    testing::write_text(path, summary);  // the run order is epochs.csv's time (results_fixture.hpp)
  }
  const auto runs = read_results({tmp / "exp"});
  REQUIRE(runs[0].policies.front().timing_only);
  const Figure f = epoch_time_figure(runs[0], "time_vs_epoch");
  CHECK(f.series == std::vector<std::string>{"dsgd", "lbb", "fixed-t"});
  CHECK(f.script.find("0 0\n1 75\n2 150.5\n") != std::string::npos);  // from the origin, epoch by epoch
  PlotOptions options;
  options.out_dir = tmp / "plots";
  make_plots(runs, options);
  check_png(tmp / "plots/time_vs_epoch.png");
  check_svg(tmp / "plots/time_vs_epoch.svg", {"dsgd", "lbb", "fixed-t"}, "Simulated time vs epoch");
  CHECK_FALSE(std::filesystem::exists(tmp / "plots/accuracy_vs_time.png"));
}

TEST_CASE("plots: evaluate's bars over the oracle per cluster, misses named, and T against the oracle's T") {
  using namespace experiments;
  std::vector<ControllerRun> runs;
  const auto add = [&](const std::string& cluster, std::uint64_t seed, const std::string& controller, ControllerRole role,
                       std::optional<double> time, double barrier = 0) {
    ControllerRun r;
    r.cluster = cluster;
    r.seed = seed;
    r.controller = controller;
    r.role = role;
    r.time_to_target_s = time;
    r.run_time_s = time.value_or(50.0);
    r.barrier_ms = barrier;
    runs.push_back(r);
  };
  for (std::uint64_t seed : {1, 2}) {
    add("box", seed, "orchestra-a3c", ControllerRole::Judged, 12.0);
    add("box", seed, "orchestra-lcm", ControllerRole::Judged, seed == 1 ? std::nullopt : std::optional<double>(20.0));
    add("box", seed, "fixed-t-T_ms=100", ControllerRole::Sweep, 10.0, 100);
    add("box", seed, "fixed-t-T_ms=200", ControllerRole::Sweep, 15.0, 200);
  }
  const EvaluationSummary summary = summarize_evaluation(runs);
  const Figure bars = evaluation_figure(summary, "evaluation");
  CHECK(bars.series == std::vector<std::string>{"orchestra-a3c", "orchestra-lcm", "fixed-t-other-seeds"});
  // a3c: 12/10 on both seeds; lcm: 50/10 (a miss, counted at its run time) and 20/10; T = 100 is
  // the best static T on either seed, so the reference is at 1.
  CHECK(bars.script.find("\"box (1 miss)\" 1.2 3.162278 1\n") != std::string::npos);
  CHECK(bars.script.find("\"geometric mean\" 1.2 3.162278 1\n") != std::string::npos);
  CHECK(bars.script.find("set logscale y") != std::string::npos);

  BarrierTrace trace;
  trace.cluster = "box (seed 1)";
  trace.clock_s = {1, 2, 5};
  trace.barrier_ms = {50, 100, 400};
  trace.oracle_barrier_ms = 100;
  trace.oracle_time_s = 10;
  const Figure t = barrier_vs_oracle_figure({trace}, "orchestra-a3c", "barrier_vs_oracle");
  CHECK(t.series == std::vector<std::string>{"box (seed 1)"});
  CHECK(t.script.find("0.1 0.5\n0.2 1\n0.5 4\n") != std::string::npos);  // time / oracle time, T / oracle T
}
