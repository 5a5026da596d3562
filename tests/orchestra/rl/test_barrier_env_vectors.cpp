// Vectorized barrier-tuning environments (orchestra/rl/batched_barrier_envs.hpp,
// merged_barrier_env_vector.hpp): several episodes stepped as one follow each episode alone, repeat
// exactly, and keep one environment's error to itself.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestra/rl/batched_barrier_envs.hpp"
#include "orchestra/rl/merged_barrier_env_vector.hpp"
#include "orchestra/rl/small_barrier_env.hpp"

using orchestra::LocalSgdBarrierEnv;
using orchestra::LocalSgdBarrierEnvConfig;
using testing::small_config;

namespace {

// Three episodes' steps under fixed actions, by a vector of environments or by each alone.
struct Trajectory {
  std::vector<std::vector<float>> observations;
  std::vector<double> rewards, clocks;
};

std::vector<Trajectory> vector_run(const LocalSgdBarrierEnvConfig& config, const std::vector<std::uint64_t>& seeds,
                                   const std::vector<std::vector<int>>& actions, std::int64_t* merged_rounds = nullptr) {
  orchestra::BatchedBarrierEnvs environments(config, static_cast<int>(seeds.size()));
  std::vector<Trajectory> out(seeds.size());
  const auto starts = environments.reset(seeds);
  for (std::size_t k = 0; k < seeds.size(); ++k) out[k].observations.push_back(starts[k].observation);
  for (const auto& step_actions : actions) {
    const auto steps = environments.step(step_actions);
    for (std::size_t k = 0; k < seeds.size(); ++k) {
      out[k].observations.push_back(steps[k].observation);
      out[k].rewards.push_back(steps[k].reward);
      out[k].clocks.push_back(steps[k].info.clock_ms);
    }
  }
  if (merged_rounds) *merged_rounds = environments.batcher().merged_rounds();
  return out;
}

}  // namespace

TEST_CASE("vectorized environments: three episodes stepped as one follow each episode alone, and repeat exactly") {
  LocalSgdBarrierEnvConfig config = small_config();
  config.reward = LocalSgdBarrierEnvConfig::Reward::Time;
  config.controller.interval = orchestra::DecisionInterval::Rounds;  // several steps per epoch
  config.controller.interval_rounds = 2;
  const std::vector<std::uint64_t> seeds{5, 6, 7};
  const std::vector<std::vector<int>> actions{{0, 1, -1}, {1, 0, 0}, {-1, -1, 1}, {0, 0, 0}};
  std::int64_t merged = 0;
  const auto together = vector_run(config, seeds, actions, &merged);
  const auto again = vector_run(config, seeds, actions);
  std::int64_t rounds_alone = 0;  // every episode's rounds, each a round of local steps under LCM's plans
  for (std::size_t k = 0; k < seeds.size(); ++k) {
    CAPTURE(k);
    LocalSgdBarrierEnv alone(config);
    const auto start = alone.reset(seeds[k]);
    CHECK(start.observation == together[k].observations[0]);
    for (std::size_t t = 0; t < actions.size(); ++t) {
      CAPTURE(t);
      const auto step = alone.step(actions[t][k]);
      if (t + 1 == actions.size()) rounds_alone += step.info.rounds;
      // The simulated clock and the time reward do not depend on the gradients: equal exactly.
      CHECK(step.info.clock_ms == together[k].clocks[t]);
      CHECK(step.reward == together[k].rewards[t]);
      // The observation holds losses and accuracies, trained merged: within float reassociation.
      for (std::size_t i = 0; i < step.observation.size(); ++i)
        CHECK(together[k].observations[t + 1][i] == doctest::Approx(step.observation[i]).epsilon(1e-3));
    }
    // The same seeds and actions twice: the same observations, bit for bit, whatever the threads did.
    CHECK(together[k].observations == again[k].observations);
  }
  // The rounds ran merged: fewer merged computations than the episodes' rounds, several at a time.
  CHECK(merged > 0);
  CHECK(merged < rounds_alone);
}

TEST_CASE("vectorized environments: one environment's bad action fails the step with its error, without holding up the others") {
  orchestra::BatchedBarrierEnvs environments(small_config(), 3);
  environments.reset({1, 2, 3});
  CHECK_THROWS_WITH_AS(environments.step({0, 7, 0}), doctest::Contains("action must be -1, 0 or +1"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(environments.step({0, 0}), doctest::Contains("one action per environment (3), got 2"), std::invalid_argument);
  CHECK_THROWS_AS(orchestra::BatchedBarrierEnvs(small_config(), 0), std::invalid_argument);
  // The other two stepped; the vector goes on.
  CHECK(environments.env(0).controller().barrier_ms() > 0);
  CHECK_NOTHROW(environments.step({0, 0, 0}));
}

TEST_CASE("merged environments behind the learners' vector interface: the generic vector's episodes, auto-reset included") {
  LocalSgdBarrierEnvConfig config = small_config();
  config.reward = LocalSgdBarrierEnvConfig::Reward::Time;
  config.budget.max_epochs = 1;  // short episodes, so that auto-reset happens within the steps below
  const std::vector<std::uint64_t> streams = orchestra::stream_seeds(41, 2);
  orchestra::MergedBarrierEnvVector merged(std::make_unique<orchestra::BatchedBarrierEnvs>(config, 2));
  std::vector<std::unique_ptr<orchestra::BarrierEnv>> separate_envs;
  for (int k = 0; k < 2; ++k) separate_envs.push_back(std::make_unique<LocalSgdBarrierEnv>(config));
  orchestra::BarrierEnvVector separate(std::move(separate_envs));
  const auto a = merged.reset(streams);
  const auto b = separate.reset(streams);
  CHECK(a.observations.size() == b.observations.size());
  int ended = 0;
  for (int t = 0; t < 12; ++t) {
    CAPTURE(t);
    const std::vector<int> actions{t % 3 - 1, (t + 1) % 3 - 1};
    const orchestra::VectorStep x = merged.step(actions);
    const orchestra::VectorStep y = separate.step(actions);
    // The clock and the time reward do not depend on the gradients: equal exactly; so are the
    // episode boundaries as long as the target is not reached (small_config's is out of reach).
    CHECK(x.rewards == y.rewards);
    CHECK(x.terminated == y.terminated);
    CHECK(x.truncated == y.truncated);
    CHECK(x.episodes == y.episodes);
    for (std::size_t i = 0; i < x.observations.size(); ++i) CHECK(x.observations[i] == doctest::Approx(y.observations[i]).epsilon(1e-3));
    ended += x.done(0) + x.done(1);
  }
  CHECK(ended > 0);  // auto-reset was exercised
  CHECK(merged.episodes_started(0) == separate.episodes_started(0));
}
