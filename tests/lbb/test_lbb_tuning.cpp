// LBB Alg. 2 (dynamic tuning) and the profiling helpers of Alg. 1.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "lbb/dynamic_tuner.hpp"
#include "lbb/profiler.hpp"

using lbb::DynamicTuner;
using lbb::RoughModel;
using lbb::TuneAction;
using lbb::TunerOptions;

TEST_CASE("Alg. 2: SE below FT leaves the batch sizes alone") {
  DynamicTuner tuner({}, std::vector<RoughModel>(3), {300, 300, 300}, 300);
  // SE = 2 / 101 = 0.0198 < 0.05.
  const auto r = tuner.tune({100, 100, 100}, {100.0, 101.0, 102.0});
  CHECK(r.action == TuneAction::None);
  CHECK(r.straggler_effect == doctest::Approx(2.0 / 101.0));
  CHECK(r.batch_sizes == std::vector<int>{100, 100, 100});
}

TEST_CASE("Alg. 2 lines 11-14: one fine-tune moves a sample from the slowest to the fastest") {
  DynamicTuner tuner({}, std::vector<RoughModel>(3), {300, 300, 300}, 300);
  // SE = (110 - 100) / 105 = 0.095: between FT = 0.05 and RT = 0.3.
  const auto r = tuner.tune({100, 100, 100}, {100.0, 105.0, 110.0});
  CHECK(r.action == TuneAction::Fine);
  CHECK(r.straggler_effect == doctest::Approx(10.0 / 105.0));
  CHECK(r.batch_sizes == std::vector<int>{101, 100, 99});
  CHECK(r.slowest == 2);
  CHECK(r.fastest == 0);
  CHECK(r.moved == 1);
}

TEST_CASE("fine_step balance: one fine-tune re-solves Eq. 3 on the rough slopes through the last times") {
  TunerOptions options;
  options.fine_step = lbb::FineStep::Balance;
  // Slopes a1 = 0.5, 1.0, 1.5 ms per sample; measured 100, 105, 110 ms at 100 samples each
  // (SE = 10 / 105). The lines t_i(B) = CT_i + a1_i (B - 100) meet at the level L where what the
  // three take and give sums to zero: 2 (L - 100) + (L - 105) + (L - 110) / 1.5 = 0, L = 103.18,
  // B = (106.4, 98.2, 95.5). Among the integer splits around it, (107, 98, 95) has the smallest
  // max: t = (103.5, 103, 102.5); (106, 98, 96) and (108, 97, 95) both reach 104.
  DynamicTuner tuner(options, {{0.0, 0.5}, {0.0, 1.0}, {0.0, 1.5}}, {300, 300, 300}, 300);
  const auto r = tuner.tune({100, 100, 100}, {100.0, 105.0, 110.0});
  CHECK(r.action == TuneAction::Fine);
  CHECK(r.slowest == 2);
  CHECK(r.fastest == 0);
  CHECK(r.batch_sizes == std::vector<int>{107, 98, 95});
  CHECK(r.moved == 5);
  // A gap smaller than one sample's worth moves `step` samples as Alg. 2 does; SE = 1 / 10.5.
  DynamicTuner close(options, {{0.0, 5.0}, {0.0, 5.0}, {0.0, 5.0}}, {300, 300, 300}, 300);
  const auto c = close.tune({100, 100, 100}, {10.0, 10.5, 11.0});
  CHECK(c.action == TuneAction::Fine);
  CHECK(c.batch_sizes == std::vector<int>{101, 100, 99});
}

TEST_CASE("fine-tuning respects B_lim and B_i >= 0") {
  TunerOptions options;
  options.step = 4;
  DynamicTuner tuner(options, std::vector<RoughModel>(3), {100, 120, 100}, 203);
  // The fastest (worker 0) is at its limit, so worker 1 takes the samples; the slowest has only
  // 3, so 3 move and it is taken out.
  const auto r = tuner.tune({100, 100, 3}, {90.0, 95.0, 100.0});
  CHECK(r.action == TuneAction::Fine);
  CHECK(r.batch_sizes == std::vector<int>{100, 103, 0});
  CHECK(r.fastest == 1);
  CHECK(r.moved == 3);
}

