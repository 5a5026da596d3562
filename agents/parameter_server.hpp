// The A3C parameter server (Mnih et al. 2016, Sec. 4: "asynchronous actor-learners ... update the
// shared parameters"; Orchestra 3.1.3: distributed A3C, one agent per environment): it holds the
// global network and its optimizer behind a ZeroMQ ROUTER socket, applies every gradient an agent
// pushes and answers it with the current parameters, so each agent pulls fresh weights without
// waiting for the others.
//
// Robustness: every receive is a bounded poll; a frame that does not decode, is oversized, carries
// a non-finite value, a gradient of the wrong size or one more than max_staleness updates old is
// dropped and counted (DropCounts), never applied and never fatal. An agent silent for
// agent_silence_s is reported once and left behind; one that speaks again is taken back. With no
// message at all for idle_timeout_s the server gives up, still writing its checkpoint.
//
// Files in out_dir: checkpoint.pt (atomic, every checkpoint_every updates and at the end),
// policy.pt (agents/policy_file.hpp, at the end), train.csv (a row every log_every updates).
#pragma once

#include <zmq.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <string>

#include "agents/a3c_options.hpp"
#include "agents/actor_critic.hpp"
#include "agents/curve_keys.hpp"
#include "agents/policy_file.hpp"
#include "agents/protocol.hpp"

namespace agents {

struct ParameterServerOptions {
  A3cOptions a3c;
  int observation_size = 0;
  std::string bind = "tcp://127.0.0.1:*";  // loopback unless CURVE keys are given
  std::optional<CurveKeys> curve;          // required for any non-loopback bind
  std::string out_dir;                     // empty: no files (tests of the transport)
  bool resume = false;                     // continue from out_dir/checkpoint.pt
  PolicyControl control;                   // recorded in policy.pt (agents/policy_file.hpp)
  std::map<std::string, std::string> training;  // likewise: config, algorithm, reward
  // What the training is (experiments/runner/training_identity.hpp): recorded in the checkpoint; a
  // resume whose identity differs from the checkpoint's is refused naming the keys. Null: none
  // recorded, nothing checked (tests of the transport, checkpoints written before it).
  nlohmann::json identity;
  std::ostream* log = nullptr;             // progress and warnings; nullptr: quiet
};

struct DropCounts {
  std::int64_t malformed = 0;
  std::int64_t oversized = 0;
  std::int64_t not_finite = 0;
  std::int64_t stale = 0;
  std::int64_t wrong_size = 0;
  std::int64_t unknown_agent = 0;
  std::int64_t total() const { return malformed + oversized + not_finite + stale + wrong_size + unknown_agent; }
};

enum class ServeOutcome {
  Finished,     // total_updates reached
  Stopped,      // request_stop() or the keep_going callback said no
  IdleTimeout,  // no agent spoke for idle_timeout_s
};

struct ServeResult {
  ServeOutcome outcome = ServeOutcome::Finished;
  std::int64_t updates = 0;
  std::int64_t start_updates = 0;  // where this run started (the checkpoint's counter on resume)
  std::int64_t episodes = 0;
  std::int64_t agents_joined = 0;
  std::int64_t agents_lost = 0;    // written off after agent_silence_s
  std::int64_t rescaled_gradients = 0;  // pushed above the agents' clip, applied at its norm
  DropCounts drops;
};

// Where training stands: the counters and, over the last stats_window episodes, what a row of
// train.csv says (the mean return and the time to target of those that reached it).
struct TrainingStats {
  std::int64_t updates = 0;
  std::int64_t total_updates = 0;
  std::int64_t episodes = 0;
  int window = 0;                       // episodes in the means (at most stats_window)
  double mean_return = 0;               // mean total reward; meaningless when window is 0
  int reached = 0;                      // of the window, episodes that reached the target
  double mean_time_to_target_ms = 0;    // over those; meaningless when reached is 0
  std::int64_t dropped = 0;
};

class ParameterServer {
 public:
  // Binds at once (so endpoint() is known before agents start). Throws std::invalid_argument for a
  // non-loopback bind without CURVE keys and common::DataError for a resume without a checkpoint.
  ParameterServer(zmq::context_t& context, ParameterServerOptions options);
  ~ParameterServer();

  std::string endpoint() const;  // the bound address, e.g. tcp://127.0.0.1:43817
  // Serves until total_updates, request_stop(), keep_going() returning false (called between
  // polls) or the idle timeout. Then writes the checkpoint and policy, and answers every agent that
  // asks (for up to 10 s or reply_timeout_s, until every known agent was answered or said goodbye,
  // and while drain_while() holds): training is over (total_updates reached, or request_stop()),
  // or this server stopped early (keep_going, the idle timeout: a `serve --resume` will follow,
  // and the agents join it again; StopReason).
  ServeResult serve(const std::function<bool()>& keep_going = {}, const std::function<bool()>& drain_while = {});
  void request_stop() { stop_requested_ = true; }  // thread-safe: ends training for good

  ActorCritic& network();  // the global network, brought up to date with the optimizer's tensor
  // Safe to read from another thread while serve() runs (tests and monitors poll it).
  std::int64_t updates() const { return updates_.load(); }
  const DropCounts& drops() const { return drops_; }
  // From the serving thread only, e.g. in serve()'s keep_going callback (progress lines).
  TrainingStats stats() const;

 private:
  struct AgentRecord {
    std::string identity;  // ROUTER routing id
    std::chrono::steady_clock::time_point last_seen;
    bool lost = false;
    bool left = false;
    std::uint64_t seed = 0;  // the one its Welcome gave
    bool pushed = false;     // a gradient came since that Welcome
  };
  using Clock = std::chrono::steady_clock;

  bool handle_one(bool finishing);
  void handle(const std::string& identity, const Message& message, bool finishing);
  StopReason finishing_reason() const;
  void reply(const std::string& identity, const Message& message);
  void apply_gradient(std::vector<float> gradient, std::uint32_t agent_id);
  void check_silence(Clock::time_point now);
  void write_checkpoint();
  void write_train_row();
  void open_train_csv();
  void say(const std::string& line);

  ParameterServerOptions options_;
  std::unique_ptr<ZapAuthenticator> zap_;
  zmq::socket_t socket_;
  ActorCritic net_{nullptr};
  // Every parameter of net_ in one tensor, the optimizer's only parameter: one Adam step is then a
  // handful of kernels over 10k floats instead of a handful per layer tensor (the step dominated the
  // server's round trip), and a reply is one copy of its data. net_ is synced from it on demand.
  torch::Tensor flat_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::vector<float> reply_values_;       // flat_ as floats at update reply_version_
  std::int64_t reply_version_ = -1;
  const std::vector<float>& current_values();
  std::int64_t param_count_ = 0;
  std::atomic<std::int64_t> updates_{0};  // written only by the serving thread
  std::int64_t start_updates_ = 0;
  std::int64_t episodes_ = 0;
  std::int64_t next_agent_id_ = 0;
  std::mt19937_64 rng_;
  std::deque<EpisodeStats> recent_;
  std::map<std::uint32_t, AgentRecord> agents_;
  DropCounts drops_;
  std::int64_t agents_lost_ = 0;
  std::int64_t rescaled_gradients_ = 0;
  Clock::time_point last_message_;
  std::atomic<bool> stop_requested_{false};
  std::ofstream train_csv_;
};

}  // namespace agents
