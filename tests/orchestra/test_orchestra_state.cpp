#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "orchestra/rl_state.hpp"

using orchestra::StateInputs;
using L = orchestra::StateLayout;

namespace {

float at(const std::vector<float>& s, int i) { return s[static_cast<std::size_t>(i)]; }

StateInputs two_workers() {
  StateInputs in;
  in.batch_ms = {10, 21};  // 2080 Ti and T4
  in.local_steps = {2, 1};
  in.max_local_steps = 64;
  in.barrier_ms = 21;
  return in;
}

}  // namespace

TEST_CASE("state layout: 12 global entries, then 16 slots of 5") {
  CHECK(L::kStateSize == 92);
  CHECK(L::slot(0, L::kSlotPresent) == 12);
  CHECK(L::slot(1, L::kSlotPresent) == 17);
  CHECK(L::slot(15, L::kSlotSpeed) == 91);
}

TEST_CASE("state after an epoch: progress, accuracy and loss, waiting, per-worker slots") {
  env::EpochReport e;
  e.rounds = 50;
  e.worker_steps = {100, 50};
  e.worker_busy_ms = {1000, 1050};
  e.worker_idle_ms = {50, 0};
  e.accuracy = 0.6;
  e.loss = 1.0;
  e.train_loss = 3.0;
  e.epoch_ms = 1400;
  StateInputs in = two_workers();
  in.epoch = &e;
  in.previous_accuracy = 0.5;
  in.rounds.global_rounds = 150;
  in.rounds.comm_ms = 250;
  in.epochs_done = 3;
  in.horizon_epochs = 10;

  const auto s = orchestra::build_state(in);
  REQUIRE(s.size() == 92);
  CHECK(at(s, L::kEpochProgress) == doctest::Approx(0.3));
  CHECK(at(s, L::kGlobalSyncIndex) == doctest::Approx(std::log(151.0) / std::log(1e6 + 1)));
  CHECK(at(s, L::kSyncRate) == doctest::Approx(0.5));  // 50 rounds for 100 fast steps
  CHECK(at(s, L::kAccuracy) == doctest::Approx(0.6));
  CHECK(at(s, L::kAccuracyChange) == doctest::Approx(0.1));
  CHECK(at(s, L::kTestLoss) == doctest::Approx(0.5));
  CHECK(at(s, L::kTrainLoss) == doctest::Approx(0.75));
  CHECK(at(s, L::kWaitingMean) == doctest::Approx(50.0 / 2100.0));
  CHECK(at(s, L::kWaitingMax) == doctest::Approx(50.0 / 1050.0));
  CHECK(at(s, L::kCommShare) == doctest::Approx(250.0 / 1400.0));
  CHECK(at(s, L::kBarrier) == doctest::Approx(21.0 / 640.0));
  CHECK(at(s, L::kSlotResolution) == doctest::Approx(1));

  CHECK(at(s, L::slot(0, L::kSlotPresent)) == 1);
  CHECK(at(s, L::slot(0, L::kSlotLocalIndex)) == doctest::Approx(1));
  CHECK(at(s, L::slot(0, L::kSlotPlannedSteps)) == doctest::Approx(2.0 / 64));
  CHECK(at(s, L::slot(0, L::kSlotWaiting)) == doctest::Approx(50.0 / 1050.0));
  CHECK(at(s, L::slot(0, L::kSlotSpeed)) == doctest::Approx(1));
  CHECK(at(s, L::slot(1, L::kSlotPresent)) == 1);
  CHECK(at(s, L::slot(1, L::kSlotLocalIndex)) == doctest::Approx(0.5));
  CHECK(at(s, L::slot(1, L::kSlotPlannedSteps)) == doctest::Approx(1.0 / 64));
  CHECK(at(s, L::slot(1, L::kSlotWaiting)) == 0);
  CHECK(at(s, L::slot(1, L::kSlotSpeed)) == doctest::Approx(10.0 / 21.0));
  for (int i = L::slot(2, 0); i < L::kStateSize; ++i) CHECK(at(s, i) == 0);  // padding
  for (float v : s) {
    CHECK(v >= -1.0f);
    CHECK(v <= 1.0f);
  }
}

