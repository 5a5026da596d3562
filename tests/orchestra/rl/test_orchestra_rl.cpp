// The barrier-tuning RL environment (orchestra/rl/local_sgd_barrier_env.hpp) on a tiny heterogeneous
// cluster training a small MLP on synthetic data: seeding, the action contract, episode ends, and
// random- and constant-action controllers run through whole episodes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "env/surrogate/surrogate_fixture.hpp"
#include "orchestra/rl/local_sgd_barrier_env.hpp"
#include "orchestra/rl/small_barrier_env.hpp"

using orchestra::BarrierAction;
using orchestra::LocalSgdBarrierEnv;
using orchestra::LocalSgdBarrierEnvConfig;
using L = orchestra::StateLayout;
using testing::small_config;

namespace {

bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

float entry(const std::vector<float>& s, int i) { return s[static_cast<std::size_t>(i)]; }

// What one action does to T under the controller's options: one unit or one factor, within bounds.
double moved(const orchestra::BarrierController& c, double barrier, int action) {
  const auto& o = c.options();
  const double next = o.move == orchestra::BarrierMove::Multiplicative ? barrier * std::pow(o.move_factor, action)
                                                                         : barrier + action * c.action_unit_ms();
  return std::clamp(next, c.min_barrier_ms(), c.max_barrier_ms());
}

// Drives one episode with `choose` picking each action from the observation; checks the contract
// at every step (T's move, the window's length, the Eq. 1 reward, the clock) and returns the steps.
template <typename Choose>
std::vector<orchestra::StepResult> run_episode(LocalSgdBarrierEnv& environment, std::uint64_t seed, Choose choose) {
  const orchestra::ResetResult start = environment.reset(seed);
  REQUIRE(static_cast<int>(start.observation.size()) == environment.observation_size());
  const auto& options = environment.controller().options();
  double barrier = start.info.barrier_ms;
  double best_p = -INFINITY;
  std::vector<orchestra::StepResult> steps;
  std::vector<float> observation = start.observation;
  while (!environment.episode_over()) {
    const int action = choose(observation);
    const double expected = moved(environment.controller(), barrier, action);
    const std::int64_t rounds_before = steps.empty() ? 0 : steps.back().info.rounds;
    const int epochs_before = steps.empty() ? 0 : steps.back().info.epoch;
    const orchestra::StepResult step = environment.step(action);
    CHECK(step.info.barrier_ms == doctest::Approx(expected));
    // A step is one window: an epoch, or K rounds cut short by an epoch's end.
    if (options.interval == orchestra::DecisionInterval::Epoch) {
      CHECK(step.info.epoch == epochs_before + 1);
    } else {
      const std::int64_t ran = step.info.rounds - rounds_before;
      CHECK(ran >= 1);
      CHECK(ran <= options.interval_rounds);
      CHECK((step.info.rounds % options.interval_rounds == 0 || step.info.epoch == epochs_before + 1));
    }
    CHECK(step.info.step_ms > 0);
    CHECK(static_cast<int>(step.observation.size()) == L::kStateSize);
    CHECK(all_finite(step.observation));
    CHECK(entry(step.observation, L::kLastAction) == action);
    // Eq. 1: 0 on the first step, then +1 / -1 / 0 as p beats, misses or ties the best p so far.
    const double p = environment.last_reward().p;
    const double expected_reward = steps.empty() ? 0.0 : (p > best_p ? 1.0 : (p < best_p ? -1.0 : 0.0));
    CHECK(step.reward == expected_reward);
    best_p = std::max(best_p, p);
    CHECK(step.info.clock_ms == doctest::Approx((steps.empty() ? start.info.clock_ms : steps.back().info.clock_ms) + step.info.step_ms));
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
  CHECK(entry(a.observation, L::kSpeedSpread) != entry(b.observation, L::kSpeedSpread));
  // So does the untrained model (its initialization comes from the seed).
  CHECK(a.info.loss != b.info.loss);
}

TEST_CASE("RL env: the observation before any step holds the cluster, T and the plan only") {
  LocalSgdBarrierEnv environment(small_config());
  const auto start = environment.reset(5);
  const auto& controller = environment.controller();
  // T starts at the LCM heuristic's T* (3.1.1).
  CHECK(start.info.barrier_ms == doctest::Approx(controller.lcm().barrier_ms));
  CHECK(start.info.epoch == 0);
  CHECK(start.info.accuracy < 0.3);  // the untrained model: about 1 in 10
  for (int i : {L::kBudgetUsed, L::kGlobalSyncIndex, L::kSyncRate, L::kAccuracy, L::kAccuracyChange, L::kTrainLoss, L::kLossTrend,
                L::kWaitingMean, L::kWaitingMax, L::kCommShareWindow, L::kBarrierVsStart, L::kLastAction})
    CHECK(entry(start.observation, i) == 0.0f);
  CHECK(entry(start.observation, L::kCommShareAtBarrier) > 0.0f);
  CHECK(entry(start.observation, L::kLocalStepsMean) > 0.0f);
  CHECK(entry(start.observation, L::kSpeedSpread) == doctest::Approx(0.5).epsilon(0.1));  // 3.6 ms against 7.2 ms
  CHECK(entry(start.observation, L::kClusterSize) == doctest::Approx(std::log2(3.0) / 6));
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
  std::uniform_int_distribution<int> pick(0, orchestra::num_barrier_actions(1) - 1);
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

TEST_CASE("RL env: the contract holds for both decision intervals and both moves") {
  struct Case {
    orchestra::DecisionInterval interval;
    int rounds;
    orchestra::BarrierMove move;
  };
  for (const Case c : {Case{orchestra::DecisionInterval::Epoch, 1, orchestra::BarrierMove::Additive},
                       Case{orchestra::DecisionInterval::Epoch, 1, orchestra::BarrierMove::Multiplicative},
                       Case{orchestra::DecisionInterval::Rounds, 1, orchestra::BarrierMove::Additive},
                       Case{orchestra::DecisionInterval::Rounds, 3, orchestra::BarrierMove::Multiplicative}}) {
    CAPTURE(static_cast<int>(c.interval));
    CAPTURE(c.rounds);
    CAPTURE(static_cast<int>(c.move));
    auto config = small_config();
    config.controller.interval = c.interval;
    config.controller.interval_rounds = c.rounds;
    config.controller.move = c.move;
    config.controller.move_factor = 1.5;
    LocalSgdBarrierEnv environment(config);
    std::mt19937 rng(3);
    for (std::uint64_t episode = 0; episode < 2; ++episode) {
      const auto steps = run_episode(environment, 40 + episode, [&](const std::vector<float>&) { return static_cast<int>(rng() % 3) - 1; });
      REQUIRE(!steps.empty());
      CHECK(steps.back().truncated);  // the target is out of reach
      CHECK(steps.back().info.epoch == 4);
      if (c.interval == orchestra::DecisionInterval::Epoch) CHECK(steps.size() == 4);
      if (c.interval == orchestra::DecisionInterval::Rounds) CHECK(steps.size() > 4);
    }
    // Terminated instead, at a reachable target: the episode's last step, and only it.
    config.budget.target_accuracy = 0.3;
    LocalSgdBarrierEnv reach(config, environment.data());
    const auto steps = run_episode(reach, 9, [](const std::vector<float>&) { return 0; });
    CHECK(steps.back().terminated);
    CHECK_FALSE(steps.back().truncated);
  }
}

TEST_CASE("RL env: constant actions move T one unit or factor per step, or keep it, within the bounds") {
  for (const auto move : {orchestra::BarrierMove::Additive, orchestra::BarrierMove::Multiplicative}) {
    auto config = small_config();
    config.controller.move = move;
    LocalSgdBarrierEnv environment(config);
    for (int action : {1, 0, -1}) {
      CAPTURE(action);
      const double start = environment.reset(20).info.barrier_ms;
      const auto steps = run_episode(environment, 20, [action](const std::vector<float>&) { return action; });
      REQUIRE(steps.size() == 4);
      const auto& c = environment.controller();
      if (action == 1) {
        double expected = start;
        for (const auto& step : steps) CHECK(step.info.barrier_ms == doctest::Approx(expected = moved(c, expected, 1)));
        // A larger T means more local steps between averages and a T further from its start.
        CHECK(entry(steps.back().observation, L::kBarrierVsStart) > 0.0f);
        CHECK(c.local_steps()[0] > 2);
      } else if (action == 0) {
        for (const auto& s : steps) CHECK(s.info.barrier_ms == doctest::Approx(start));
      } else {
        // Down to the floor, the fastest worker's probed batch time.
        CHECK(steps.back().info.barrier_ms == doctest::Approx(c.min_barrier_ms()));
        CHECK(c.local_steps() == std::vector<int>{1, 1, 1});
      }
    }
  }
}

TEST_CASE("RL env: the time reward pays minus the step's time in reference rounds, a miss twice, the History record keeps p*") {
  LocalSgdBarrierEnvConfig config = small_config();
  config.reward = LocalSgdBarrierEnvConfig::Reward::Time;
  config.time_reward_rounds = 0.5;
  LocalSgdBarrierEnv timed(config);
  const auto start = timed.reset(5);
  const double reference = timed.controller().barrier_ms() + timed.controller().comm_ms();  // T* + C
  double total = 0, ms = 0;
  while (!timed.episode_over()) {
    const auto step = timed.step(+1);
    ms += step.info.step_ms;
    const double penalty = step.truncated ? (step.info.clock_ms - start.info.clock_ms) / (0.5 * reference) : 0.0;
    CHECK(step.reward == doctest::Approx(-step.info.step_ms / (0.5 * reference) - penalty));
    total += step.reward;
  }
  CHECK(total == doctest::Approx(-2 * ms / (0.5 * reference)));  // missed: the episode's time, twice

  config.reward = LocalSgdBarrierEnvConfig::Reward::Eq1;
  config.reward_record = orchestra::RecordScope::History;
  LocalSgdBarrierEnv recorded(config);
  recorded.reset(5);
  CHECK(recorded.step(0).reward == 0);  // nothing on record: the first episode pays 0 throughout
  CHECK(recorded.step(0).reward == 0);
  recorded.reset(6);
  const auto again = recorded.step(0);  // step 0 of the second episode meets step 0's record
  CHECK(std::isfinite(recorded.last_reward().best_before));
  CHECK(again.reward == (recorded.last_reward().p > recorded.last_reward().best_before ? 1.0 : -1.0));

  config.time_reward_rounds = 0;
  CHECK_THROWS_WITH_AS(LocalSgdBarrierEnv{config}, doctest::Contains("time_reward_rounds"), std::invalid_argument);
}

TEST_CASE("RL env: move_cost_rounds charges each change of T that many reference rounds, holding, or a move stopped by a bound, is free") {
  LocalSgdBarrierEnvConfig config = small_config();
  config.reward = LocalSgdBarrierEnvConfig::Reward::Time;
  config.time_reward_rounds = 0.5;
  config.controller.move = orchestra::BarrierMove::Multiplicative;
  config.controller.max_barrier_x_start = 2;  // one doubling reaches the bound
  LocalSgdBarrierEnv free_moves(config);
  config.move_cost_rounds = 2;
  LocalSgdBarrierEnv costly(config);
  free_moves.reset(5);
  costly.reset(5);
  // The same seed and actions give the same episode; only the reward differs, by 2 / 0.5 units per change of T.
  const std::vector<int> actions = {0, +1, +1, -1, 0};
  const std::vector<bool> changes = {false, true, false, true, false};  // the second +1 is stopped by the bound
  for (std::size_t k = 0; k < actions.size() && !costly.episode_over(); ++k) {
    CAPTURE(k);
    const double before = costly.controller().barrier_ms();
    const auto a = free_moves.step(actions[k]);
    const auto b = costly.step(actions[k]);
    CHECK(b.info.step_ms == a.info.step_ms);
    CHECK((b.info.barrier_ms != before) == changes[k]);
    CHECK(b.reward == doctest::Approx(a.reward - (changes[k] ? 4.0 : 0.0)));
  }

  config.move_cost_rounds = -1;
  CHECK_THROWS_WITH_AS(LocalSgdBarrierEnv{config}, doctest::Contains("move_cost_rounds"), std::invalid_argument);
  config.move_cost_rounds = 1;
  config.reward = LocalSgdBarrierEnvConfig::Reward::LogTime;
  CHECK_THROWS_WITH_AS(LocalSgdBarrierEnv{config}, doctest::Contains("move_cost_rounds: is charged in the time reward's units"),
                       std::invalid_argument);
}

TEST_CASE("RL env: the log-time reward telescopes to -ln(1 + time / c), a miss pays ln 2 more") {
  LocalSgdBarrierEnvConfig config = small_config();
  config.reward = LocalSgdBarrierEnvConfig::Reward::LogTime;
  config.time_reward_rounds = 0.5;
  LocalSgdBarrierEnv logged(config);
  const auto start = logged.reset(5);
  const double c = 0.5 * (logged.controller().barrier_ms() + logged.controller().comm_ms());  // 0.5 x (T* + C)
  double total = 0, ms = 0;
  bool missed = false;
  while (!logged.episode_over()) {
    const auto step = logged.step(+1);
    const double before = ms;
    ms += step.info.step_ms;
    CHECK(step.info.clock_ms - start.info.clock_ms == doctest::Approx(ms));
    missed = step.truncated;
    CHECK(step.reward == doctest::Approx(-std::log((c + ms) / (c + before)) - (step.truncated ? std::log(2.0) : 0.0)));
    total += step.reward;
  }
  REQUIRE(missed);
  CHECK(total == doctest::Approx(-std::log(1 + ms / c) - std::log(2.0)));

  // The same seed and moves under the time reward: the same episode, paid in time.
  config.reward = LocalSgdBarrierEnvConfig::Reward::Time;
  LocalSgdBarrierEnv timed(config);
  timed.reset(5);
  double timed_ms = 0;
  while (!timed.episode_over()) timed_ms += timed.step(+1).info.step_ms;
  CHECK(timed_ms == ms);
}

namespace {

// Clusters of 2-4 workers of two kinds on 1-2 servers, for the tests of drawn clusters.
orchestra::ClusterDistribution small_distribution() {
  orchestra::ClusterDistribution d;
  d.profiles = {{"fast", {2.0, 0.1}, 64}, {"slow", {4.0, 0.2}, 64}};
  d.servers = {1, 2};
  d.workers_per_server = {1, 3};
  d.total_workers = {2, 4};
  d.message_mb = {0.05, 0.5, true};
  return d;
}

}  // namespace

TEST_CASE("RL env: with a cluster distribution every seed draws its own cluster, the same one each time") {
  auto config = small_config();
  const orchestra::ClusterDistribution d = small_distribution();
  config.distribution = d;
  LocalSgdBarrierEnv environment(config);
  environment.reset(1);
  const auto first = environment.cluster();
  const double first_bytes = environment.network().message_bytes;
  environment.reset(2);
  const auto second = environment.cluster();
  environment.reset(1);
  CHECK(environment.cluster().num_workers() == first.num_workers());
  CHECK(environment.network().message_bytes == first_bytes);
  for (int i = 0; i < first.num_workers(); ++i) CHECK(environment.cluster().workers[static_cast<std::size_t>(i)].name == first.workers[static_cast<std::size_t>(i)].name);
  CHECK((second.num_workers() != first.num_workers() || environment.network().message_bytes != first_bytes ||
         second.workers[0].name != first.workers[0].name));
  CHECK(first.num_workers() >= 2);
  CHECK(first.num_workers() <= 4);
  const auto step = environment.step(0);
  CHECK(step.info.step_ms > 0);
}

TEST_CASE("RL env: focus clusters: a share of the episodes draws its cluster from the focus draws, picked by the episode's seed") {
  auto config = small_config();
  const orchestra::ClusterDistribution d = small_distribution();
  config.distribution = d;
  // Two focus clusters: the draws of two episodes' own seeds, so each is a cluster the distribution gives.
  const std::uint64_t focus_a = orchestra::cluster_draw_seed(config, 101);
  const std::uint64_t focus_b = orchestra::cluster_draw_seed(config, 202);
  CHECK(focus_a == env::derive_seed(101, 23));  // without focus: the episode's own draw, as before
  const auto workers_of = [&](std::uint64_t draw) {
    std::vector<std::string> names;
    for (const auto& w : orchestra::draw_cluster(d, draw, config.global_batch, 480).cluster.workers) names.push_back(w.name);
    return names;
  };

  config.focus_draws = {focus_a, focus_b};
  config.focus_share = 1.0;
  LocalSgdBarrierEnv focused(config);
  int from_a = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    const std::uint64_t draw = orchestra::cluster_draw_seed(config, seed);
    REQUIRE((draw == focus_a || draw == focus_b));
    from_a += draw == focus_a;
    focused.reset(seed);
    std::vector<std::string> names;
    for (const auto& w : focused.cluster().workers) names.push_back(w.name);
    CHECK(names == workers_of(draw));  // the environment runs the focus cluster it names
  }
  CHECK(from_a > 8);  // both picked
  CHECK(from_a < 32);

  config.focus_share = 0.5;
  int focus_episodes = 0;
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
    const std::uint64_t draw = orchestra::cluster_draw_seed(config, seed);
    if (draw == focus_a || draw == focus_b) {
      ++focus_episodes;
    } else {
      CHECK(draw == env::derive_seed(seed, 23));  // the rest draw their own, as without focus
    }
  }
  CHECK(focus_episodes > 440);
  CHECK(focus_episodes < 560);
  config.focus_share = 0;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) CHECK(orchestra::cluster_draw_seed(config, seed) == env::derive_seed(seed, 23));

