// The surrogate of training (env/surrogate/surrogate_model.hpp, surrogate_env.hpp): hand-made
// surrogates whose loss after a round is worked out by hand, through the arithmetic alone and
// through SurrogateEnv driven by env::Simulation; determinism; plans it does not model.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "common/errors.hpp"
#include "env/surrogate/surrogate_env.hpp"
#include "env/surrogate/surrogate_model.hpp"
#include "surrogate_fixture.hpp"

namespace {

env::SurrogateEnv make_env(const env::SurrogateModel& model, std::uint64_t seed) {
  env::SurrogateEnvSpec spec;
  spec.simulation.cluster = testing::two_workers();
  spec.simulation.global_batch = 32;
  return env::SurrogateEnv(spec, std::make_shared<const env::SurrogateModel>(model), seed);
}

env::RoundPlan averaging_plan(int batch, int steps) {
  env::RoundPlan plan;
  plan.aggregation = env::Aggregation::ModelAverage;
  plan.workers = {{batch, steps}, {batch, steps}};
  return plan;
}

}  // namespace

TEST_CASE("surrogate: the loss curve, the accuracy map and a plain average, by hand") {
  const env::SurrogateModel m = testing::plain_surrogate();
  CHECK(m.curve.at(0) == doctest::Approx(2.0));
  CHECK(m.curve.at(10) == doctest::Approx(1.0));
  CHECK(m.accuracy.at(1.0) == doctest::Approx(0.9));
  const env::SurrogateDynamics dynamics(m);
  env::ReplicaState a, b;
  dynamics.advance(a, 5, 16, 1.0);
  dynamics.advance(b, 5, 16, 1.0);
  env::GlobalState global;
  dynamics.observe(global, dynamics.average({&a, &b}, {0.5, 0.5}, nullptr), nullptr);
  CHECK(global.loss == doctest::Approx(2.0 / 1.5));                        // F(5) = 2 / (1 + 5 / 10)
  CHECK(global.accuracy == doctest::Approx(0.9 - 0.3 * std::log(2.0 / 1.5)));
}

TEST_CASE("surrogate: the accuracy's steps gain, by hand, from the averaged members' mean local steps") {
  env::SurrogateModel m = testing::plain_surrogate();
  CHECK(m.accuracy.at(1.0, 63) == doctest::Approx(0.9));  // no gain: the loss's alone
  m.accuracy.steps_gain = 0.01;
  m.accuracy.steps_reference = 3;
  CHECK(m.accuracy.at(1.0, 3) == doctest::Approx(0.9));   // up to the reference it adds nothing
  CHECK(m.accuracy.at(1.0, 0) == doctest::Approx(0.9));
  CHECK(m.accuracy.at(1.0, 15) == doctest::Approx(0.9 + 0.01 * (std::log(16.0) - std::log(4.0))));
  const env::SurrogateDynamics dynamics(m);
  env::ReplicaState a, b;
  dynamics.advance(a, 15, 16, 1.0);
  dynamics.advance(b, 3, 16, 1.0);
  // Weights 3/4 and 1/4: the model came from 0.75 * 15 + 0.25 * 3 = 12 steps a member.
  const env::ReplicaState avg = dynamics.average({&a, &b}, {0.75, 0.25}, nullptr);
  CHECK(avg.round_steps == doctest::Approx(12.0));
  env::GlobalState global;
  dynamics.observe(global, avg, nullptr);
  CHECK(global.accuracy == doctest::Approx(m.accuracy.at(global.loss, 0) + 0.01 * (std::log(13.0) - std::log(4.0))));
  m.accuracy.steps_reference = -1;
  CHECK_THROWS_WITH_AS(env::validate(m), doctest::Contains("accuracy.steps_reference"), std::invalid_argument);
}

