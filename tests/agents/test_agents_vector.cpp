// Vectorized experience (issue 41): the vector environment's auto-reset and seeding, the plain-C++
// acting forward against libtorch's, the batched gradient against the sum of per-rollout ones, the
// learners of the table (one environment: exactly the agent of before), determinism, and the
// envs_per_agent option's errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "agents/a3c_options.hpp"
#include "agents/acting_network.hpp"
#include "agents/batched_gradient.hpp"
#include "agents/learner.hpp"
#include "agents/protocol.hpp"
#include "agents/rollout.hpp"
#include "agents/toy_barrier_env.hpp"
#include "agents/vector_rollout.hpp"
#include "common/errors.hpp"
#include "orchestra/vector_barrier_env.hpp"

namespace {

// An environment whose episodes differ in length: an episode reset with seed s lasts 1 + s % 4
// steps; the observation is (s % 1000, steps so far), the reward the step's number. It records
// every seed it was reset with.
class CountingEnv final : public orchestra::BarrierEnv {
 public:
  orchestra::ResetResult reset(std::uint64_t seed) override {
    seeds.push_back(seed);
    seed_ = seed;
    steps_ = 0;
    return {observe(), {}};
  }
  orchestra::StepResult step(int action) override {
    if (action < -1 || action > 1) throw std::invalid_argument("bad action");
    ++steps_;
    orchestra::StepResult r;
    r.reward = steps_ + 0.5 * action;
    r.terminated = steps_ >= length();
    r.info.epoch = steps_;
    r.observation = observe();
    return r;
  }
  int observation_size() const override { return 2; }
  int length() const { return 1 + static_cast<int>(seed_ % 4); }
  std::vector<std::uint64_t> seeds;

 private:
  std::vector<float> observe() const { return {static_cast<float>(seed_ % 1000), static_cast<float>(steps_)}; }
  std::uint64_t seed_ = 0;
  int steps_ = 0;
};

// Moves of two sizes (max_move 2): records every action it is given; episodes of 6 steps.
class TwoSizeMoveEnv final : public orchestra::BarrierEnv {
 public:
  orchestra::ResetResult reset(std::uint64_t) override {
    steps_ = 0;
    return {{0.0f, 0.0f}, {}};
  }
  orchestra::StepResult step(int action) override {
    if (action < -2 || action > 2) throw std::invalid_argument("bad action");
    actions.push_back(action);
    orchestra::StepResult r;
    r.terminated = ++steps_ >= 6;
    r.observation = {static_cast<float>(action), static_cast<float>(steps_)};
    return r;
  }
  int observation_size() const override { return 2; }
  int max_move() const override { return 2; }
  std::vector<int> actions;

 private:
  int steps_ = 0;
};

class OtherSizeEnv final : public orchestra::BarrierEnv {
 public:
  orchestra::ResetResult reset(std::uint64_t) override { return {{0.0f}, {}}; }
  orchestra::StepResult step(int) override { return {}; }
  int observation_size() const override { return 1; }
};

std::vector<float> random_rows(int rows, int size, std::uint64_t seed, float scale = 2.0f) {
  std::mt19937_64 rng(seed);
  std::vector<float> out(static_cast<std::size_t>(rows * size));
  for (float& x : out) x = (static_cast<float>(static_cast<double>(rng() >> 11) / 9007199254740992.0) * 2.0f - 1.0f) * scale;
  return out;
}

// A learner's link that records every push and stops after `limit` of them; each push moves the
// network by a fixed small step, standing in for the server's update.
class RecordingLink final : public agents::LearnerLink {
 public:
  RecordingLink(agents::ActorCritic& net, int limit) : net_(net), limit_(limit) {}
  bool push(const agents::GradientResult& g) override {
    pushes.push_back(g.gradient);
    std::vector<float> p = agents::flat_parameters(net_);
    for (std::size_t i = 0; i < p.size(); ++i) p[i] -= 0.01f * g.gradient[i];
    agents::set_flat_parameters(net_, p);
    return static_cast<int>(pushes.size()) < limit_;
  }
  void report(const std::vector<agents::EpisodeStats>& finished) override {
    for (const auto& e : finished) episodes.push_back(e);
  }
  std::vector<std::vector<float>> pushes;
  std::vector<agents::EpisodeStats> episodes;

