// Deployment of a trained policy (`orchestra-a3c` in `orchestra run`): the BarrierController asks
// it for a move of T at the start of every epoch (Orchestra 3.1.3) and it answers with the most
// probable action of the network (greedy; exploration belongs to training).
#pragma once

#include <cstdint>
#include <memory>
#include <random>

#include "agents/policy_file.hpp"
#include "orchestra/barrier_agent.hpp"

namespace agents {

class GreedyBarrierAgent final : public orchestra::BarrierAgent {
 public:
  explicit GreedyBarrierAgent(A3cPolicy policy) : policy_(std::move(policy)) {}
  int act(const std::vector<float>& observation) override { return policy_.predict(observation, true); }
  const A3cPolicy& policy() const { return policy_; }

 private:
  A3cPolicy policy_;
};

}  // namespace agents

namespace agents {

// The same network, its action drawn from its probabilities (`actions: sampled`), from its own
// seed: what the agents did while they trained. A policy that learned "double T with probability
// 0.45" climbs under sampling and never moves under argmax, so the two can differ a lot.
class SampledBarrierAgent final : public orchestra::BarrierAgent {
 public:
  SampledBarrierAgent(A3cPolicy policy, std::uint64_t seed) : policy_(std::move(policy)), seed_(seed), rng_(seed) {}
  int act(const std::vector<float>& observation) override { return policy_.predict(observation, false, &rng_); }
  void start() override { rng_.seed(seed_); }

 private:
  A3cPolicy policy_;
  std::uint64_t seed_;
  std::mt19937_64 rng_;
};

}  // namespace agents

namespace agents {

// The baseline a learned controller must clearly beat (issue 5, "Learning, measured"): a move in
// [-max_move, +max_move] (-1, 0 or +1 by default) uniformly at random each epoch, from its own seed.
class RandomBarrierAgent final : public orchestra::BarrierAgent {
 public:
  explicit RandomBarrierAgent(std::uint64_t seed, int max_move = 1) : seed_(seed), max_move_(max_move), rng_(seed) {}
  int act(const std::vector<float>&) override {
    return static_cast<int>(rng_() % static_cast<std::uint64_t>(2 * max_move_ + 1)) - max_move_;
  }
  void start() override { rng_.seed(seed_); }

 private:
  std::uint64_t seed_;
  int max_move_;
  std::mt19937_64 rng_;
};

}  // namespace agents