TEST_CASE("surrogate: the drift penalty and the noise of an average, by hand") {
  env::SurrogateModel m = testing::plain_surrogate();
  m.progress.drift_exponent = 1;  // e = (1 + d / 10)^-1
  m.noise = {0.1, 0.2, 1.0, 0.5, 0.05, 20.0, 1.0, 0.0, 0.0, 0.0};
  const env::SurrogateDynamics dynamics(m);
  env::ReplicaState a, b;
  dynamics.advance(a, 5, 16, 1.0);
  dynamics.advance(b, 5, 16, 1.0);
  // Each replica: a^5 = exp(-0.5), fresh noise xi = 0.2 (1 - exp(-0.5)), drift 5.
  const double xi = 0.2 * (1 - std::exp(-0.5));
  CHECK(a.fresh == doctest::Approx(xi));
  CHECK(a.drift == doctest::Approx(5.0));
  const env::ReplicaState avg = dynamics.average({&a, &b}, {0.5, 0.5}, nullptr);
  // p = (1 + 5 / 10)^-1 * 5; noise = xi / 2 + (1 - 1/2) (0.5 xi + 0.05 r / (1 + r)), r = 5 / 20.
  CHECK(avg.progress == doctest::Approx(5.0 / 1.5));
  const double noise = xi / 2 + 0.5 * (0.5 * xi + 0.05 * 0.25 / 1.25);
  CHECK(avg.noise() == doctest::Approx(noise));
  env::GlobalState global;
  dynamics.observe(global, avg, nullptr);
  CHECK(global.loss == doctest::Approx(1.5 + noise));  // F(10 / 3) = 2 / (4 / 3)
  // One replica alone keeps all of its fresh noise (sum w^2 = 1), as a worker that trains the
  // global model alone at an epoch's end does.
  const env::ReplicaState alone = dynamics.average({&a}, {1.0}, nullptr);
  CHECK(alone.noise() == doctest::Approx(xi));
}

TEST_CASE("surrogate: the barrier between drifted replicas is shed at its own rate (k = 1: with the rest of the noise)") {
  env::SurrogateModel m = testing::plain_surrogate();
  m.noise = {0.1, 0.2, 1.0, 0.5, 0.05, 20.0, 1.0, 0.0, 0.0, 0.0};  // as in the test above
  const double xi = 0.2 * (1 - std::exp(-0.5));
  const double barrier = 0.5 * 0.05 * 0.25 / 1.25;  // (1 - sum w^2) q r / (1 + r), r = 5 / 20
  const double rest = xi / 2 + 0.5 * 0.5 * xi;      // sum w^2 xi + (1 - sum w^2) c xi
  for (const double k : {1.0, 10.0}) {
    CAPTURE(k);
    m.noise.penalty_speedup = k;
    const env::SurrogateDynamics dynamics(m);
    env::ReplicaState a, b;
    dynamics.advance(a, 5, 16, 1.0);
    dynamics.advance(b, 5, 16, 1.0);
    const env::ReplicaState avg = dynamics.average({&a, &b}, {0.5, 0.5}, nullptr);
    CHECK(avg.penalty == doctest::Approx(barrier));
    CHECK(avg.noise() == doctest::Approx(rest + barrier));  // right after the average k does not matter
    // Three steps from the average: the rest decays by exp(-0.3), the barrier by exp(-0.3 k), and
    // fresh noise gathers towards the level 0.2.
    env::ReplicaState r = avg;
    dynamics.advance(r, 3, 16, 1.0);
    CHECK(r.noise() == doctest::Approx(rest * std::exp(-0.3) + barrier * std::exp(-0.3 * k) + 0.2 * (1 - std::exp(-0.3))));
    // What is left of the barrier is inherited by the next average like the rest of the noise.
    CHECK(dynamics.average({&r}, {1.0}, nullptr).noise() == doctest::Approx(r.noise()));
  }
}

// With no fresh noise (level 0) the barrier P between drifted replicas was added at each average
// and never shed: the loss climbed by it round after round, whatever k.
TEST_CASE("surrogate: with no fresh noise the barrier is shed all the same") {
  env::SurrogateModel m = testing::plain_surrogate();
  m.noise = {0.1, 0.0, 1.0, 0.5, 0.05, 20.0, 1.0, 0.0, 0.0, 0.0};  // the test above's, level 0
  const double barrier = 0.5 * 0.05 * 0.25 / 1.25;
  for (const double k : {1.0, 10.0}) {
    CAPTURE(k);
    m.noise.penalty_speedup = k;
    const env::SurrogateDynamics dynamics(m);
    env::ReplicaState a, b;
    dynamics.advance(a, 5, 16, 1.0);
    dynamics.advance(b, 5, 16, 1.0);
    env::ReplicaState r = dynamics.average({&a, &b}, {0.5, 0.5}, nullptr);
    CHECK(r.noise() == doctest::Approx(barrier));
    dynamics.advance(r, 3, 16, 1.0);
    CHECK(r.noise() == doctest::Approx(barrier * std::exp(-0.3 * k)));
  }
  // A steep exponent (r = (d / d_q)^eta overflows) saturates the barrier at q instead of a NaN.
  m.noise.penalty_speedup = 1;
  m.noise.divergence_exponent = 400;
  const env::SurrogateDynamics steep(m);
  env::ReplicaState a, b;
  steep.advance(a, 500, 16, 1.0);  // drift 500, d_q 20: r = 25^400
  steep.advance(b, 500, 16, 1.0);
  const env::ReplicaState avg = steep.average({&a, &b}, {0.5, 0.5}, nullptr);
  CHECK(std::isfinite(avg.noise()));
  CHECK(avg.penalty == doctest::Approx(0.5 * 0.05));
}