 private:
  agents::ActorCritic& net_;
  int limit_;
};

agents::A3cOptions small_options() {
  agents::A3cOptions o;
  o.hidden = {16};
  o.n_steps = 4;
  return o;
}

// Runs the learner of `options.algorithm` on `envs` for `pushes` pushes from a network seeded by
// `net_seed`; returns the link's record.
struct Learned {
  std::vector<std::vector<float>> pushes;
  std::vector<agents::EpisodeStats> episodes;
  std::int64_t env_steps = 0;
};

Learned learn(const agents::A3cOptions& options, std::vector<orchestra::BarrierEnv*> envs, std::uint64_t seed, int pushes) {
  torch::manual_seed(3);
  agents::ActorCritic net(agents::ActorCriticSpec{envs.front()->observation_size(), options.hidden});
  auto learner = agents::find_learner(options.algorithm).make(agents::LearnerSetup{options, envs, seed});
  RecordingLink link(net, pushes);
  learner->learn(net, link);
  return {link.pushes, link.episodes, learner->env_steps()};
}

double largest_magnitude(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}

}  // namespace

TEST_CASE("vector env: auto-reset reports the ended episode and starts the next in the same step") {
  CountingEnv a, b;
  orchestra::BarrierEnvVector env(std::vector<orchestra::BarrierEnv*>{&a, &b});
  const std::vector<std::uint64_t> seeds = {100, 7};
  const orchestra::VectorReset first = env.reset(seeds);
  REQUIRE(first.observations.size() == 4);
  CHECK(a.seeds == std::vector<std::uint64_t>{orchestra::episode_seed(100, 0)});
  CHECK(b.seeds == std::vector<std::uint64_t>{orchestra::episode_seed(7, 0)});
  // Play 12 steps; each env's episodes must follow its own seeds, lengths 1 + seed % 4.
  for (int t = 0; t < 12; ++t) {
    const std::uint64_t a_before = a.seeds.back(), b_before = b.seeds.back();
    const std::uint64_t a_episode = env.episodes_started(0) - 1;
    const orchestra::VectorStep s = env.step({1, -1});
    REQUIRE(s.observations.size() == 4);
    REQUIRE(s.final_observations.size() == 4);
    for (int j = 0; j < 2; ++j) {
      const CountingEnv& e = j == 0 ? a : b;
      const std::uint64_t before = j == 0 ? a_before : b_before;
      CAPTURE(t);
      CAPTURE(j);
      const auto row = static_cast<std::size_t>(2 * j);
      if (s.done(j)) {
        // The last observation of the ended episode, then the new one's first (0 steps).
        CHECK(s.final_observations[row] == static_cast<float>(before % 1000));
        CHECK(s.final_observations[row + 1] == static_cast<float>(1 + before % 4));
        CHECK(e.seeds.back() == orchestra::episode_seed(seeds[static_cast<std::size_t>(j)], e.seeds.size() - 1));
        CHECK(s.observations[row] == static_cast<float>(e.seeds.back() % 1000));
        CHECK(s.observations[row + 1] == 0.0f);
        CHECK(s.infos[static_cast<std::size_t>(j)].epoch == static_cast<int>(1 + before % 4));
      } else {
        CHECK(s.final_observations[row] == 0.0f);
        CHECK(s.observations[row] == static_cast<float>(before % 1000));
        CHECK(e.seeds.back() == before);
      }
    }
    CHECK(s.episodes[0] == a_episode);
    CHECK(s.rewards[0] == doctest::Approx(s.infos[0].epoch + 0.5));
    CHECK(s.rewards[1] == doctest::Approx(s.infos[1].epoch - 0.5));
  }
  CHECK(env.episodes_started(0) == a.seeds.size());
  CHECK(env.episodes_started(1) == b.seeds.size());
  CHECK(a.seeds.size() >= 4);  // 12 steps of episodes of at most 4 steps
}

