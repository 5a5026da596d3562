// The barrier-tuning RL environment (orchestra/rl/local_sgd_barrier_env.hpp) on a tiny heterogeneous
// cluster training a small MLP on synthetic data: seeding, the action contract, episode ends, and
// random- and constant-action controllers run through whole episodes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "orchestra/rl/local_sgd_barrier_env.hpp"

using orchestra::BarrierAction;
using orchestra::LocalSgdBarrierEnv;
using orchestra::LocalSgdBarrierEnvConfig;
using L = orchestra::StateLayout;

namespace {

// One fast worker on its own server and two workers half as fast on another: t(16) = 3.6 ms and
// 7.2 ms. 480 synthetic samples, B = 16 each: an epoch is a handful of rounds and trains in
// milliseconds.
LocalSgdBarrierEnvConfig small_config() {
  LocalSgdBarrierEnvConfig c;
  auto fast = std::make_shared<const env::BatchTimeModel>(std::vector<double>{2.0, 0.1}, 64);
  auto slow = std::make_shared<const env::BatchTimeModel>(std::vector<double>{4.0, 0.2}, 64);
  c.cluster.server_names = {"s0", "s1"};
  c.cluster.workers = {{"fast", fast, 64, 0.03, 0}, {"slow-0", slow, 64, 0.03, 1}, {"slow-1", slow, 64, 0.03, 1}};
  c.network.message_bytes = 2e5;  // a 2 ms all-reduce over gigabit Ethernet: the same order as a step
  c.training.model.kind = env::ModelKind::Mlp;
  c.training.model.hidden = {32};
  c.training.optimizer = {0.05, 0.9, 0.0};
  c.data.kind = env::DatasetKind::Synthetic;
  c.data.synthetic_train = 480;
  c.data.synthetic_test = 160;
  c.data.synthetic_side = 8;
  c.data.synthetic_noise = 2.0;
  c.global_batch = 48;
  c.data_seed = 3;
  c.budget.max_epochs = 4;
  c.budget.target_accuracy = 1.0;  // out of reach: episodes end by truncation unless a test says otherwise
  return c;
}

bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

float entry(const std::vector<float>& s, int i) { return s[static_cast<std::size_t>(i)]; }

// Drives one episode with `choose` picking each action from the observation; checks the contract
// at every step and returns the steps taken.
template <typename Choose>
std::vector<orchestra::StepResult> run_episode(LocalSgdBarrierEnv& environment, std::uint64_t seed, Choose choose) {
  const orchestra::ResetResult start = environment.reset(seed);
  REQUIRE(static_cast<int>(start.observation.size()) == environment.observation_size());
  const double unit = environment.controller().action_unit_ms();
  const int cap = environment.controller().options().max_local_steps;
  double barrier = start.info.barrier_ms;
  double best_p = -INFINITY;
  std::vector<orchestra::StepResult> steps;
  std::vector<float> observation = start.observation;
  while (!environment.episode_over()) {
    const int action = choose(observation);
    // T moves by one unit, clamped to [fastest t_b, max_local_steps * fastest t_b] at the time of
    // the move (the controller's rule; t_b is re-estimated after every epoch).
    const auto& batch_ms = environment.controller().batch_times_ms();
    const double fastest = *std::min_element(batch_ms.begin(), batch_ms.end());
    const double expected = std::clamp(barrier + action * unit, fastest, cap * fastest);
    const orchestra::StepResult step = environment.step(action);
    CHECK(step.info.barrier_ms == doctest::Approx(expected));
    CHECK(step.info.epoch == static_cast<int>(steps.size()) + 1);
    CHECK(step.info.epoch_ms > 0);
    CHECK(static_cast<int>(step.observation.size()) == L::kStateSize);
    CHECK(all_finite(step.observation));
    CHECK(entry(step.observation, L::kAccuracy) == doctest::Approx(step.info.accuracy));
    // Eq. 1: 0 on the first epoch, then +1 / -1 / 0 as p beats, misses or ties the best p so far.
    const double p = environment.last_reward().p;
    const double expected_reward = steps.empty() ? 0.0 : (p > best_p ? 1.0 : (p < best_p ? -1.0 : 0.0));
    CHECK(step.reward == expected_reward);
    best_p = std::max(best_p, p);
    CHECK(step.info.clock_ms >= (steps.empty() ? start.info.clock_ms : steps.back().info.clock_ms) + step.info.epoch_ms);
    barrier = step.info.barrier_ms;
    observation = step.observation;
    steps.push_back(step);
  }
  return steps;
}

}  // namespace

TEST_CASE("RL env: reset with one seed twice gives the same observation and start") {
  LocalSgdBarrierEnv environment(small_config());
  const auto a = environment.reset(7);
  const auto b = environment.reset(7);
  CHECK(a.observation == b.observation);
  CHECK(a.info.barrier_ms == b.info.barrier_ms);
  CHECK(a.info.accuracy == b.info.accuracy);
  // And the episodes that follow are the same, epoch by epoch (replicas, data order, noise).
  const auto step_a = environment.step(BarrierAction::Increase);
  environment.reset(7);
  const auto step_b = environment.step(BarrierAction::Increase);
  CHECK(step_a.observation == step_b.observation);
  CHECK(step_a.info.accuracy == step_b.info.accuracy);
  CHECK(step_a.info.clock_ms == step_b.info.clock_ms);
}

