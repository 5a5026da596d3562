// A hand-made surrogate with round numbers, whose results after a round can be worked out by hand.
#pragma once

#include <memory>

#include "env/sim/batch_time_model.hpp"
#include "env/sim/cluster.hpp"
#include "env/surrogate/surrogate_model.hpp"

namespace testing {

// F(p) = 2 / (1 + p / 10), no drift penalty, no noise state, no noise: after tau steps at the
// reference batch the loss is 2 / (1 + tau / 10); accuracy 0.9 - 0.3 ln L.
inline env::SurrogateModel plain_surrogate() {
  env::SurrogateModel m;
  m.task = {"synthetic", 480, 160, "mlp [32]", 1000, 48, 0.05, 0.9, 0.0, "constant"};
  m.curve = {2.0, 0.0, 10.0, 1.0};
  m.progress = {16.0, 0.0, 10.0, 0.0, 0.0};
  m.noise.relaxation = 0.1;
  m.noise.level = 0;
  m.accuracy.coefficients = {0.9, -0.3};
  m.accuracy.log_loss_min = -3;
  m.accuracy.log_loss_max = 2;
  return m;
}

// The same with the noise state and every draw on: what seeds must tell apart.
inline env::SurrogateModel noisy_surrogate() {
  env::SurrogateModel m = plain_surrogate();
  m.noise = {0.1, 0.2, 1.0, 0.5, 0.05, 20.0, 1.0, 0.3, 0.0, 0.05};
  m.accuracy.residual_sd = 0.005;
  m.accuracy.residual_correlation = 0.5;
  m.train_loss = {0.02, 0.1};
  return m;
}

// Two workers on one server: t(16) = 4 ms and 8 ms.
inline env::ClusterSpec two_workers() {
  env::ClusterSpec c;
  c.server_names = {"s0"};
  auto fast = std::make_shared<const env::BatchTimeModel>(std::vector<double>{2.0, 0.125}, 64);
  auto slow = std::make_shared<const env::BatchTimeModel>(std::vector<double>{4.0, 0.25}, 64);
  c.workers = {{"fast", fast, 64, 0.0, 0, nullptr}, {"slow", slow, 64, 0.0, 0, nullptr}};
  return c;
}

}  // namespace testing