TEST_CASE("vector env seeding: episode e of env j is the same whatever K, and env 0 is the one-env runner's") {
  // The seed rule is the single-environment runner's: splitmix64(stream + episode).
  CHECK(orchestra::episode_seed(41, 3) == agents::splitmix64(44));
  CHECK(orchestra::stream_seeds(5, 3) == std::vector<std::uint64_t>{5, 5 + (1ULL << 32), 5 + (2ULL << 32)});
  CHECK(orchestra::stream_seeds(5, 1) == std::vector<std::uint64_t>{5});
  // Env j's trajectory (rewards, observations) under actions that depend only on (j, t).
  const auto trajectories = [](int k) {
    std::vector<std::unique_ptr<orchestra::BarrierEnv>> owned;
    for (int j = 0; j < k; ++j) owned.push_back(std::make_unique<agents::ToyBarrierEnv>());
    orchestra::BarrierEnvVector env(std::move(owned));
    std::vector<std::vector<float>> per_env(static_cast<std::size_t>(k));
    env.reset(orchestra::stream_seeds(99, k));
    for (int t = 0; t < 45; ++t) {  // 4 and a half toy episodes of 10 steps
      std::vector<int> actions;
      for (int j = 0; j < k; ++j) actions.push_back((j + t) % 3 - 1);
      const orchestra::VectorStep s = env.step(actions);
      for (std::size_t j = 0; j < static_cast<std::size_t>(k); ++j) {
        per_env[j].push_back(static_cast<float>(s.rewards[j]));
        per_env[j].insert(per_env[j].end(), s.observations.begin() + static_cast<std::ptrdiff_t>(j * 8),
                          s.observations.begin() + static_cast<std::ptrdiff_t>((j + 1) * 8));
      }
    }
    return per_env;
  };
  const auto one = trajectories(1), three = trajectories(3), five = trajectories(5);
  CHECK(one[0] == three[0]);
  CHECK(three[0] == five[0]);
  CHECK(three[1] == five[1]);
  CHECK(three[2] == five[2]);
  CHECK(five[3] != five[4]);  // and the streams differ
  // Env 0 plays the episodes a RolloutRunner of the same base seed plays.
  agents::ToyBarrierEnv in_vector;
  orchestra::BarrierEnvVector env(std::vector<orchestra::BarrierEnv*>{&in_vector});
  env.reset({1234});
  agents::ToyBarrierEnv reference;
  for (std::uint64_t e = 0; e < 3; ++e) {
    const orchestra::ResetResult r = reference.reset(agents::splitmix64(1234 + e));
    (void)r;
    for (int t = 0; t < 10; ++t) {
      const orchestra::StepResult expected = reference.step(0);
      const orchestra::VectorStep got = env.step({0});
      CHECK(got.rewards[0] == expected.reward);
      CHECK(got.infos[0].clock_ms == expected.info.clock_ms);
    }
  }
}