TEST_CASE("RL env: different seeds give different observations") {
  LocalSgdBarrierEnv environment(small_config());
  const auto a = environment.reset(1);
  const auto b = environment.reset(2);
  // The probes' noise differs, so do the measured relative speeds.
  CHECK(a.observation != b.observation);
  CHECK(entry(a.observation, L::slot(1, L::kSlotSpeed)) != entry(b.observation, L::slot(1, L::kSlotSpeed)));
  // So does the untrained model (its initialization comes from the seed).
  CHECK(a.info.loss != b.info.loss);
}

TEST_CASE("RL env: the observation before any epoch holds the start T, tau and speeds only") {
  LocalSgdBarrierEnv environment(small_config());
  const auto start = environment.reset(5);
  const auto& controller = environment.controller();
  // T starts at the LCM heuristic's T* (3.1.1).
  CHECK(start.info.barrier_ms == doctest::Approx(controller.lcm().barrier_ms));
  CHECK(start.info.epoch == 0);
  CHECK(start.info.accuracy < 0.3);  // the untrained model: about 1 in 10
  for (int i : {L::kEpochProgress, L::kGlobalSyncIndex, L::kSyncRate, L::kAccuracy, L::kAccuracyChange, L::kTestLoss,
                L::kTrainLoss, L::kWaitingMean, L::kWaitingMax, L::kCommShare})
    CHECK(entry(start.observation, i) == 0.0f);
  CHECK(entry(start.observation, L::kBarrier) > 0.0f);
  for (int s = 0; s < 3; ++s) {
    CHECK(entry(start.observation, L::slot(s, L::kSlotPresent)) == 1.0f);
    CHECK(entry(start.observation, L::slot(s, L::kSlotPlannedSteps)) > 0.0f);
  }
  CHECK(entry(start.observation, L::slot(0, L::kSlotSpeed)) == 1.0f);  // worker 0 is the fastest
  CHECK(entry(start.observation, L::slot(1, L::kSlotSpeed)) == doctest::Approx(0.5).epsilon(0.1));
  CHECK(entry(start.observation, L::slot(3, L::kSlotPresent)) == 0.0f);
}

