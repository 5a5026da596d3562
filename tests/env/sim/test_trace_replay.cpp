// Trace replay (env/sim/step_trace.hpp, perturbation_trace.hpp) and the round overhead that
// calibration fits (env::RoundOverhead): what the simulated clock does with each.
#include <doctest/doctest.h>

#include <cmath>

#include "common/errors.hpp"
#include "env/sim/perturbation_trace.hpp"
#include "env/sim/simulation.hpp"
#include "env/sim/step_trace.hpp"
#include "test_helpers.hpp"

using namespace env;

namespace {

WorkerSpec modelled(const std::string& name, double a0, double a1) {
  WorkerSpec w;
  w.name = name;
  w.time_model = std::make_shared<BatchTimeModel>(std::vector<double>{a0, a1});
  return w;
}

WorkerSpec traced(const std::string& name, const StepTrace& trace) {
  WorkerSpec w;
  w.name = name;
  w.trace = std::make_shared<StepTrace>(trace);
  w.time_model = w.trace->model();
  return w;
}

SimulationSpec spec_of(std::vector<WorkerSpec> workers, std::int64_t samples, int global_batch) {
  SimulationSpec s;
  s.cluster.workers = std::move(workers);
  s.cluster.server_names = {"s0"};
  s.network.intra_server = {0.1, 1000.0};
  s.global_batch = global_batch;
  s.train_samples = samples;
  s.message_bytes = 1000;
  return s;
}

RoundPlan gradient_plan(std::vector<int> batches) {
  RoundPlan p;
  p.aggregation = Aggregation::GradientAllReduce;
  for (int b : batches) p.workers.push_back({b, 1});
  return p;
}

// Irregular times, as measured steps are (no two alike, none a round number).
std::vector<StepTraceRow> measured_rows() {
  return {{0, 8, 13.71}, {20.5, 8, 9.02}, {41.7, 8, 11.38}, {60.2, 8, 25.9}, {95.0, 8, 10.11}, {120.4, 8, 12.07}};
}

}  // namespace

TEST_CASE("trace replay gives each training step the trace's time exactly, in order, then starts over") {
  const StepTrace trace(measured_rows());
  // Two workers, batch 8 each: the traced one takes the recorded times; timing only (no hooks).
  Simulation sim(spec_of({traced("replayed", trace), modelled("model", 1.0, 0.1)}, 16 * 8, 16), 3, nullptr);
  for (std::size_t k = 0; k < 8; ++k) {
    const RoundReport r = sim.run_round(gradient_plan({8, 8}));
    CHECK(r.workers[0].compute_ms == measured_rows()[k % 6].ms);  // exactly, not approximately
  }
}

TEST_CASE("trace replay scales a row to another batch by the trace's fitted line, probes do not use up rows") {
  std::vector<StepTraceRow> rows = {{0, 10, 12}, {10, 20, 22}, {20, 10, 12}, {30, 20, 22}};
  const StepTrace trace(rows);
  // The line through (10, 12) and (20, 22): t(B) = 2 + B.
  CHECK(trace.model()->coefficients()[0] == doctest::Approx(2.0));
  CHECK(trace.model()->coefficients()[1] == doctest::Approx(1.0));
  CHECK(trace.step_ms(0, 30) == doctest::Approx(12.0 * 32.0 / 12.0));
  SimulationSpec s = spec_of({traced("w", trace)}, 1000, 10);
  Simulation sim(s, 1, nullptr);
  const ClusterView view = sim.view();
  CHECK(view.probe_step_ms(0, 40) == doctest::Approx(42.0));  // from the model
  CHECK(sim.run_round(gradient_plan({10})).workers[0].compute_ms == 12.0);  // the first row still
  CHECK(sim.run_round(gradient_plan({20})).workers[0].compute_ms == 22.0);
}