TEST_CASE("vector env: wrong counts, steps before reset and mixed observation sizes are refused") {
  agents::ToyBarrierEnv a, b;
  OtherSizeEnv other;
  CHECK_THROWS_AS(orchestra::BarrierEnvVector(std::vector<orchestra::BarrierEnv*>{}), std::invalid_argument);
  CHECK_THROWS_AS(orchestra::BarrierEnvVector(std::vector<orchestra::BarrierEnv*>{&a, nullptr}), std::invalid_argument);
  CHECK_THROWS_WITH_AS(orchestra::BarrierEnvVector(std::vector<orchestra::BarrierEnv*>{&a, &other}),
                       "vector env: environment 1 observes 1 values, environment 0 8", std::invalid_argument);
  orchestra::BarrierEnvVector env(std::vector<orchestra::BarrierEnv*>{&a, &b});
  CHECK_THROWS_WITH_AS(env.step({0, 0}), "vector env: step() before reset()", std::invalid_argument);
  CHECK_THROWS_AS(env.reset({1}), std::invalid_argument);
  env.reset({1, 2});
  CHECK_THROWS_AS(env.step({0}), std::invalid_argument);
  CHECK_THROWS_AS(env.step({0, 2}), std::invalid_argument);  // the environment's own check
}

TEST_CASE("the plain acting forward equals libtorch's, batched and one row at a time") {
  for (const std::vector<int>& hidden : {std::vector<int>{64, 64}, std::vector<int>{5, 19, 33}, std::vector<int>{16}})
  for (const int actions : {3, 5}) {  // moves of one size, and of two (max_move 2)
    CAPTURE(hidden.size());
    CAPTURE(actions);
    torch::manual_seed(11);
    const int size = 22, rows = 37;  // odd: a tile of 2 rows and a single one
    agents::ActorCritic net(agents::ActorCriticSpec{size, hidden, actions});
    agents::ActingNetwork plain(net->spec());
    plain.load(net);
    std::vector<float> obs = random_rows(rows, size, 5, 3.0f);
    obs[3] = 40.0f;  // far into tanh's flat tails
    obs[4] = -40.0f;
    agents::ActingOutput batched;
    plain.forward(obs.data(), rows, batched);
    REQUIRE(batched.probabilities.size() == static_cast<std::size_t>(rows * actions));
    torch::NoGradGuard no_grad;
    const agents::ActorCriticOutput reference = net->forward(torch::from_blob(obs.data(), {rows, size}, torch::kFloat));
    const torch::Tensor p = torch::softmax(reference.logits, -1).to(torch::kDouble).contiguous();
    const torch::Tensor v = reference.value.to(torch::kDouble).contiguous();
    for (int r = 0; r < rows; ++r) {
      agents::ActingOutput alone;
      plain.forward(obs.data() + r * size, 1, alone);
      for (int k = 0; k < actions; ++k) {
        const double expected = p.data_ptr<double>()[r * actions + k];
        CHECK(batched.probabilities[static_cast<std::size_t>(r * actions + k)] == doctest::Approx(expected).epsilon(1e-5));
        CHECK(alone.probabilities[static_cast<std::size_t>(k)] == doctest::Approx(batched.probabilities[static_cast<std::size_t>(r * actions + k)]).epsilon(1e-6));
      }
      CHECK(batched.values[static_cast<std::size_t>(r)] == doctest::Approx(v.data_ptr<double>()[r]).epsilon(1e-5).scale(1.0));
      CHECK(alone.values[0] == doctest::Approx(batched.values[static_cast<std::size_t>(r)]).epsilon(1e-6).scale(1.0));
    }
  }
  agents::ActingNetwork plain(agents::ActorCriticSpec{4, {8}});
  agents::ActorCritic other(agents::ActorCriticSpec{4, {9}});
  CHECK_THROWS_AS(plain.load(other), std::invalid_argument);
  agents::ActorCritic five(agents::ActorCriticSpec{4, {8}, 5});
  CHECK_THROWS_AS(plain.load(five), std::invalid_argument);
  CHECK_THROWS_AS(plain.load(std::vector<float>(3)), std::invalid_argument);
}

