#include "orchestra/rl/batched_barrier_envs.hpp"

#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

namespace orchestra {

BatchedBarrierEnvs::BatchedBarrierEnvs(LocalSgdBarrierEnvConfig config, int count, std::shared_ptr<const env::DatasetPair> data)
    : batcher_(std::make_shared<env::StepBatcher>()) {
  if (count < 1) throw std::invalid_argument("orchestra RL environment: a vector of environments needs at least one, got " + std::to_string(count));
  for (int k = 0; k < count; ++k) {
    LocalSgdBarrierEnvConfig c = config;
    c.batching = {batcher_, k};
    envs_.push_back(std::make_unique<LocalSgdBarrierEnv>(std::move(c), data));
    data = envs_.back()->data();  // loaded once, shared by the others
  }
}

ResetResult BatchedBarrierEnvs::reset(int k, std::uint64_t seed) {
  if (k < 0 || k >= size()) throw std::out_of_range("orchestra RL environment: no environment " + std::to_string(k) + " of " + std::to_string(size()));
  return envs_[static_cast<std::size_t>(k)]->reset(seed);
}

std::vector<ResetResult> BatchedBarrierEnvs::reset(const std::vector<std::uint64_t>& seeds) {
  if (static_cast<int>(seeds.size()) != size())
    throw std::invalid_argument("orchestra RL environment: reset(): one seed per environment (" + std::to_string(size()) + "), got " +
                                std::to_string(seeds.size()));
  std::vector<ResetResult> out;
  for (int k = 0; k < size(); ++k) out.push_back(reset(k, seeds[static_cast<std::size_t>(k)]));
  return out;
}

std::vector<StepResult> BatchedBarrierEnvs::step(const std::vector<int>& actions) {
  if (static_cast<int>(actions.size()) != size())
    throw std::invalid_argument("orchestra RL environment: step(): one action per environment (" + std::to_string(size()) + "), got " +
                                std::to_string(actions.size()));
  const auto n = envs_.size();
  std::vector<StepResult> results(n);
  std::vector<std::exception_ptr> errors(n);
  // Every environment takes part before any starts: a merge must never depend on which thread ran first.
  std::vector<std::unique_ptr<env::StepBatcher::Participation>> taking_part;
  for (std::size_t k = 0; k < n; ++k) taking_part.push_back(std::make_unique<env::StepBatcher::Participation>(*batcher_, static_cast<int>(k)));
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < n; ++k)
    threads.emplace_back([&, k] {
      // Leaves when its step is done (or failed), so that the others' merges go on without it.
      const std::unique_ptr<env::StepBatcher::Participation> mine = std::move(taking_part[k]);
      try {
        results[k] = envs_[k]->step(actions[k]);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

}  // namespace orchestra
