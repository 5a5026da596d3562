// The parameter server's checkpoint: everything training needs to go on as if never stopped —
// the global network, the optimizer's state (Adam's moments / RMSProp's averages), the counters,
// the state of the server's random generator (which seeds the agents) and the recent episodes
// that train.csv averages. One libtorch archive (torch::save format, read back by C++ only: the
// Python-readable artifact is the policy file), written atomically.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agents/actor_critic.hpp"
#include "agents/rollout.hpp"

namespace agents {

struct CheckpointState {
  std::int64_t updates = 0;        // optimizer steps so far (the params version)
  std::int64_t episodes = 0;       // episodes reported so far
  std::int64_t next_agent_id = 0;  // ids are never reused, so a resumed run's agents are new ones
  std::string rng_state;           // std::mt19937_64 written with operator<<
  std::vector<EpisodeStats> recent;  // the train.csv window
  nlohmann::json identity;         // the training's config as far as it decides what is learned; null: not recorded
};

void save_checkpoint(const std::string& path, ActorCritic& net, const torch::optim::Optimizer& optimizer,
                     const CheckpointState& state);
// Loads into `net` and `optimizer` (built from the same spec and options). Throws
// common::DataError naming the path when the file is missing, unreadable, or of another network,
// and common::ConfigError naming the keys when it records an identity other than
// `expected_identity` (both not null) before anything is loaded.
CheckpointState load_checkpoint(const std::string& path, ActorCritic& net, torch::optim::Optimizer& optimizer,
                                const nlohmann::json& expected_identity = nullptr);

}  // namespace agents