TEST_CASE("the batched gradient is the sum of the rollouts' gradients (1e-5 of the largest component)") {
  torch::manual_seed(7);
  agents::ActorCritic net(agents::ActorCriticSpec{agents::ToyBarrierEnv::kObservationSize, {16, 16}});
  agents::ToyBarrierEnv env;
  agents::RolloutRunner runner(env, 21);
  std::mt19937_64 rng(4);
  std::vector<agents::Rollout> rollouts;
  int terminal = 0;
  while (rollouts.size() < 7) {  // rollouts of 4, 4, 2 steps: bootstrapped ones and terminal ones
    rollouts.push_back(runner.collect(net, 4, rng));
    terminal += rollouts.back().terminated ? 1 : 0;
  }
  REQUIRE(terminal >= 1);
  REQUIRE(terminal < 7);
  agents::A3cOptions o;
  o.gamma = 0.9;
  o.max_grad_norm = 0;  // the sum itself, unclipped
  std::vector<float> sum(static_cast<std::size_t>(agents::parameter_count(net)), 0.0f);
  for (const auto& r : rollouts) {
    const std::vector<float> g = agents::rollout_gradient(net, r, o).gradient;
    for (std::size_t i = 0; i < g.size(); ++i) sum[i] += g[i];
  }
  const agents::GradientResult batched = agents::batched_rollout_gradient(net, rollouts, o);
  REQUIRE(batched.gradient.size() == sum.size());
  const double tolerance = 1e-5 * largest_magnitude(sum);
  REQUIRE(tolerance > 0);
  double worst = 0;
  for (std::size_t i = 0; i < sum.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(batched.gradient[i]) - sum[i]));
  CHECK(worst <= tolerance);
  // One rollout: rollout_gradient's own.
  const std::vector<float> one = agents::rollout_gradient(net, rollouts[1], o).gradient;
  const std::vector<float> one_batched = agents::batched_rollout_gradient(net, {rollouts[1]}, o).gradient;
  for (std::size_t i = 0; i < one.size(); ++i) CHECK(one_batched[i] == doctest::Approx(one[i]).epsilon(1e-5).scale(largest_magnitude(one)));
  // Clipped to half the sum's norm: the sum's direction at that norm (one clip of the sum, not one
  // per rollout).
  double sum_norm = 0;
  for (float x : sum) sum_norm += static_cast<double>(x) * x;
  sum_norm = std::sqrt(sum_norm);
  o.max_grad_norm = sum_norm / 2;
  const agents::GradientResult clipped = agents::batched_rollout_gradient(net, rollouts, o);
  double norm = 0;
  for (float x : clipped.gradient) norm += static_cast<double>(x) * x;
  CHECK(clipped.norm_before_clip == doctest::Approx(sum_norm).epsilon(1e-4));
  CHECK(std::sqrt(norm) == doctest::Approx(sum_norm / 2).epsilon(1e-4));
  for (std::size_t i = 0; i < sum.size(); ++i)
    CHECK(clipped.gradient[i] == doctest::Approx(sum[i] / 2).epsilon(1e-4).scale(largest_magnitude(sum)));
  CHECK_THROWS_AS(agents::batched_rollout_gradient(net, {}, o), std::invalid_argument);
}

TEST_CASE("vector rollouts: segments of at most n_steps, never across an episode, bootstrapped unless it ended") {
  torch::manual_seed(2);
  agents::ActorCritic net(agents::ActorCriticSpec{agents::ToyBarrierEnv::kObservationSize, {16}});
  agents::ActingNetwork acting(net->spec());
  acting.load(net);
  std::vector<std::unique_ptr<orchestra::BarrierEnv>> owned;
  for (int j = 0; j < 3; ++j) owned.push_back(std::make_unique<agents::ToyBarrierEnv>());
  orchestra::BarrierEnvVector env(std::move(owned));
  agents::VectorRolloutRunner runner(env, orchestra::stream_seeds(8, 3));
  std::mt19937_64 rng(1);
  std::size_t steps = 0, finished = 0;
  std::multiset<std::size_t> lengths;
  for (int call = 0; call < 10; ++call) {
    const std::vector<agents::Rollout> segments = runner.collect_segments(acting, 4, 3, rng);
    CHECK(segments.size() >= 3);
    for (const agents::Rollout& s : segments) {
      CHECK(s.observations.size() <= 4);
      CHECK(s.observations.size() == s.action_indices.size());
      CHECK(s.rewards.size() == s.action_indices.size());
      CHECK(s.next_observation.size() == 8u);
      CHECK(s.finished.size() == (s.terminated ? 1u : 0u));
      if (s.terminated) CHECK(s.finished[0].epochs == 10);  // a toy episode reaches its target in 10 epochs
      steps += s.observations.size();
      finished += s.finished.size();
      lengths.insert(s.observations.size());
    }
  }
  // Toy episodes last 10 steps: segments of 4, 4 and 2, the last one terminal.
  CHECK(lengths.count(2) == finished);
  CHECK(lengths.count(3) == 0);
  CHECK(static_cast<std::int64_t>(steps) <= runner.steps());
  CHECK(runner.steps() % 3 == 0);
}

