#include "agents/agent_worker.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <stdexcept>

#include "agents/actor_critic.hpp"
#include "agents/protocol.hpp"
#include "agents/rollout.hpp"
#include "common/errors.hpp"

namespace agents {
namespace {

// The server's answer to our last request, skipping anything else (a late Params after a resend,
// or a frame we cannot read); nullopt when nothing usable came within the timeout.
std::optional<Message> await_reply(zmq::socket_t& socket, std::size_t max_values, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                                std::chrono::duration<double>(timeout_s));
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    zmq::pollitem_t item{static_cast<void*>(socket), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, left);
    if (!(item.revents & ZMQ_POLLIN)) continue;
    zmq::message_t frame;
    if (!socket.recv(frame, zmq::recv_flags::dontwait)) continue;
    const Decoded d = decode(frame.data(), frame.size(), max_values);
    if (d.drop != DropReason::None) continue;
    const MessageType t = d.message.type;
    if (t == MessageType::Welcome || t == MessageType::Params || t == MessageType::Stop) return d.message;
  }
}

void send(zmq::socket_t& socket, const Message& m) {
  const std::vector<char> bytes = encode(m);
  if (!socket.send(zmq::buffer(bytes), zmq::send_flags::none)) throw common::CommError("agent: send to the parameter server timed out");
}

}  // namespace

const char* to_string(AgentExit exit) {
  switch (exit) {
    case AgentExit::Stopped: return "stopped by the server";
    case AgentExit::ServerTimeout: return "no answer from the server";
    case AgentExit::Refused: return "refused by the server";
  }
  return "?";
}

AgentWorker::AgentWorker(zmq::context_t& context, AgentWorkerOptions options, orchestra::BarrierEnv& env)
    : options_(std::move(options)), env_(env), socket_(context, zmq::socket_type::dealer) {
  validate(options_.a3c);
  socket_.set(zmq::sockopt::linger, 1000);  // let the last Episode/Bye out, but never hang on exit
  socket_.set(zmq::sockopt::sndtimeo, static_cast<int>(options_.a3c.reply_timeout_s * 1000));
  if (options_.curve) make_curve_client(socket_, *options_.curve);
  socket_.connect(options_.connect);
}

void AgentWorker::say(const std::string& line) const {
  if (options_.log) *options_.log << line << std::endl;
}

AgentResult AgentWorker::run() {
  AgentResult result;
  ActorCritic net(ActorCriticSpec{env_.observation_size(), options_.a3c.hidden});
  const std::size_t count = static_cast<std::size_t>(parameter_count(net));
  send(socket_, Message{MessageType::Hello, 0, 0, static_cast<std::uint64_t>(env_.observation_size()),
                        {static_cast<float>(count)}});
  const std::optional<Message> welcome = await_reply(socket_, count, options_.a3c.reply_timeout_s);
  if (!welcome) {
    result.exit = AgentExit::ServerTimeout;
    return result;
  }
  if (welcome->type != MessageType::Welcome) {
    result.exit = welcome->type == MessageType::Stop ? AgentExit::Refused : AgentExit::ServerTimeout;
    return result;
  }
  result.agent_id = welcome->agent_id;
  std::uint64_t version = welcome->params_version;
  set_flat_parameters(net, welcome->values);
  // Everything random in this agent derives from the seed the server drew for it.
  std::mt19937_64 rng(splitmix64(welcome->aux));
  RolloutRunner runner(env_, splitmix64(welcome->aux + 1));
  say("agent " + std::to_string(result.agent_id) + " joined at version " + std::to_string(version));

  const auto report = [&](const std::vector<EpisodeStats>& finished) {
    for (const EpisodeStats& e : finished) {
      send(socket_, Message{MessageType::Episode, result.agent_id, version, 0, episode_values(e)});
      ++result.episodes;
    }
  };
  // Pushes one gradient and takes the server's answer; false when training is over for this agent.
  const auto push = [&](const GradientResult& g) {
    send(socket_, Message{MessageType::Gradient, result.agent_id, version, 0, g.gradient});
    ++result.gradients_pushed;
    const std::optional<Message> answer = await_reply(socket_, count, options_.a3c.reply_timeout_s);
    if (!answer) {
      result.exit = AgentExit::ServerTimeout;
      return false;
    }
    if (answer->type == MessageType::Stop) {
      result.exit = AgentExit::Stopped;
      return false;
    }
    if (answer->values.size() == count) {  // otherwise not ours to use: keep the old parameters
      set_flat_parameters(net, answer->values);
      version = answer->params_version;
    }
    return true;
  };
  bool going = true;
  while (going) {
    if (options_.a3c.algorithm == Algorithm::A3c) {
      const Rollout rollout = runner.collect(net, options_.a3c.n_steps, rng);
      report(rollout.finished);
      going = push(rollout_gradient(net, rollout, options_.a3c));
      continue;
    }
    // PPO: one rollout, then ppo_epochs shuffled passes of minibatch gradients over it, each pushed
    // and answered with the server's newest parameters (the clip bounds how far they move from the
    // collecting policy, whose log-probabilities the rollout holds).
    const PpoRollout rollout = runner.collect_steps(net, options_.a3c.ppo_rollout_steps, rng);
    report(rollout.finished);
    const NStepTargets targets = ppo_targets(net, rollout, options_.a3c);
    std::vector<std::size_t> order(rollout.observations.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (int epoch = 0; epoch < options_.a3c.ppo_epochs && going; ++epoch) {
      for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[static_cast<std::size_t>(rng() % i)]);
      for (std::size_t start = 0; start < order.size() && going; start += static_cast<std::size_t>(options_.a3c.ppo_minibatch)) {
        const std::size_t end = std::min(order.size(), start + static_cast<std::size_t>(options_.a3c.ppo_minibatch));
        going = push(ppo_gradient(net, rollout, targets, std::vector<std::size_t>(order.begin() + static_cast<std::ptrdiff_t>(start),
                                                                                 order.begin() + static_cast<std::ptrdiff_t>(end)),
                                  options_.a3c));
      }
    }
  }
  result.env_steps = runner.steps();
  result.last_params_version = version;
  try {
    send(socket_, Message{MessageType::Bye, result.agent_id, version, 0, {}});
  } catch (const std::exception&) {
    // The server is gone; nobody to say goodbye to.
  }
  say("agent " + std::to_string(result.agent_id) + ": " + to_string(result.exit) + " after " +
      std::to_string(result.gradients_pushed) + " pushes, " + std::to_string(result.episodes) + " episodes");
  return result;
}

}  // namespace agents