TEST_CASE("SurrogateEnv: one averaging round of the simulated cluster gives the hand-computed loss") {
  env::SurrogateEnv cluster = make_env(testing::plain_surrogate(), 3);
  CHECK(cluster.evaluate().loss == doctest::Approx(2.0));  // untrained: F(0)
  const env::RoundReport report = cluster.run_round(averaging_plan(16, 5));
  CHECK(report.workers[0].local_steps == 5);
  CHECK(report.workers[1].local_steps == 5);
  CHECK(cluster.evaluate().loss == doctest::Approx(2.0 / 1.5));
  CHECK(cluster.evaluate().accuracy == doctest::Approx(0.9 - 0.3 * std::log(2.0 / 1.5)));
  // Each step's training loss is the replica's loss before it: F(0), F(1), ..., F(4), per worker.
  double mean = 0;
  for (int p = 0; p < 5; ++p) mean += 2.0 / (1 + p / 10.0) / 5;
  CHECK(report.train_loss == doctest::Approx(mean));
}

TEST_CASE("SurrogateEnv: a gradient all-reduce round is one step of every member, averaged by B_i / B") {
  env::SurrogateEnv cluster = make_env(testing::plain_surrogate(), 3);
  env::RoundPlan plan;
  plan.workers = {{16, 1}, {32, 1}};
  cluster.run_round(plan);
  CHECK(cluster.evaluate().loss == doctest::Approx(2.0 / 1.1));  // every replica one step: p = 1
}

TEST_CASE("SurrogateEnv: the same seed gives the same episode, another seed another") {
  const auto episode = [](std::uint64_t seed) {
    env::SurrogateEnv cluster = make_env(testing::noisy_surrogate(), seed);
    std::vector<double> trace;
    for (int r = 0; r < 12; ++r) {
      const env::RoundReport report = cluster.run_round(averaging_plan(16, 3));
      trace.push_back(report.train_loss);
      trace.push_back(cluster.evaluate().loss);
      trace.push_back(cluster.evaluate().accuracy);
      if (report.epoch_end) cluster.finish_epoch();
    }
    return trace;
  };
  CHECK(episode(5) == episode(5));
  CHECK(episode(5) != episode(6));
}

TEST_CASE("SurrogateEnv: FedNova and an outer optimizer are not modelled") {
  env::SurrogateEnv cluster = make_env(testing::plain_surrogate(), 3);
  env::RoundPlan plan = averaging_plan(16, 2);
  plan.weighting = env::AverageWeighting::FedNova;
  CHECK_THROWS_WITH_AS(cluster.run_round(plan), doctest::Contains("not modelled"), common::PlanError);
  plan.weighting = env::AverageWeighting::Uniform;
  plan.outer = env::OuterOptimizer{0.7, 0.9, true};
  CHECK_THROWS_AS(cluster.run_round(plan), common::PlanError);
}

TEST_CASE("surrogate: parameters out of range are named") {
  env::SurrogateModel m = testing::plain_surrogate();
  CHECK_NOTHROW(env::validate(m));
  m.curve.floor = 3;  // above the initial loss
  CHECK_THROWS_WITH_AS(env::validate(m), doctest::Contains("curve.floor_loss"), std::invalid_argument);
  m = testing::plain_surrogate();
  m.noise.unrecovered = 1.5;
  CHECK_THROWS_WITH_AS(env::validate(m), doctest::Contains("noise.unrecovered"), std::invalid_argument);
  m = testing::plain_surrogate();
  m.progress.drift_scale = std::nan("");
  CHECK_THROWS_WITH_AS(env::validate(m), doctest::Contains("progress.drift_scale: not a finite number"), std::invalid_argument);
  m = testing::plain_surrogate();
  m.noise.penalty_speedup = 0;
  CHECK_THROWS_WITH_AS(env::validate(m), doctest::Contains("noise.penalty_speedup: expected a number > 0"), std::invalid_argument);
  m = testing::plain_surrogate();
  m.accuracy.coefficients.clear();
  CHECK_THROWS_WITH_AS(env::validate(m), doctest::Contains("accuracy.coefficients"), std::invalid_argument);
}