TEST_CASE("moves of two sizes: a network of 5 outputs drives -2 ... +2, and a network of 3 is refused") {
  torch::manual_seed(4);
  TwoSizeMoveEnv a, b;
  orchestra::BarrierEnvVector env(std::vector<orchestra::BarrierEnv*>{&a, &b});
  CHECK(env.max_move() == 2);
  agents::ActorCritic five(agents::ActorCriticSpec{2, {8}, orchestra::num_barrier_actions(2)});
  agents::ActingNetwork acting(five->spec());
  acting.load(five);
  agents::VectorRolloutRunner runner(env, orchestra::stream_seeds(3, 2));
  std::mt19937_64 rng(9);
  const std::vector<agents::Rollout> segments = runner.collect_segments(acting, 6, 20, rng);
  std::set<int> moves(a.actions.begin(), a.actions.end());
  moves.insert(b.actions.begin(), b.actions.end());
  CHECK(moves == std::set<int>{-2, -1, 0, 1, 2});  // every move, the largest ones included
  for (const agents::Rollout& s : segments)  // the env observes the move it was given: index i is the move i - 2
    for (std::size_t t = 1; t < s.action_indices.size(); ++t) CHECK(s.observations[t][0] == static_cast<float>(s.action_indices[t - 1] - 2));
  agents::ActorCritic three(agents::ActorCriticSpec{2, {8}});
  agents::ActingNetwork narrow(three->spec());
  narrow.load(three);
  CHECK_THROWS_WITH_AS(runner.collect_segments(narrow, 6, 1, rng), "vector rollout: the network has 3 actions, the environments 5",
                       std::invalid_argument);
  CountingEnv paper_moves;  // the same observation size, moves of one size
  CHECK_THROWS_WITH_AS(orchestra::BarrierEnvVector(std::vector<orchestra::BarrierEnv*>{&a, &paper_moves}),
                       "vector env: environment 1 has moves up to 1, environment 0 up to 2", std::invalid_argument);
}

