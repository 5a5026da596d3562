// How an agent learns: the extension point behind `a3c.algorithm`, a table like the policies'
// (experiments/registry/policy_registry.hpp). A Learner turns its environments' experience into
// gradients for the parameter server; the agent (agent_worker.hpp) owns the transport and hands
// the learner a LearnerLink to push through. Every learner runs on the same network, server,
// processes and files, and on one environment or on a3c.envs_per_agent of them stepped as one
// (vector_rollout.hpp).
//
// To add a learner (docs/ARCHITECTURE.md, "Adding things"): write agents/<name>_learner.cpp with a
// Learner and its maker, add the maker's declaration and one row to the table in
// agents/learner_registry.cpp, and the file to agents/CMakeLists.txt. `orchestra train --help` and
// the a3c.algorithm key's choices come from the table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agents/a3c_options.hpp"
#include "agents/actor_critic.hpp"
#include "agents/rollout.hpp"
#include "orchestra/barrier_env.hpp"
#include "orchestra/vector_barrier_env.hpp"

namespace agents {

// The transport to the parameter server, as a learner sees it.
class LearnerLink {
 public:
  virtual ~LearnerLink() = default;
  // Pushes a gradient taken at the network's current parameters and waits (bounded) for the
  // server's answer. True: `net` now holds the server's newest parameters. False: training is
  // over (or the server is gone); the learner returns.
  virtual bool push(const GradientResult& gradient) = 0;
  // Episodes that finished, for train.csv (one message, no reply awaited).
  virtual void report(const std::vector<EpisodeStats>& finished) = 0;
};

// What a learner is made from.
struct LearnerSetup {
  A3cOptions options;
  std::vector<orchestra::BarrierEnv*> envs;  // this agent's own, a3c.envs_per_agent of them; they outlive the learner
  std::uint64_t seed = 0;                    // the agent's seed, drawn by the server: every random choice derives from it
  // Set instead of `envs`: the agent's environments already stepped as one (the real environment's
  // merged training, orchestra/rl/merged_barrier_env_vector.hpp); it outlives the learner.
  orchestra::VectorBarrierEnv* vector = nullptr;
};

class Learner {
 public:
  virtual ~Learner() = default;
  // Collects experience with `net` and pushes gradients through `link` until a push says stop.
  virtual void learn(ActorCritic& net, LearnerLink& link) = 0;
  virtual std::int64_t env_steps() const = 0;
};

using LearnerMaker = std::unique_ptr<Learner> (*)(const LearnerSetup& setup);

struct LearnerKind {
  const char* name;     // as written in a3c.algorithm
  const char* summary;  // one line for `orchestra train --help`
  LearnerMaker make;
  std::vector<std::string> keys = {};  // a3c: keys only this learner reads (an error under another)
};

// Every learner, in the order --help lists them; the first is the default.
const std::vector<LearnerKind>& learner_registry();
std::vector<std::string> learner_names();
// The row of `name`; throws std::invalid_argument naming the known ones.
const LearnerKind& find_learner(const std::string& name);
// "  name   summary" lines, one per learner, for --help.
std::string learner_help();

}  // namespace agents
