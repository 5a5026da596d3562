#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "orchestra/reward.hpp"

using orchestra::RewardTracker;

TEST_CASE("Eq. 1 increment rate: (delta acc / seconds) * sqrt(trainstep)") {
  CHECK(orchestra::increment_rate(0.25, 500, 144) == doctest::Approx(0.25 / 0.5 * 12));
  CHECK(orchestra::increment_rate(-0.1, 1000, 100) == doctest::Approx(-1.0));
  CHECK(orchestra::increment_rate(0.1, 1000, 0) == 0);
}

TEST_CASE("Eq. 1 reward over a short run: first 0, then -1, +1, 0 (tie with p*), -1 (accuracy fell)") {
  // Accuracies are binary fractions, so the tie is exact. trainstep is cumulative.
  RewardTracker tracker(0.0);
  // epoch 1: p = 0.5 / 1 s * sqrt(16) = 2; no p* yet -> 0, p* = 2
  auto r = tracker.observe(0.5, 1000, 16);
  CHECK(r.first);
  CHECK(r.p == doctest::Approx(2));
  CHECK(r.reward == 0);
  CHECK(std::isnan(r.best_before));
  CHECK(std::isnan(r.ratio));
  // epoch 2: p = 0.125 / 1 s * sqrt(64) = 1; ratio 1/2 -> -1, p* stays 2
  r = tracker.observe(0.625, 1000, 64);
  CHECK_FALSE(r.first);
  CHECK(r.p == doctest::Approx(1));
  CHECK(r.ratio == doctest::Approx(0.5));
  CHECK(r.reward == -1);
  CHECK(*tracker.best() == doctest::Approx(2));
  // epoch 3: p = 0.25 / 0.5 s * sqrt(144) = 6; ratio 3 -> +1, p* = 6
  r = tracker.observe(0.875, 500, 144);
  CHECK(r.p == doctest::Approx(6));
  CHECK(r.ratio == doctest::Approx(3));
  CHECK(r.reward == 1);
  CHECK(*tracker.best() == doctest::Approx(6));
  // epoch 4: p = 0.0625 / 0.25 s * sqrt(576) = 6 = p*; ratio 1 -> 0
  r = tracker.observe(0.9375, 250, 576);
  CHECK(r.p == 6);
  CHECK(r.ratio == 1);
  CHECK(r.reward == 0);
  // epoch 5: accuracy falls, p < 0 -> -1
  r = tracker.observe(0.875, 1000, 1024);
  CHECK(r.p < 0);
  CHECK(r.reward == -1);
  CHECK(*tracker.best() == doctest::Approx(6));
  CHECK(tracker.accuracy() == 0.875);
}

TEST_CASE("Eq. 1 reward when p* <= 0: p is compared with p* directly, no sign flip") {
  RewardTracker tracker(0.5);
  auto r = tracker.observe(0.25, 1000, 100);  // p = -2.5, becomes p*
  CHECK(r.reward == 0);
  CHECK(*tracker.best() == doctest::Approx(-2.5));
  r = tracker.observe(0.25, 1000, 200);  // p = 0 > -2.5: better (p / p* = 0 would say -1)
  CHECK(r.reward == 1);
  CHECK(std::isnan(r.ratio));
  CHECK(*tracker.best() == 0);
  r = tracker.observe(0.125, 1000, 300);  // p < 0 = p*
  CHECK(r.reward == -1);
}

TEST_CASE("Eq. 1 reward from EpochReports: trainstep is the running total of local steps") {
  RewardTracker tracker(0.0);
  env::EpochReport e;
  e.accuracy = 0.5;
  e.epoch_ms = 1000;
  e.worker_steps = {10, 6};  // 16 steps so far
  auto r = tracker.observe(e);
  CHECK(tracker.trainsteps() == 16);
  CHECK(r.p == doctest::Approx(0.5 * 4));
  e.accuracy = 0.75;
  e.worker_steps = {30, 18};  // 64 so far
  r = tracker.observe(e);
  CHECK(tracker.trainsteps() == 64);
  CHECK(r.p == doctest::Approx(0.25 * 8));
  CHECK(r.reward == 0);

  tracker.reset(0.0);
  CHECK_FALSE(tracker.best().has_value());
  CHECK(tracker.trainsteps() == 0);
}

TEST_CASE("Eq. 1 reward rejects epochs it cannot score, and leaves the tracker as it was") {
  RewardTracker tracker(0.0);
  env::EpochReport timing_only;
  timing_only.accuracy = std::nan("");
  timing_only.epoch_ms = 1000;
  timing_only.worker_steps = {5};
  CHECK_THROWS_WITH_AS(tracker.observe(timing_only), doctest::Contains("needs test accuracy"), std::invalid_argument);
  CHECK(tracker.trainsteps() == 0);
  CHECK_FALSE(tracker.best().has_value());
  CHECK_THROWS_WITH_AS(tracker.observe(0.5, 0, 10), doctest::Contains("epoch time must be positive"),
                       std::invalid_argument);
  CHECK_THROWS_AS(tracker.observe(0.5, 1000, -1), std::invalid_argument);
  CHECK(tracker.accuracy() == 0.0);
}

TEST_CASE("Eq. 1 with the History record: p* is the best p of the same epoch in earlier episodes") {
  orchestra::RewardTracker tracker(0.1, orchestra::RecordScope::History);
  // Episode 1: nothing on record, every epoch pays 0 and sets the record of its index.
  // p = delta acc / s * sqrt(trainstep): (0.6 / 2) * sqrt(4) = 0.6, then (0.1 / 1) * sqrt(16) = 0.4.
  CHECK(tracker.observe(0.7, 2000.0, 4.0).reward == 0);
  CHECK(tracker.observe(0.8, 1000.0, 16.0).reward == 0);
  // Episode 2: epoch 0 slower (p = 0.6 / 3 * 2 = 0.4 < 0.6): -1; epoch 1 faster (0.1 / 0.5 * 4 = 0.8
  // > 0.4): +1 although it is below epoch 0's p, which the Episode scope would compare it with.
  tracker.reset(0.1);
  const auto slower = tracker.observe(0.7, 3000.0, 4.0);
  CHECK(slower.reward == -1);
  CHECK(slower.best_before == doctest::Approx(0.6));
  const auto faster = tracker.observe(0.8, 500.0, 16.0);
  CHECK(faster.reward == 1);
  CHECK(faster.best_before == doctest::Approx(0.4));
  // A third epoch has no record yet: 0. The record of epoch 1 is now 0.8.
  CHECK(tracker.observe(0.85, 1000.0, 25.0).reward == 0);
  tracker.reset(0.1);
  tracker.observe(0.7, 2000.0, 4.0);
  CHECK(*tracker.best() == doctest::Approx(0.8));
  // The Episode scope on the same sequence: episode 2's fast epoch 1 is still below epoch 0's p.
  orchestra::RewardTracker episode(0.1, orchestra::RecordScope::Episode);
  episode.observe(0.7, 3000.0, 4.0);
  CHECK(episode.observe(0.8, 500.0, 16.0).reward == 1);  // 0.8 > 0.4 here too: within one episode
  episode.reset(0.1);
  CHECK(episode.observe(0.7, 2000.0, 4.0).reward == 0);  // a new episode forgets p*
}