TEST_CASE("a step trace file: worker column, and clear errors for bad traces") {
  testing::TempDir dir;
  const std::set<std::string> names = {"a", "b"};
  testing::write_text(dir / "ok.csv", "worker,clock_ms,batch,ms\na,0,8,10\nb,0,8,30\na,12,8,11\nb,31,8,29\n");
  const StepTrace a = StepTrace::read(dir / "ok.csv", "a", names);
  REQUIRE(a.rows().size() == 2);
  CHECK(a.rows()[1].ms == 11.0);
  CHECK(StepTrace::read(dir / "ok.csv", "b", names).rows()[0].ms == 30.0);

  testing::write_text(dir / "short.csv", "clock_ms,batch,ms\n0,8,10\n");
  CHECK_THROWS_WITH_AS(StepTrace::read(dir / "short.csv", "a", names), doctest::Contains("1 rows: a trace needs at least 2"), common::DataError);
  testing::write_text(dir / "back.csv", "clock_ms,batch,ms\n0,8,10\n20,8,10\n15,8,10\n");
  CHECK_THROWS_WITH_AS(StepTrace::read(dir / "back.csv", "a", names), doctest::Contains("back.csv:4: clock_ms: the clock goes back"), common::DataError);
  testing::write_text(dir / "negative.csv", "clock_ms,batch,ms\n0,8,10\n20,8,-1\n");
  CHECK_THROWS_WITH_AS(StepTrace::read(dir / "negative.csv", "a", names), doctest::Contains("negative.csv:3: ms: a step time: expected a number >= 0 and <= 1e+07, got -1"), common::DataError);
  // Issue 39: the same ranges as the YAML keys (common/limits.hpp), and a trace of steps that take no time.
  testing::write_text(dir / "huge.csv", "clock_ms,batch,ms\n0,8,1e308\n20,8,10\n");
  CHECK_THROWS_WITH_AS(StepTrace::read(dir / "huge.csv", "a", names), doctest::Contains("huge.csv:2: ms: a step time: expected a number >= 0 and <= 1e+07, got 1e+308"), common::DataError);
  testing::write_text(dir / "inf.csv", "clock_ms,batch,ms\n0,8,inf\n20,8,10\n");
  CHECK_THROWS_WITH_AS(StepTrace::read(dir / "inf.csv", "a", names), doctest::Contains("inf.csv:2: ms: a step time"), common::DataError);
  testing::write_text(dir / "nan.csv", "clock_ms,batch,ms\n0,8,10\nnan,8,10\n");
  CHECK_THROWS_WITH_AS(StepTrace::read(dir / "nan.csv", "a", names), doctest::Contains("nan.csv:3: clock_ms: expected a number >= 0"), common::DataError);
  testing::write_text(dir / "batch.csv", "clock_ms,batch,ms\n0,8,10\n1,1e300,10\n");
  CHECK_THROWS_WITH_AS(StepTrace::read(dir / "batch.csv", "a", names), doctest::Contains("batch.csv:3: batch: expected a batch size >= 1 and <= 16777216"), common::DataError);
  testing::write_text(dir / "zeros.csv", "clock_ms,batch,ms\n0,32,0\n1,32,0\n2,32,0\n");
  CHECK_THROWS_WITH_AS(StepTrace::read(dir / "zeros.csv", "a", names), doctest::Contains("zeros.csv: ms: every step takes 0 ms"), common::DataError);
  testing::write_text(dir / "who.csv", "worker,clock_ms,batch,ms\na,0,8,10\nzed,5,8,10\n");
  CHECK_THROWS_WITH_AS(StepTrace::read(dir / "who.csv", "a", names), doctest::Contains("who.csv:3: worker: no worker named 'zed'"), common::DataError);
  testing::write_text(dir / "columns.csv", "clock_ms,ms\n0,10\n1,10\n");
  CHECK_THROWS_AS(StepTrace::read(dir / "columns.csv", "a", names), common::DataError);
}