TEST_CASE("Alg. 2 lines 1-5, 16-17: one rapid-tune from rough linear models") {
  // a0 = 10 ms from profiling. Measured 60 and 110 ms at 50 samples each: SE = 50 / 85 = 0.59.
  // Rough models: a1 = (60 - 10) / 50 = 1 and (110 - 10) / 50 = 2, so 10 + B0 = 10 + 2 B1 with
  // B0 + B1 = 100: (67, 33) at 77 / 76 ms is the integer optimum.
  DynamicTuner tuner({}, {{10.0, 0.5}, {10.0, 0.5}}, {100, 100}, 100);
  const auto r = tuner.tune({50, 50}, {60.0, 110.0});
  CHECK(r.action == TuneAction::Rapid);
  CHECK(r.straggler_effect == doctest::Approx(50.0 / 85.0));
  CHECK(tuner.models()[0].a0 == 10.0);
  CHECK(tuner.models()[0].a1 == doctest::Approx(1.0));
  CHECK(tuner.models()[1].a1 == doctest::Approx(2.0));
  CHECK(r.batch_sizes == std::vector<int>{67, 33});
  CHECK(tuner.window_left() == TunerOptions{}.window);
}

TEST_CASE("rapid-tune with a step faster than the profiled start-up falls back to a model through 0") {
  DynamicTuner tuner({}, {{50.0, 1.0}, {0.0, 1.0}}, {100, 100}, 100);
  // Worker 0 took 40 ms < a0 = 50: model 0.8 ms per sample. Worker 1: (100 - 0) / 50 = 2.
  const auto r = tuner.tune({50, 50}, {40.0, 100.0});
  CHECK(r.action == TuneAction::Rapid);
  CHECK(tuner.models()[0].a0 == 0.0);
  CHECK(tuner.models()[0].a1 == doctest::Approx(0.8));
  // 0.8 B0 = 2 B1, B0 + B1 = 100 balances at 71.4 / 28.6: (72, 28) at 57.6 / 56 ms beats
  // (71, 29) at 56.8 / 58.
  CHECK(r.batch_sizes == std::vector<int>{72, 28});
}

TEST_CASE("the observation window after a rapid tune allows only fine-tuning (Sec. 3.2.3)") {
  TunerOptions options;
  options.window = 2;
  DynamicTuner tuner(options, {{10.0, 1.0}, {10.0, 1.0}}, {100, 100}, 100);
  CHECK(tuner.tune({50, 50}, {60.0, 110.0}).action == TuneAction::Rapid);
  // Still far apart (SE >= RT), but inside the window: fine-tunes.
  auto r = tuner.tune({67, 33}, {60.0, 110.0});
  CHECK(r.in_window);
  CHECK(r.action == TuneAction::Fine);
  CHECK(r.batch_sizes == std::vector<int>{68, 32});
  r = tuner.tune({68, 32}, {60.0, 110.0});
  CHECK(r.action == TuneAction::Fine);
  CHECK(tuner.window_left() == 0);
  r = tuner.tune({69, 31}, {60.0, 110.0});
  CHECK_FALSE(r.in_window);
  CHECK(r.action == TuneAction::Rapid);
}

TEST_CASE("the tuner rejects inconsistent input") {
  CHECK_THROWS_AS(DynamicTuner({}, std::vector<RoughModel>(2), {10, 10}, 30), std::invalid_argument);
  TunerOptions bad;
  bad.fine_threshold = 0.5;
  CHECK_THROWS_AS(DynamicTuner(bad, std::vector<RoughModel>(2), {10, 10}, 10), std::invalid_argument);
  DynamicTuner tuner({}, std::vector<RoughModel>(2), {10, 10}, 10);
  CHECK_THROWS_AS(tuner.tune({5, 5, 0}, {1.0, 2.0}), std::invalid_argument);
}

TEST_CASE("Alg. 1 line 5: batches 2^p up to the limit, the limit included") {
  CHECK(lbb::profile_batches(300) == std::vector<int>{2, 4, 8, 16, 32, 64, 128, 256, 300});
  CHECK(lbb::profile_batches(256) == std::vector<int>{2, 4, 8, 16, 32, 64, 128, 256});
  CHECK(lbb::profile_batches(2) == std::vector<int>{2});
  CHECK(lbb::profile_batches(1) == std::vector<int>{1});
  CHECK(lbb::profile_batches(0).empty());
}

TEST_CASE("profiling trims outliers before averaging") {
  CHECK(lbb::trimmed_mean({3.0, 1.0, 2.0, 100.0, -50.0}, 0.2) == doctest::Approx(2.0));
  CHECK(lbb::trimmed_mean({1.0, 2.0, 3.0, 4.0}, 0.5) == doctest::Approx(2.5));  // median
  CHECK(lbb::trimmed_mean({1.0, 2.0, 9.0}, 0.0) == doctest::Approx(4.0));
  CHECK_THROWS_AS(lbb::trimmed_mean({}, 0.2), std::invalid_argument);
  CHECK_THROWS_AS(lbb::trimmed_mean({1.0}, 0.7), std::invalid_argument);
}