  config.focus_share = 1.5;
  CHECK_THROWS_WITH_AS(LocalSgdBarrierEnv{config}, doctest::Contains("focus_share: expected a share in [0, 1]"), std::invalid_argument);
  config.focus_share = 0.5;
  config.focus_draws.clear();
  CHECK_THROWS_WITH_AS(LocalSgdBarrierEnv{config}, doctest::Contains("focus_share: needs at least one focus cluster"), std::invalid_argument);
  config.focus_draws = {focus_a};
  config.distribution.reset();
  CHECK_THROWS_WITH_AS(LocalSgdBarrierEnv{config}, doctest::Contains("focus_draws: are draws of a cluster distribution"), std::invalid_argument);
}

TEST_CASE("RL env: exploring starts place T at T* times a seeded log-uniform factor, T* stays the reference") {
  auto config = small_config();
  config.controller.move = orchestra::BarrierMove::Multiplicative;
  config.controller.min_barrier_x_start = 0.125;
  config.controller.max_barrier_x_start = 32;
  LocalSgdBarrierEnv paper(config);
  config.exploring_start = {0.25, 8, true};
  LocalSgdBarrierEnv exploring(config);
  std::vector<double> factors;
  for (std::uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    CAPTURE(seed);
    const auto at_t_star = paper.reset(seed);  // same seed: same probes, same T*
    const auto start = exploring.reset(seed);
    const auto& c = exploring.controller();
    CHECK(c.start_barrier_ms() == doctest::Approx(at_t_star.info.barrier_ms));  // T* is still the start of record
    const double factor = start.info.barrier_ms / c.start_barrier_ms();
    CHECK(factor >= 0.25 - 1e-9);
    CHECK(factor <= 8 + 1e-9);
    factors.push_back(factor);
    // The plan and the state follow the placed T: tau_n from it, "T vs its start" = log2(factor) / 6.
    CHECK(entry(start.observation, L::kBarrierVsStart) == doctest::Approx(std::log2(factor) / 6).epsilon(1e-5));
    CHECK(exploring.reset(seed).info.barrier_ms == start.info.barrier_ms);  // the same factor for the same seed
    const auto step = exploring.step(+1);  // and moves go on from there
    CHECK(step.info.barrier_ms == doctest::Approx(std::min(2 * start.info.barrier_ms, c.max_barrier_ms())));
  }
  // Spread over the range: at least one start below T* and one above it among six seeds.
  CHECK(*std::min_element(factors.begin(), factors.end()) < 1.0);
  CHECK(*std::max_element(factors.begin(), factors.end()) > 1.0);

  config.exploring_start = {2, 1, true};
  CHECK_THROWS_WITH_AS(LocalSgdBarrierEnv{config}, doctest::Contains("exploring_start"), std::invalid_argument);
}

