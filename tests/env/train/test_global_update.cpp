// FedNova's normalized average and the outer optimizer, on one-number models worked out by hand.
#include <doctest/doctest.h>

#include "env/train/global_update.hpp"

namespace {

std::vector<torch::Tensor> scalar(double v) { return {torch::tensor({v}, torch::kFloat64)}; }
double value(const std::vector<torch::Tensor>& t) { return t[0].item<double>(); }

// Workers 0 and 1 with weights p and `steps` local steps each.
env::GlobalAverage pair(std::vector<double> p, std::vector<int> steps, bool fednova) {
  env::GlobalAverage g;
  g.members = {0, 1};
  g.weights = std::move(p);
  g.steps = std::move(steps);
  g.fednova = fednova;
  return g;
}

// The sum a real run all-reduces: every worker's term, then the global model from the sum.
std::vector<torch::Tensor> across_ranks(const env::GlobalAverage& g, double rho, const std::vector<torch::Tensor>& x_t,
                                        const std::vector<std::vector<torch::Tensor>>& workers) {
  std::vector<torch::Tensor> sum = env::global_term(g, rho, 0, x_t, workers[0]);
  for (std::size_t i = 1; i < workers.size(); ++i) sum[0] = sum[0] + env::global_term(g, rho, static_cast<int>(i), x_t, workers[i])[0];
  return env::global_from_sum(g, rho, x_t, sum);
}

}  // namespace

TEST_CASE("fednova: a_i is tau_i without momentum, and what tau_i momentum steps amount to with it") {
  CHECK(env::fednova_effective_steps(4, 0.0) == doctest::Approx(4));
  CHECK(env::fednova_effective_steps(1, 0.9) == doctest::Approx(1));    // one step from a zero buffer
  CHECK(env::fednova_effective_steps(2, 0.9) == doctest::Approx(2.9));  // 1 + (1 + 0.9)
  CHECK(env::fednova_effective_steps(3, 0.5) == doctest::Approx(1 + 1.5 + 1.75));
  CHECK(env::fednova_effective_steps(0, 0.9) == 0);
}

TEST_CASE("fednova: two workers with unequal steps, by hand") {
  // x_t = 1; worker 1 took 1 step to 0.8, worker 2 took 4 steps to 0.4; p = 1/2 each.
  // Plain average: 0.6. FedNova: tau_eff = (1 + 4) / 2 = 2.5; the normalized updates 0.2 / 1 and
  // 0.6 / 4 average to 0.175; x = 1 - 2.5 * 0.175 = 0.5625: the 4-step worker no longer pulls the
  // model four times as far.
  const auto x_t = scalar(1.0);
  const std::vector<std::vector<torch::Tensor>> workers = {scalar(0.8), scalar(0.4)};
  CHECK(value(env::combine(pair({0.5, 0.5}, {1, 4}, false), 0.0, x_t, workers)) == doctest::Approx(0.6));
  CHECK(pair({0.5, 0.5}, {1, 4}, true).tau_eff(0.0) == doctest::Approx(2.5));
  CHECK(value(env::combine(pair({0.5, 0.5}, {1, 4}, true), 0.0, x_t, workers)) == doctest::Approx(0.5625));
  // Equal steps: FedNova is the plain weighted average.
  CHECK(value(env::combine(pair({0.25, 0.75}, {3, 3}, true), 0.0, x_t, workers)) == doctest::Approx(0.25 * 0.8 + 0.75 * 0.4));
}

TEST_CASE("the global model is one sum: in one process (the simulator) and term by term across ranks (a real run) alike") {
  const auto x_t = scalar(1.0);
  const std::vector<std::vector<torch::Tensor>> workers = {scalar(0.8), scalar(0.4)};
  for (const bool fednova : {false, true})
    for (const double rho : {0.0, 0.9}) {
      CAPTURE(fednova);
      CAPTURE(rho);
      const env::GlobalAverage g = pair({0.3, 0.7}, {2, 5}, fednova);
      CHECK(value(across_ranks(g, rho, x_t, workers)) == doctest::Approx(value(env::combine(g, rho, x_t, workers))).epsilon(1e-12));
    }
  // By hand, FedNova with rho 0.9: a = (2.9, 13.1441), and tau_eff is their p-weighted sum.
  const env::GlobalAverage g = pair({0.3, 0.7}, {2, 5}, true);
  const double a0 = env::fednova_effective_steps(2, 0.9), a1 = env::fednova_effective_steps(5, 0.9);
  CHECK(a0 == doctest::Approx(2.9));
  CHECK(a1 == doctest::Approx(13.1441));
  CHECK(g.tau_eff(0.9) == doctest::Approx(0.3 * a0 + 0.7 * a1));
  CHECK(value(across_ranks(g, 0.9, x_t, workers)) == doctest::Approx(1 - g.tau_eff(0.9) * (0.3 * 0.2 / a0 + 0.7 * 0.6 / a1)));
  // A worker outside the average adds nothing.
  CHECK(value(env::global_term(g, 0.9, 5, x_t, scalar(0.1))) == 0.0);
  CHECK(value(env::global_term(pair({0.3, 0.7}, {2, 5}, false), 0.9, 5, x_t, scalar(0.1))) == 0.0);
}

TEST_CASE("outer optimizer: Nesterov momentum on the pseudo-gradient over two rounds, by hand") {
  env::OuterOptimizer o;
  o.lr = 0.7;
  o.momentum = 0.9;
  o.nesterov = true;
  env::OuterState state;
  // Round 1: x_t = 1, average 0.6: delta 0.4, m = 0.4, step 0.4 + 0.9 * 0.4 = 0.76, x = 1 - 0.7 * 0.76.
  const double first = value(state.step(scalar(1.0), scalar(0.6), o));
  CHECK(first == doctest::Approx(0.468));
  // Round 2: x_t = 0.468, average 0.368: delta 0.1, m = 0.9 * 0.4 + 0.1 = 0.46, step 0.1 + 0.9 * 0.46.
  CHECK(value(state.step(scalar(first), scalar(first - 0.1), o)) == doctest::Approx(0.468 - 0.7 * 0.514));
  CHECK(value(state.momentum()) == doctest::Approx(0.46));
  // lr 1, momentum 0: plain averaging.
  env::OuterState plain;
  CHECK(value(plain.step(scalar(1.0), scalar(0.6), env::OuterOptimizer{})) == doctest::Approx(0.6));
  // Heavy ball (no Nesterov): the step is the buffer.
  env::OuterState heavy;
  env::OuterOptimizer h{0.5, 0.5, false};
  heavy.step(scalar(1.0), scalar(0.8), h);                                       // m = 0.2
  CHECK(value(heavy.step(scalar(0.9), scalar(0.8), h)) == doctest::Approx(0.9 - 0.5 * (0.5 * 0.2 + 0.1)));
}