TEST_CASE("profile_worker fits Eq. 1 to trimmed probes") {
  int calls = 0;
  // 2 + 0.5 B, with one wild probe per batch size that trimming must drop.
  const auto probe = [&calls](int worker, int batch) {
    CHECK(worker == 3);
    return (calls++ % 5 == 2) ? 1000.0 : 2.0 + 0.5 * batch;
  };
  lbb::ProfileOptions options;
  const auto p = lbb::profile_worker(probe, 3, 64, options);
  CHECK(calls == 6 * 5);
  REQUIRE(p.points.size() == 6);
  CHECK(p.points.back().batch == 64);
  CHECK(p.points.back().ms == doctest::Approx(34.0));
  CHECK(p.model.valid_up_to() == 64);
  CHECK(p.model.eval(40) == doctest::Approx(22.0));
  CHECK_THROWS_AS(lbb::profile_worker([](int, int) { return NAN; }, 0, 8, options), std::runtime_error);
  CHECK_THROWS_AS(lbb::profile_worker(probe, 0, 0, options), std::invalid_argument);
}

TEST_CASE("Alg. 1 lines 10-12 on real hardware: the first batch that cannot be allocated ends profiling") {
  // 4 + 0.25 B, and memory for at most 100 samples: 2..64 run, 128 fails, so B_lim = 64.
  std::vector<int> asked;
  const lbb::FallibleProbe probe = [&asked](int batch) -> std::optional<double> {
    asked.push_back(batch);
    if (batch > 100) return std::nullopt;
    return 4.0 + 0.25 * batch;
  };
  lbb::ProfileOptions options;
  options.repetitions = 3;
  const auto r = lbb::profile_until_out_of_memory(probe, 512, options);
  CHECK(r.hit_memory_limit);
  CHECK(r.max_batch == 64);
  REQUIRE(r.profile.points.size() == 6);
  CHECK(r.profile.points.back().batch == 64);
  CHECK(r.profile.points.back().ms == doctest::Approx(20.0));
  CHECK(asked.size() == 1 + 6 * 3 + 1);  // an untimed first step; nothing is asked after the failure
  CHECK(asked.front() == 2);
  CHECK(asked.back() == 128);
  CHECK(r.profile.model.eval(30) == doctest::Approx(11.5));

  // The first step (allocation, caches, threads) is not timed: it does not reach the smallest batch's time.
  int calls = 0;
  options.repetitions = 1;
  const auto warm = lbb::profile_until_out_of_memory([&calls](int b) -> std::optional<double> { return calls++ == 0 ? 1000.0 : 1.0 + b; }, 16, options);
  CHECK(warm.profile.points.front().ms == doctest::Approx(3.0));
  options.repetitions = 3;

  // No failure: the limit itself is the last batch, and B_lim.
  const auto all = lbb::profile_until_out_of_memory([](int b) -> std::optional<double> { return 1.0 + b; }, 48, options);
  CHECK_FALSE(all.hit_memory_limit);
  CHECK(all.max_batch == 48);
  CHECK(all.profile.points.back().batch == 48);

  // A failure at the first size, and a broken probe, are errors.
  CHECK_THROWS_AS(lbb::profile_until_out_of_memory([](int) -> std::optional<double> { return std::nullopt; }, 64, options),
                  std::runtime_error);
  CHECK_THROWS_AS(lbb::profile_until_out_of_memory([](int) -> std::optional<double> { return -1.0; }, 64, options),
                  std::runtime_error);
  CHECK_THROWS_AS(lbb::profile_until_out_of_memory(probe, 0, options), std::invalid_argument);
}

TEST_CASE("a profile whose cubic would dip below zero at batch 1 falls back to a lower degree") {
  // Times concave at small batches (t(2) = 0, then steep): the cubic and the line through these
  // points both predict t(1) < 0, so the line through the origin is used, a1 = sum(Bt) / sum(B^2).
  const std::vector<double> ms{0.0, 4.0, 12.0, 20.0};  // at 2, 4, 8, 16
  const lbb::FallibleProbe probe = [&ms](int batch) -> std::optional<double> {
    const int index = batch == 2 ? 0 : batch == 4 ? 1 : batch == 8 ? 2 : 3;
    return ms[static_cast<std::size_t>(index)];
  };
  lbb::ProfileOptions options;
  options.repetitions = 1;
  const auto r = lbb::profile_until_out_of_memory(probe, 16, options);
  CHECK(r.profile.model.eval(1) >= 0.0);
  REQUIRE(r.profile.model.coefficients().size() == 2);
  CHECK(r.profile.model.coefficients()[0] == 0.0);
  CHECK(r.profile.model.coefficients()[1] == doctest::Approx((4.0 * 4 + 8.0 * 12 + 16.0 * 20) / (4.0 + 16 + 64 + 256)));
}