// The same environment on the surrogate of training (env/surrogate/): no data loaded, episodes
// ending as on real training, the same seed giving the same episode.
TEST_CASE("RL env on the surrogate: terminates at the target, truncates at the budget, repeats per seed") {
  LocalSgdBarrierEnvConfig config = small_config();
  config.surrogate = std::make_shared<const env::SurrogateModel>(testing::noisy_surrogate());
  config.controller.interval = orchestra::DecisionInterval::Rounds;
  config.budget.target_accuracy = 0.8;  // the surrogate's accuracy 0.9 - 0.3 ln L reaches it at L = 1.40
  LocalSgdBarrierEnv reach(config);
  CHECK(reach.data() == nullptr);
  const auto reached = run_episode(reach, 4, [](const std::vector<float>&) { return 0; });
  CHECK(reached.back().terminated);
  CHECK_FALSE(reached.back().truncated);
  CHECK(reached.back().info.accuracy >= 0.8);
  CHECK(reached.back().info.epoch < config.budget.max_epochs);

  // Out of reach: with a floor loss of 1 the accuracy stays below 0.9 (a floor of 0 would let the
  // accuracy map reach 1.0 once the loss is under e^(-1/3)).
  env::SurrogateModel floored = testing::noisy_surrogate();
  floored.curve.floor = 1.0;
  config.surrogate = std::make_shared<const env::SurrogateModel>(floored);
  config.budget.target_accuracy = 0.95;
  LocalSgdBarrierEnv never(config);
  const auto truncated = run_episode(never, 4, [](const std::vector<float>&) { return 1; });
  CHECK(truncated.back().truncated);
  CHECK_FALSE(truncated.back().terminated);
  CHECK(truncated.back().info.epoch == config.budget.max_epochs);

  const auto again = run_episode(never, 4, [](const std::vector<float>&) { return 1; });
  REQUIRE(again.size() == truncated.size());
  for (std::size_t k = 0; k < again.size(); ++k) {
    CHECK(again[k].observation == truncated[k].observation);
    CHECK(again[k].info.loss == truncated[k].info.loss);
  }
  const auto other = run_episode(never, 5, [](const std::vector<float>&) { return 1; });
  CHECK(other.back().info.loss != truncated.back().info.loss);
}

TEST_CASE("RL env on the surrogate: a surrogate of another workload is refused, naming the difference") {
  LocalSgdBarrierEnvConfig config = small_config();
  env::SurrogateModel other = testing::plain_surrogate();
  other.task.global_batch = 64;
  config.surrogate = std::make_shared<const env::SurrogateModel>(other);
  CHECK_THROWS_WITH_AS(LocalSgdBarrierEnv{config}, doctest::Contains("surrogate: the surrogate was fitted on global batch 64, this run uses 48"),
                       std::invalid_argument);
}