TEST_CASE("RL env: invalid actions, a step before reset and a step after the end are rejected") {
  LocalSgdBarrierEnv environment(small_config());
  CHECK_THROWS_WITH_AS(environment.step(0), doctest::Contains("before reset()"), std::logic_error);
  environment.reset(1);
  CHECK_THROWS_WITH_AS(environment.step(2), doctest::Contains("action must be -1, 0 or +1"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(environment.step(-2), doctest::Contains("got -2"), std::invalid_argument);
  CHECK(environment.step(0).info.epoch == 1);  // the rejected actions ran nothing

  auto config = small_config();
  config.budget.max_epochs = 1;
  LocalSgdBarrierEnv one_epoch(config, environment.data());
  one_epoch.reset(1);
  const auto last = one_epoch.step(BarrierAction::Keep);
  CHECK(last.truncated);
  CHECK_FALSE(last.terminated);
  CHECK_THROWS_WITH_AS(one_epoch.step(0), doctest::Contains("after the episode ended"), std::invalid_argument);
}

TEST_CASE("RL env: bad configs, timing-only included, are rejected with the field named") {
  auto timing = small_config();
  timing.training.timing_only = true;
  CHECK_THROWS_WITH_AS(LocalSgdBarrierEnv{timing}, doctest::Contains("training.timing_only"), std::invalid_argument);
  auto epochs = small_config();
  epochs.budget.max_epochs = 0;
  CHECK_THROWS_WITH_AS(LocalSgdBarrierEnv{epochs}, doctest::Contains("budget.max_epochs"), std::invalid_argument);
  auto target = small_config();
  target.budget.target_accuracy = 1.5;
  CHECK_THROWS_WITH_AS(LocalSgdBarrierEnv{target}, doctest::Contains("budget.target_accuracy"), std::invalid_argument);
  auto spread = small_config();
  spread.controller.max_step_spread = -1;
  CHECK_THROWS_WITH_AS(LocalSgdBarrierEnv{spread}, doctest::Contains("max_step_spread"), std::invalid_argument);
}

TEST_CASE("RL env: terminated at the target accuracy, truncated at the time budget") {
  auto easy = small_config();
  easy.budget.target_accuracy = 0.3;  // above chance, reached in the first epoch on this easy set
  LocalSgdBarrierEnv reach(easy);
  reach.reset(4);
  const auto step = reach.step(BarrierAction::Keep);
  CHECK(step.info.accuracy >= 0.3);
  CHECK(step.info.reached_target);
  CHECK(step.terminated);
  CHECK_FALSE(step.truncated);
  CHECK(reach.episode_over());

  auto short_time = small_config();
  short_time.budget.max_sim_seconds = 1e-3;  // 1 ms: the first epoch crosses it and is finished
  LocalSgdBarrierEnv timed(short_time, reach.data());
  timed.reset(4);
  const auto first = timed.step(BarrierAction::Keep);
  CHECK(first.truncated);
  CHECK_FALSE(first.terminated);
  CHECK(first.info.epoch == 1);
}

TEST_CASE("RL env: a random-action controller runs whole episodes") {
  LocalSgdBarrierEnv environment(small_config());
  const auto* data = environment.data().get();
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> pick(0, orchestra::kNumBarrierActions - 1);
  std::vector<int> taken;
  for (std::uint64_t episode = 0; episode < 3; ++episode) {
    const auto steps = run_episode(environment, 100 + episode, [&](const std::vector<float>&) {
      taken.push_back(static_cast<int>(orchestra::action_from_index(pick(rng))));
      return taken.back();
    });
    REQUIRE(steps.size() == 4);  // max_epochs, the target being out of reach
    CHECK(steps.back().truncated);
    CHECK(std::none_of(steps.begin(), steps.end() - 1, [](const auto& s) { return s.truncated || s.terminated; }));
    // Training is real: four epochs on this set lift the accuracy far above chance.
    CHECK(steps.back().info.accuracy > 0.5);
    CHECK(environment.data().get() == data);  // loaded once, shared by every episode
  }
  // The random controller did use all three actions.
  for (int a : {-1, 0, 1}) CHECK(std::count(taken.begin(), taken.end(), a) > 0);
}

TEST_CASE("RL env: constant-action controllers move T one unit per epoch or keep it") {
  LocalSgdBarrierEnv environment(small_config());
  for (int action : {1, 0, -1}) {
    CAPTURE(action);
    for (std::uint64_t episode = 0; episode < 2; ++episode) {
      const double start = environment.reset(20 + episode).info.barrier_ms;
      const double unit = environment.controller().action_unit_ms();
      const auto steps = run_episode(environment, 20 + episode, [action](const std::vector<float>&) { return action; });
      REQUIRE(steps.size() == 4);
      if (action == 1) {
        // Far from the cap (64 steps of the fastest worker): exactly start + k units.
        for (std::size_t k = 0; k < steps.size(); ++k)
          CHECK(steps[k].info.barrier_ms == doctest::Approx(start + static_cast<double>(k + 1) * unit));
        // A larger T means more local steps between averages: fewer rounds, a rising T entry.
        CHECK(entry(steps.back().observation, L::kBarrier) > entry(steps.front().observation, L::kBarrier));
        CHECK(environment.controller().local_steps()[0] > 2);
      } else if (action == 0) {
        for (const auto& s : steps) CHECK(s.info.barrier_ms == doctest::Approx(start));
      } else {
        // Down to the floor, the fastest worker's batch time (re-measured every epoch, so the floor
        // itself moves a little); run_episode checked each move against the clamp.
        CHECK(steps.back().info.barrier_ms < start);
        CHECK(environment.controller().local_steps() == std::vector<int>{1, 1, 1});
      }
    }
  }
}

TEST_CASE("RL env: the epoch-time reward pays minus the epoch's seconds over the scale; the History record keeps p*") {
  LocalSgdBarrierEnvConfig config = small_config();
  config.reward = LocalSgdBarrierEnvConfig::Reward::EpochTime;
  config.time_reward_scale_s = 0.5;
  LocalSgdBarrierEnv timed(config);
  timed.reset(5);
  double total = 0;
  double seconds = 0;
  while (!timed.episode_over()) {
    const auto step = timed.step(+1);
    CHECK(step.reward == doctest::Approx(-step.info.epoch_ms / 1000.0 / 0.5));
    total += step.reward;
    seconds += step.info.epoch_ms / 1000.0;
  }
  CHECK(total == doctest::Approx(-seconds / 0.5));  // the return is minus the episode's time

  config.reward = LocalSgdBarrierEnvConfig::Reward::Eq1;
  config.reward_record = orchestra::RecordScope::History;
  LocalSgdBarrierEnv recorded(config);
  recorded.reset(5);
  CHECK(recorded.step(0).reward == 0);  // nothing on record: the first episode pays 0 throughout
  CHECK(recorded.step(0).reward == 0);
  recorded.reset(6);
  const auto again = recorded.step(0);  // epoch 0 of the second episode meets epoch 0's record
  CHECK(std::isfinite(recorded.last_reward().best_before));
  CHECK(again.reward == (recorded.last_reward().p > recorded.last_reward().best_before ? 1.0 : -1.0));

  config.time_reward_scale_s = 0;
  CHECK_THROWS_WITH_AS(LocalSgdBarrierEnv{config}, doctest::Contains("time_reward_scale_s"), std::invalid_argument);
}
