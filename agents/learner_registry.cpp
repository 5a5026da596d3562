// The table of learners (learner.hpp). Each maker lives in its learner's own file.
#include <cstdio>
#include <stdexcept>

#include "agents/learner.hpp"

namespace agents {

std::unique_ptr<Learner> make_a3c_learner(const LearnerSetup& setup);  // a3c_learner.cpp
std::unique_ptr<Learner> make_ppo_learner(const LearnerSetup& setup);  // ppo_learner.cpp

const std::vector<LearnerKind>& learner_registry() {
  static const std::vector<LearnerKind> table = {
      {"a3c", "A3C (Mnih et al. 2016): n-step actor-critic, one gradient per rollout (with envs_per_agent K: the sum over K rollouts)",
       make_a3c_learner},
      {"ppo", "PPO (Schulman et al. 2017): clipped surrogate and GAE, several minibatch passes over each rollout", make_ppo_learner,
       {"ppo_rollout_steps", "ppo_epochs", "ppo_minibatch", "ppo_clip", "gae_lambda"}},
  };
  return table;
}

std::vector<std::string> learner_names() {
  std::vector<std::string> names;
  for (const auto& kind : learner_registry()) names.emplace_back(kind.name);
  return names;
}

const LearnerKind& find_learner(const std::string& name) {
  for (const auto& kind : learner_registry())
    if (name == kind.name) return kind;
  std::string known;
  for (const auto& n : learner_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown learner '" + name + "' (known: " + known + ")");
}

std::string learner_help() {
  std::string out;
  for (const auto& kind : learner_registry()) {
    char line[512];
    std::snprintf(line, sizeof line, "  %-6s %s\n", kind.name, kind.summary);
    out += line;
  }
  return out;
}

}  // namespace agents
