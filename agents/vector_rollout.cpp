#include "agents/vector_rollout.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "agents/policy_file.hpp"

namespace agents {
namespace {

std::vector<float> row_of(const std::vector<float>& buffer, std::size_t row, std::size_t size) {
  return std::vector<float>(buffer.begin() + static_cast<std::ptrdiff_t>(row * size),
                            buffer.begin() + static_cast<std::ptrdiff_t>((row + 1) * size));
}

}  // namespace

VectorRolloutRunner::VectorRolloutRunner(orchestra::VectorBarrierEnv& env, const std::vector<std::uint64_t>& seeds)
    : env_(env), observation_size_(static_cast<std::size_t>(env.observation_size())) {
  observations_ = env_.reset(seeds).observations;
  const auto k = static_cast<std::size_t>(env_.num_envs());
  running_.assign(k, EpisodeStats{});
  partial_.assign(k, Rollout{});
  action_indices_.assign(k, 0);
}

orchestra::VectorStep VectorRolloutRunner::advance(const ActingNetwork& net, std::mt19937_64& rng) {
  const auto k = static_cast<std::size_t>(env_.num_envs());
  const int max_move = env_.max_move();
  const auto n_actions = static_cast<std::size_t>(net.spec().actions);
  if (static_cast<int>(n_actions) != orchestra::num_barrier_actions(max_move))
    throw std::invalid_argument("vector rollout: the network has " + std::to_string(n_actions) + " actions, the environments " +
                                std::to_string(orchestra::num_barrier_actions(max_move)));
  net.forward(observations_.data(), static_cast<int>(k), acting_);
  std::vector<int> actions(k);
  for (std::size_t j = 0; j < k; ++j) {
    const std::vector<double> probs(acting_.probabilities.begin() + static_cast<std::ptrdiff_t>(j * n_actions),
                                    acting_.probabilities.begin() + static_cast<std::ptrdiff_t>((j + 1) * n_actions));
    action_indices_[j] = sample_index(probs, rng);
    actions[j] = orchestra::action_from_index(action_indices_[j], max_move);
  }
  orchestra::VectorStep step = env_.step(actions);
  steps_ += static_cast<std::int64_t>(k);
  for (std::size_t j = 0; j < k; ++j) add_step(running_[j], step.rewards[j], step.infos[j]);
  return step;
}

std::vector<Rollout> VectorRolloutRunner::collect_segments(const ActingNetwork& net, int n_steps, int count, std::mt19937_64& rng) {
  if (n_steps < 1) throw std::invalid_argument("vector rollout: n_steps must be >= 1");
  if (count < 1) throw std::invalid_argument("vector rollout: count must be >= 1");
  std::vector<Rollout> complete;
  const auto k = static_cast<std::size_t>(env_.num_envs());
  while (static_cast<int>(complete.size()) < count) {
    orchestra::VectorStep step = advance(net, rng);
    const std::vector<float> before = std::exchange(observations_, std::move(step.observations));
    for (std::size_t j = 0; j < k; ++j) {
      Rollout& r = partial_[j];
      r.observations.push_back(row_of(before, j, observation_size_));
      r.action_indices.push_back(action_indices_[j]);
      r.rewards.push_back(step.rewards[j]);
      if (step.done(static_cast<int>(j))) {
        // The budget ends an episode for good, as in RolloutRunner::collect: no bootstrap.
        r.terminated = true;
        r.next_observation = row_of(step.final_observations, j, observation_size_);
        r.finished.push_back(running_[j]);
        running_[j] = EpisodeStats{};
      } else if (static_cast<int>(r.observations.size()) >= n_steps) {
        r.next_observation = row_of(observations_, j, observation_size_);
      } else {
        continue;
      }
      complete.push_back(std::move(r));
      r = Rollout{};
    }
  }
  return complete;
}

std::vector<PpoRollout> VectorRolloutRunner::collect_steps(const ActingNetwork& net, int steps, std::mt19937_64& rng) {
  if (steps < 1) throw std::invalid_argument("vector rollout: steps must be >= 1");
  const auto k = static_cast<std::size_t>(env_.num_envs());
  std::vector<PpoRollout> out(k);
  for (int i = 0; i < steps; ++i) {
    orchestra::VectorStep step = advance(net, rng);
    const std::vector<float> before = std::exchange(observations_, std::move(step.observations));
    for (std::size_t j = 0; j < k; ++j) {
      PpoRollout& r = out[j];
      const int a = action_indices_[j];
      r.observations.push_back(row_of(before, j, observation_size_));
      r.action_indices.push_back(a);
      const std::size_t n_actions = static_cast<std::size_t>(net.spec().actions);
      r.old_log_probs.push_back(std::log(std::max(acting_.probabilities[j * n_actions + static_cast<std::size_t>(a)], 1e-300)));
      r.values.push_back(acting_.values[j]);
      r.rewards.push_back(step.rewards[j]);
      r.dones.push_back(step.done(static_cast<int>(j)));
      if (step.done(static_cast<int>(j))) {
        r.finished.push_back(running_[j]);
        running_[j] = EpisodeStats{};
      }
    }
  }
  for (std::size_t j = 0; j < k; ++j) out[j].next_observation = row_of(observations_, j, observation_size_);
  return out;
}

}  // namespace agents