TEST_CASE("one environment per agent: the learners push exactly what the agent of before pushed") {
  // The agent before the learner table: rng splitmix64(seed), episodes from splitmix64(seed + 1),
  // one rollout_gradient per collect (A3C).
  const std::uint64_t seed = 77;
  agents::A3cOptions o = small_options();
  agents::ToyBarrierEnv env;
  const Learned learned = learn(o, {&env}, seed, 12);
  torch::manual_seed(3);
  agents::ActorCritic net(agents::ActorCriticSpec{agents::ToyBarrierEnv::kObservationSize, o.hidden});
  RecordingLink reference(net, 12);
  agents::ToyBarrierEnv env2;
  std::mt19937_64 rng(agents::splitmix64(seed));
  agents::RolloutRunner runner(env2, agents::splitmix64(seed + 1));
  bool going = true;
  while (going) {
    const agents::Rollout r = runner.collect(net, o.n_steps, rng);
    reference.report(r.finished);
    going = reference.push(agents::rollout_gradient(net, r, o));
  }
  CHECK(learned.pushes == reference.pushes);
  CHECK(learned.env_steps == runner.steps());
  CHECK(learned.episodes.size() == reference.episodes.size());

  // PPO: a rollout of ppo_rollout_steps steps, normalized GAE targets, shuffled minibatch passes.
  o.algorithm = "ppo";
  o.ppo_rollout_steps = 12;
  o.ppo_epochs = 2;
  o.ppo_minibatch = 5;
  agents::ToyBarrierEnv env3, env4;
  const Learned ppo = learn(o, {&env3}, seed, 10);
  torch::manual_seed(3);
  agents::ActorCritic net2(agents::ActorCriticSpec{agents::ToyBarrierEnv::kObservationSize, o.hidden});
  RecordingLink reference2(net2, 10);
  std::mt19937_64 rng2(agents::splitmix64(seed));
  agents::RolloutRunner runner2(env4, agents::splitmix64(seed + 1));
  going = true;
  while (going) {
    const agents::PpoRollout rollout = runner2.collect_steps(net2, o.ppo_rollout_steps, rng2);
    const agents::NStepTargets targets = agents::ppo_targets(net2, rollout, o);
    std::vector<std::size_t> order(rollout.observations.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (int epoch = 0; epoch < o.ppo_epochs && going; ++epoch) {
      for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[static_cast<std::size_t>(rng2() % i)]);
      for (std::size_t start = 0; start < order.size() && going; start += 5) {
        const std::size_t end = std::min(order.size(), start + 5);
        going = reference2.push(agents::ppo_gradient(net2, rollout, targets, {order.begin() + static_cast<std::ptrdiff_t>(start),
                                                                                   order.begin() + static_cast<std::ptrdiff_t>(end)}, o));
      }
    }
  }
  CHECK(ppo.pushes == reference2.pushes);
}

TEST_CASE("K environments per agent: deterministic for one seed, K rollouts per push, episodes reported") {
  for (const char* algorithm : {"a3c", "ppo"}) {
    CAPTURE(algorithm);
    agents::A3cOptions o = small_options();
    o.algorithm = algorithm;
    o.envs_per_agent = 4;
    if (o.algorithm == "ppo") {
      o.ppo_rollout_steps = 8;
      o.ppo_epochs = 2;
      o.ppo_minibatch = 8;
    }
    const auto run = [&](std::uint64_t seed) {
      std::vector<agents::ToyBarrierEnv> envs(4);
      return learn(o, {&envs[0], &envs[1], &envs[2], &envs[3]}, seed, 9);
    };
    const Learned a = run(5), b = run(5), c = run(6);
    CHECK(a.pushes.size() == 9);
    CHECK(a.pushes == b.pushes);
    CHECK(a.env_steps == b.env_steps);
    CHECK(a.pushes != c.pushes);
    if (o.algorithm == "a3c") {
      // 9 pushes of at least 4 rollouts of at most 4 steps; the toy's 10-step episodes end in 3 rollouts.
      CHECK(a.env_steps >= 9 * 4 * 2);
      CHECK(a.episodes.size() >= 9 * 4 / 3);
    } else {
      // A rollout is 8 steps of each of 4 environments: 32 samples, 4 minibatches, 2 passes.
      CHECK(a.env_steps == 2 * 32);
      CHECK(a.episodes.size() == 4 * 1);  // 16 steps of each env: one 10-step episode each
    }
  }
}

TEST_CASE("the learner table: names, help, the default, and keys of another learner refused") {
  CHECK(agents::learner_names() == std::vector<std::string>{"a3c", "ppo"});
  CHECK(agents::A3cOptions{}.algorithm == agents::learner_names().front());
  for (const auto& kind : agents::learner_registry()) {
    CHECK(agents::learner_help().find(kind.name) != std::string::npos);
    CHECK(agents::learner_help().find(kind.summary) != std::string::npos);
    CHECK(&agents::find_learner(kind.name) == &kind);
  }
  CHECK_THROWS_WITH_AS(agents::find_learner("dqn"), "unknown learner 'dqn' (known: a3c, ppo)", std::invalid_argument);
  agents::A3cOptions o;
  o.algorithm = "dqn";
  CHECK_THROWS_AS(agents::validate(o), std::invalid_argument);
}