TEST_CASE("state before the first epoch: only the plan and the cluster are known") {
  const auto s = orchestra::build_state(two_workers());
  REQUIRE(s.size() == 92);
  for (int i : {L::kEpochProgress, L::kGlobalSyncIndex, L::kSyncRate, L::kAccuracy, L::kAccuracyChange, L::kTestLoss,
                L::kTrainLoss, L::kWaitingMean, L::kWaitingMax, L::kCommShare})
    CHECK(at(s, i) == 0);
  CHECK(at(s, L::kBarrier) == doctest::Approx(21.0 / 640.0));
  CHECK(at(s, L::slot(1, L::kSlotPresent)) == 1);
  CHECK(at(s, L::slot(1, L::kSlotLocalIndex)) == 0);
  CHECK(at(s, L::slot(1, L::kSlotSpeed)) == doctest::Approx(10.0 / 21.0));
}

TEST_CASE("state in timing-only mode: NaN accuracy and loss read as 0") {
  env::EpochReport e;
  e.accuracy = std::nan("");
  e.loss = std::nan("");
  e.train_loss = std::nan("");
  e.epoch_ms = 100;
  StateInputs in = two_workers();
  in.epoch = &e;
  in.previous_accuracy = std::nan("");
  const auto s = orchestra::build_state(in);
  CHECK(at(s, L::kAccuracy) == 0);
  CHECK(at(s, L::kAccuracyChange) == 0);
  CHECK(at(s, L::kTestLoss) == 0);
  CHECK(at(s, L::kTrainLoss) == 0);
}

TEST_CASE("state with more workers than slots: contiguous groups are averaged") {
  StateInputs in;
  for (int n = 0; n < 40; ++n) {
    in.batch_ms.push_back(n % 2 == 0 ? 10 : 20);  // speeds 1 and 0.5 alternate
    in.local_steps.push_back(n % 2 == 0 ? 4 : 2);
  }
  in.max_local_steps = 8;
  in.barrier_ms = 40;
  const auto s = orchestra::build_state(in);
  REQUIRE(s.size() == 92);
  CHECK(at(s, L::kSlotResolution) == doctest::Approx(16.0 / 40.0));
  // slot 0: workers 0, 1 (floor(40/16) = 2); slot 1: workers 2, 3, 4 (up to floor(80/16) = 5)
  CHECK(at(s, L::slot(0, L::kSlotSpeed)) == doctest::Approx(0.75));
  CHECK(at(s, L::slot(1, L::kSlotSpeed)) == doctest::Approx((1 + 0.5 + 1) / 3.0));
  CHECK(at(s, L::slot(1, L::kSlotPlannedSteps)) == doctest::Approx((0.5 + 0.25 + 0.5) / 3.0));
  for (int slot = 0; slot < L::kWorkerSlots; ++slot) CHECK(at(s, L::slot(slot, L::kSlotPresent)) == 1);
}

TEST_CASE("round summary: counts rounds, tracks the global sync index, sums communication") {
  orchestra::RoundSummary summary;
  env::RoundReport r;
  r.round = 41;
  r.comm_ms = 2.5;
  summary.add(r);
  r.round = 42;
  summary.add(r);
  CHECK(summary.rounds == 2);
  CHECK(summary.global_rounds == 43);
  CHECK(summary.comm_ms == doctest::Approx(5));
}

TEST_CASE("state rejects inputs that do not describe a cluster") {
  StateInputs in;
  CHECK_THROWS_WITH_AS(orchestra::build_state(in), doctest::Contains("no batch times"), std::invalid_argument);
  in = two_workers();
  in.local_steps = {1};
  CHECK_THROWS_WITH_AS(orchestra::build_state(in), doctest::Contains("expected 2 planned local steps, got 1"),
                       std::invalid_argument);
  in = two_workers();
  in.batch_ms[1] = 0;
  CHECK_THROWS_AS(orchestra::build_state(in), std::invalid_argument);
  in = two_workers();
  in.max_local_steps = 0;
  CHECK_THROWS_AS(orchestra::build_state(in), std::invalid_argument);
}
