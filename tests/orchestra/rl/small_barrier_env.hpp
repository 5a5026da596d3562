// The small cluster and task the barrier-tuning RL environment's tests run on (test_orchestra_rl.cpp,
// test_barrier_env_vectors.cpp).
#pragma once

#include <memory>
#include <vector>

#include "env/sim/batch_time_model.hpp"
#include "orchestra/rl/local_sgd_barrier_env.hpp"

namespace testing {

// One fast worker on its own server and two workers half as fast on another: t(16) = 3.6 ms and
// 7.2 ms. 480 synthetic samples, B = 16 each: an epoch is a handful of rounds and trains in
// milliseconds.
inline orchestra::LocalSgdBarrierEnvConfig small_config() {
  orchestra::LocalSgdBarrierEnvConfig c;
  auto fast = std::make_shared<const env::BatchTimeModel>(std::vector<double>{2.0, 0.1}, 64);
  auto slow = std::make_shared<const env::BatchTimeModel>(std::vector<double>{4.0, 0.2}, 64);
  c.cluster.server_names = {"s0", "s1"};
  c.cluster.workers = {{"fast", fast, 64, 0.03, 0, nullptr}, {"slow-0", slow, 64, 0.03, 1, nullptr}, {"slow-1", slow, 64, 0.03, 1, nullptr}};
  c.network.message_bytes = 2e5;  // a 2 ms all-reduce over gigabit Ethernet: the same order as a step
  c.training.model.arch = "mlp";
  c.training.model.hidden = {32};
  c.training.optimizer = {0.05, 0.9, 0.0};
  c.data.dataset = "synthetic";
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

}  // namespace testing