TEST_CASE("a perturbation trace becomes scheduled perturbations, each holding until its worker's next row") {
  testing::TempDir dir;
  testing::write_text(dir / "p.csv", "time_s,worker,slowdown,add_ms\n0,b,2,0\n0.05,a,1.5,0\n0.1,b,1,0\n0.2,b,3,1\n");
  const auto p = read_perturbation_trace(dir / "p.csv", {"a", "b"});
  REQUIRE(p.size() == 3);
  CHECK(p[0].worker == 1);
  CHECK(p[0].start_s == 0.0);
  CHECK(p[0].end_s == 0.1);  // b's next row sets it back to its own speed
  CHECK(p[1].worker == 0);
  CHECK(std::isinf(p[1].end_s));
  CHECK(p[2].slowdown == 3.0);
  CHECK(p[2].add_ms == 1.0);

  // Replayed in a simulation: b's 10 ms steps take 20 ms until 0.1 s, then 10, then 31 from 0.2 s.
  SimulationSpec s = spec_of({modelled("a", 10.0, 0.0), modelled("b", 10.0, 0.0)}, 1000, 2);
  s.message_bytes = 0;
  s.network.intra_server = {0.0, 1000.0};
  s.cluster.perturbations = p;
  Simulation sim(s, 1, nullptr);
  std::vector<double> b_times;
  for (int k = 0; k < 20; ++k) b_times.push_back(sim.run_round(gradient_plan({1, 1})).workers[1].compute_ms);
  CHECK(b_times[0] == doctest::Approx(20.0));
  CHECK(b_times[4] == doctest::Approx(20.0));   // starts at 80 ms
  CHECK(b_times[5] == doctest::Approx(10.0));   // starts at 100 ms
  CHECK(b_times[11] == doctest::Approx(10.0));  // starts at 190 ms
  CHECK(b_times[12] == doctest::Approx(31.0));  // starts at 205 ms: 3x + 1 ms from 0.2 s on

  testing::write_text(dir / "one.csv", "time_s,worker,slowdown\n0,a,2\n");
  CHECK_THROWS_WITH_AS(read_perturbation_trace(dir / "one.csv", {"a"}), doctest::Contains("a perturbation trace needs at least 2"), common::DataError);
  testing::write_text(dir / "back.csv", "time_s,worker,slowdown\n1,a,2\n0.5,a,1\n");
  CHECK_THROWS_WITH_AS(read_perturbation_trace(dir / "back.csv", {"a"}), doctest::Contains("back.csv:3: time_s: the clock goes back"), common::DataError);
  testing::write_text(dir / "neg.csv", "time_s,worker,slowdown,add_ms\n0,a,2,0\n1,a,2,-3\n");
  CHECK_THROWS_WITH_AS(read_perturbation_trace(dir / "neg.csv", {"a"}), doctest::Contains("neg.csv:3: add_ms: expected a number >= 0 and <= 1e+07, got -3"), common::DataError);
  // Issue 39: a slowdown of 1e308 overflowed the clock (a YAML slowdown was capped, a trace's not).
  testing::write_text(dir / "slow.csv", "time_s,worker,slowdown\n0,a,1e308\n5,a,1\n");
  CHECK_THROWS_WITH_AS(read_perturbation_trace(dir / "slow.csv", {"a"}), doctest::Contains("slow.csv:2: slowdown: expected a number > 0 and <= 1e+06, got 1e+308"), common::DataError);
  testing::write_text(dir / "late.csv", "time_s,worker,slowdown\n0,a,2\n1e300,a,1\n");
  CHECK_THROWS_WITH_AS(read_perturbation_trace(dir / "late.csv", {"a"}), doctest::Contains("late.csv:3: time_s: expected a number >= 0 and <= 1e+09"), common::DataError);
  testing::write_text(dir / "who.csv", "time_s,worker,slowdown\n0,a,2\n1,ghost,2\n");
  CHECK_THROWS_WITH_AS(read_perturbation_trace(dir / "who.csv", {"a"}), doctest::Contains("who.csv:3: worker: no worker named 'ghost'"), common::DataError);
}

TEST_CASE("the round overhead: fixed per round after the all-reduce, per step on each worker's timeline") {
  SimulationSpec s = spec_of({modelled("fast", 2.0, 0.5), modelled("slow", 4.0, 1.0)}, 64, 8);
  s.cluster.overhead = {3.0, 0.5};
  Simulation sim(s, 1, nullptr);
  const RoundReport r = sim.run_round(gradient_plan({4, 4}));
  // fast 4 ms + 0.5, slow 8 ms + 0.5; comm 1.2 ms; fixed 3 ms.
  CHECK(r.workers[1].compute_ms == doctest::Approx(8.0));  // the overhead is not compute
  CHECK(r.workers[0].idle_ms == doctest::Approx(4.0));
  CHECK(r.round_ms == doctest::Approx(8.5 + 1.2 + 3.0));

  RoundPlan average;
  average.aggregation = Aggregation::ModelAverage;
  average.workers = {{4, 3}, {4, 1}};
  Simulation averaging(s, 1, nullptr);
  const RoundReport a = averaging.run_round(average);
  // fast: 3 steps of 4 ms + 0.5 each = 13.5; slow: 8.5; barrier at 13.5, comm 1.2, fixed 3.
  CHECK(a.round_ms == doctest::Approx(13.5 + 1.2 + 3.0));
  CHECK(a.workers[1].idle_ms == doctest::Approx(5.0));
}