TEST_CASE("a3c.envs_per_agent: default 1, read, and bad values name file:line and the key") {
  CHECK(agents::read_a3c_options(YAML::Node(), "x.yaml").envs_per_agent == 1);
  CHECK(agents::read_a3c_options(YAML::Load("a3c:\n  envs_per_agent: 64\n")["a3c"], "t.yaml").envs_per_agent == 64);
  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  seed: 1\n  envs_per_agent: 0\n")["a3c"], "t.yaml"),
                       "t.yaml:3: a3c.envs_per_agent: expected a positive integer, got 0", common::ConfigError);
  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  envs_per_agent: -4\n")["a3c"], "t.yaml"),
                       "t.yaml:2: a3c.envs_per_agent: expected a positive integer, got -4", common::ConfigError);
  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  envs_per_agent: 2.5\n")["a3c"], "t.yaml"),
                       "t.yaml:2: a3c.envs_per_agent: expected a positive integer, got '2.5'", common::ConfigError);
  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  envs_per_agent: many\n")["a3c"], "t.yaml"),
                       "t.yaml:2: a3c.envs_per_agent: expected a positive integer, got 'many'", common::ConfigError);
  CHECK_THROWS_WITH_AS(agents::read_a3c_options(YAML::Load("a3c:\n  envs_per_agent: 100000\n")["a3c"], "t.yaml"),
                       "t.yaml:2: a3c.envs_per_agent: expected an integer <= 65536, got 100000", common::ConfigError);
}

TEST_CASE("protocol: one Episode message carries several episodes") {
  agents::EpisodeStats a, b;
  a.total_reward = -3.5;
  a.epochs = 7;
  a.reached_target = true;
  a.time_to_target_ms = 120;
  a.clock_ms = 130;
  b.total_reward = 1;
  b.epochs = 30;
  b.clock_ms = 900;
  const std::vector<float> values = agents::episode_values(std::vector<agents::EpisodeStats>{a, b});
  CHECK(values.size() == 2 * agents::kEpisodeValues);
  const std::vector<agents::EpisodeStats> back = agents::episodes_from_values(values);
  REQUIRE(back.size() == 2);
  CHECK(back[0].total_reward == -3.5);
  CHECK(back[0].reached_target);
  CHECK(back[0].time_to_target_ms == 120);
  CHECK(back[1].epochs == 30);
  CHECK(std::isnan(back[1].time_to_target_ms));
  CHECK(agents::episodes_from_values(std::vector<float>(7, 1.0f)).empty());
  CHECK(agents::episodes_from_values({}).empty());
  // A peer's values out of their ranges drop the whole message (one bad episode of two included).
  const std::vector<std::vector<float>> garbage = {
      {1e38f, 3e38f, 1, -5, 1e38f},  // epochs far past an int, reached with a negative time
      {0, 2.5f, 0, -1, 10},          // epochs not a whole number
      {0, 2, 0.5f, -1, 10},          // a flag that is not 0 or 1
      {0, 2, 1, -1, 10},             // reached, with no time
      {0, 2, 0, -3, 10},             // a negative time that is not the -1 of none
      {0, 2, 0, -1, -10},            // a negative clock
      {2e9f, 2, 0, -1, 10},          // a reward of no episode's size
  };
  for (const auto& bad : garbage) {
    CAPTURE(bad[1]);
    CHECK(agents::episodes_from_values(bad).empty());
    std::vector<float> two = values;
    two.insert(two.end(), bad.begin(), bad.end());
    CHECK(agents::episodes_from_values(two).empty());
  }
}
