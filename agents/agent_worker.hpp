// One A3C actor-learner (Mnih et al. 2016, Alg. S3) as a ZeroMQ DEALER: it joins the parameter
// server (Hello -> Welcome with its id, seed and the current parameters), then runs its learner
// (a3c.algorithm, agents/learner.hpp) on its own environments (a3c.envs_per_agent of them), which
// repeats: play with the current policy, push a gradient with the parameters' version, and take
// the server's reply (fresh parameters) as the next policy. It never waits for other agents, only
// for the server's answer, and that for at most reply_timeout_s. Finished episodes are reported
// (no reply awaited) for train.csv.
#pragma once

#include <zmq.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "agents/a3c_options.hpp"
#include "agents/curve_keys.hpp"
#include "agents/protocol.hpp"
#include "orchestra/barrier_env.hpp"
#include "orchestra/vector_barrier_env.hpp"

namespace agents {

struct AgentWorkerOptions {
  A3cOptions a3c;
  std::string connect;              // the server's endpoint
  std::optional<CurveKeys> curve;   // when the server uses CURVE
  std::ostream* log = nullptr;
};

enum class AgentExit {
  Stopped,        // the server said training is over
  ServerTimeout,  // no answer within reply_timeout_s
  Refused,        // the server refused the Hello (another network), or training was over before it joined
};

struct AgentResult {
  AgentExit exit = AgentExit::Stopped;
  std::uint32_t agent_id = 0;
  std::int64_t gradients_pushed = 0;
  std::int64_t env_steps = 0;
  std::int64_t episodes = 0;
  int rejoins = 0;  // joins after a server stopped early or restarted (StopReason)
  std::uint64_t last_params_version = 0;
};

class AgentWorker {
 public:
  // `env` is this agent's own environment, used only by this worker (a3c.envs_per_agent must be
  // 1; std::invalid_argument otherwise).
  AgentWorker(zmq::context_t& context, AgentWorkerOptions options, orchestra::BarrierEnv& env);
  // a3c.envs_per_agent environments of its own (std::invalid_argument for another count).
  AgentWorker(zmq::context_t& context, AgentWorkerOptions options, std::vector<std::unique_ptr<orchestra::BarrierEnv>> envs);
  // a3c.envs_per_agent environments already stepped as one (std::invalid_argument for another
  // count or a null one).
  AgentWorker(zmq::context_t& context, AgentWorkerOptions options, std::unique_ptr<orchestra::VectorBarrierEnv> vector);
  AgentResult run();

 private:
  void connect();
  void say(const std::string& line) const;
  // Hello until a Welcome (nullopt, with result.exit set, when refused or nothing answered).
  std::optional<Message> join(int observation_size, std::size_t count, AgentResult& result);

  AgentWorkerOptions options_;
  std::vector<std::unique_ptr<orchestra::BarrierEnv>> owned_;
  std::vector<orchestra::BarrierEnv*> envs_;
  std::unique_ptr<orchestra::VectorBarrierEnv> vector_;  // set instead of envs_ by the third constructor
  zmq::socket_t socket_;
};

const char* to_string(AgentExit exit);

}  // namespace agents
