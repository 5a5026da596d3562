#include "orchestra/vector_barrier_env.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "common/splitmix64.hpp"

namespace orchestra {

std::uint64_t episode_seed(std::uint64_t stream, std::uint64_t episode) { return common::splitmix64(stream + episode); }

std::vector<std::uint64_t> stream_seeds(std::uint64_t base, int count) {
  std::vector<std::uint64_t> seeds(static_cast<std::size_t>(std::max(count, 0)));
  for (std::size_t j = 0; j < seeds.size(); ++j) seeds[j] = base + (static_cast<std::uint64_t>(j) << 32);
  return seeds;
}

BarrierEnvVector::BarrierEnvVector(std::vector<std::unique_ptr<BarrierEnv>> envs) : owned_(std::move(envs)) {
  for (const auto& e : owned_) envs_.push_back(e.get());
  check_envs();
}

BarrierEnvVector::BarrierEnvVector(std::vector<BarrierEnv*> envs) : envs_(std::move(envs)) { check_envs(); }

void BarrierEnvVector::check_envs() {
  if (envs_.empty()) throw std::invalid_argument("vector env: needs at least one environment");
  for (const BarrierEnv* e : envs_)
    if (e == nullptr) throw std::invalid_argument("vector env: a null environment");
  observation_size_ = envs_.front()->observation_size();
  for (std::size_t j = 1; j < envs_.size(); ++j)
    if (envs_[j]->observation_size() != observation_size_)
      throw std::invalid_argument("vector env: environment " + std::to_string(j) + " observes " +
                                  std::to_string(envs_[j]->observation_size()) + " values, environment 0 " +
                                  std::to_string(observation_size_));
  max_move_ = envs_.front()->max_move();
  for (std::size_t j = 1; j < envs_.size(); ++j)
    if (envs_[j]->max_move() != max_move_)
      throw std::invalid_argument("vector env: environment " + std::to_string(j) + " has moves up to " +
                                  std::to_string(envs_[j]->max_move()) + ", environment 0 up to " + std::to_string(max_move_));
}

StepInfo BarrierEnvVector::start_episode(std::size_t j, float* row) {
  ResetResult r = envs_[j]->reset(episode_seed(streams_[j], episodes_[j]));
  ++episodes_[j];
  if (static_cast<int>(r.observation.size()) != observation_size_)
    throw std::invalid_argument("vector env: environment " + std::to_string(j) + " reset to an observation of " +
                                std::to_string(r.observation.size()) + " values, expected " + std::to_string(observation_size_));
  std::copy(r.observation.begin(), r.observation.end(), row);
  return r.info;
}

VectorReset BarrierEnvVector::reset(const std::vector<std::uint64_t>& seeds) {
  if (seeds.size() != envs_.size())
    throw std::invalid_argument("vector env: reset needs one seed per environment (" + std::to_string(envs_.size()) + "), got " +
                                std::to_string(seeds.size()));
  streams_ = seeds;
  episodes_.assign(envs_.size(), 0);
  const auto size = static_cast<std::size_t>(observation_size_);
  VectorReset r;
  r.observations.resize(envs_.size() * size);
  r.infos.resize(envs_.size());
  for (std::size_t j = 0; j < envs_.size(); ++j) r.infos[j] = start_episode(j, r.observations.data() + j * size);
  return r;
}

std::vector<StepResult> BarrierEnvVector::step_envs(const std::vector<int>& actions) {
  std::vector<StepResult> results;
  results.reserve(envs_.size());
  for (std::size_t j = 0; j < envs_.size(); ++j) results.push_back(envs_[j]->step(actions[j]));
  return results;
}

VectorStep BarrierEnvVector::step(const std::vector<int>& actions) {
  if (streams_.empty()) throw std::invalid_argument("vector env: step() before reset()");
  if (actions.size() != envs_.size())
    throw std::invalid_argument("vector env: step needs one action per environment (" + std::to_string(envs_.size()) + "), got " +
                                std::to_string(actions.size()));
  const std::size_t k = envs_.size();
  const auto size = static_cast<std::size_t>(observation_size_);
  VectorStep s;
  s.observations.resize(k * size);
  s.rewards.resize(k);
  s.terminated.resize(k);
  s.truncated.resize(k);
  s.infos.resize(k);
  s.final_observations.assign(k * size, 0.0f);
  s.episodes.resize(k);
  std::vector<StepResult> results = step_envs(actions);
  for (std::size_t j = 0; j < k; ++j) {
    StepResult& r = results[j];
    if (r.observation.size() != size)
      throw std::invalid_argument("vector env: environment " + std::to_string(j) + " stepped to an observation of " +
                                  std::to_string(r.observation.size()) + " values, expected " + std::to_string(size));
    s.rewards[j] = r.reward;
    s.terminated[j] = r.terminated ? 1 : 0;
    s.truncated[j] = r.truncated ? 1 : 0;
    s.infos[j] = r.info;
    s.episodes[j] = episodes_[j] - 1;
    float* row = s.observations.data() + j * size;
    if (r.terminated || r.truncated) {
      std::copy(r.observation.begin(), r.observation.end(), s.final_observations.data() + j * size);
      start_episode(j, row);  // auto-reset: the row holds the next episode's first observation
    } else {
      std::copy(r.observation.begin(), r.observation.end(), row);
    }
  }
  return s;
}

}  // namespace orchestra
