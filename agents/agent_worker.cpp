#include "agents/agent_worker.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "agents/actor_critic.hpp"
#include "agents/endpoints.hpp"
#include "agents/learner.hpp"
#include "agents/protocol.hpp"
#include "agents/rollout.hpp"
#include "common/errors.hpp"

namespace agents {
namespace {

// The server's answer to our last request, skipping anything else (a Welcome of a Hello sent
// again, while pushing; a frame we cannot read); nullopt when nothing usable came in time.
enum class Awaiting { Welcome, Params };
std::optional<Message> await_reply(zmq::socket_t& socket, std::size_t max_values, double timeout_s, Awaiting awaiting) {
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
    if (t == MessageType::Stop || t == (awaiting == Awaiting::Welcome ? MessageType::Welcome : MessageType::Params)) return d.message;
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
    : options_(std::move(options)), envs_{&env}, socket_(context, zmq::socket_type::dealer) {
  validate(options_.a3c);
  if (options_.a3c.envs_per_agent != 1)
    throw std::invalid_argument("agent: a3c.envs_per_agent is " + std::to_string(options_.a3c.envs_per_agent) + " but one environment was given");
  connect();
}

AgentWorker::AgentWorker(zmq::context_t& context, AgentWorkerOptions options, std::vector<std::unique_ptr<orchestra::BarrierEnv>> envs)
    : options_(std::move(options)), owned_(std::move(envs)), socket_(context, zmq::socket_type::dealer) {
  validate(options_.a3c);
  if (static_cast<int>(owned_.size()) != options_.a3c.envs_per_agent)
    throw std::invalid_argument("agent: a3c.envs_per_agent is " + std::to_string(options_.a3c.envs_per_agent) + " but " +
                                std::to_string(owned_.size()) + " environments were given");
  for (const auto& e : owned_) {
    if (!e) throw std::invalid_argument("agent: a null environment");
    envs_.push_back(e.get());
  }
  connect();
}

AgentWorker::AgentWorker(zmq::context_t& context, AgentWorkerOptions options, std::unique_ptr<orchestra::VectorBarrierEnv> vector)
    : options_(std::move(options)), vector_(std::move(vector)), socket_(context, zmq::socket_type::dealer) {
  validate(options_.a3c);
  if (!vector_) throw std::invalid_argument("agent: a null vector of environments");
  if (vector_->num_envs() != options_.a3c.envs_per_agent)
    throw std::invalid_argument("agent: a3c.envs_per_agent is " + std::to_string(options_.a3c.envs_per_agent) + " but " +
                                std::to_string(vector_->num_envs()) + " environments were given");
  connect();
}

void AgentWorker::connect() {
  socket_.set(zmq::sockopt::linger, 1000);  // let the last Episode/Bye out, but never hang on exit
  socket_.set(zmq::sockopt::sndtimeo, static_cast<int>(options_.a3c.reply_timeout_s * 1000));
  if (options_.curve) make_curve_client(socket_, *options_.curve);
  set_ipv6_if_needed(socket_, options_.connect);
  socket_.connect(options_.connect);
}

void AgentWorker::say(const std::string& line) const {
  if (options_.log) *options_.log << line << std::endl;
}

namespace {

// The learner's transport: a push is one Gradient message and the server's answer; a report is
// one Episode message for all the episodes given (or several, for a small network).
class ServerLink final : public LearnerLink {
 public:
  ServerLink(zmq::socket_t& socket, ActorCritic& net, AgentResult& result, std::uint64_t& version, double timeout_s)
      : socket_(socket), net_(net), result_(result), version_(version), count_(static_cast<std::size_t>(parameter_count(net))),
        timeout_s_(timeout_s) {}

  bool push(const GradientResult& g) override {
    send(socket_, Message{MessageType::Gradient, result_.agent_id, version_, 0, g.gradient});
    ++result_.gradients_pushed;
    const std::optional<Message> answer = await_reply(socket_, count_, timeout_s_, Awaiting::Params);
    if (!answer) {
      // The server may have gone down with this push (killed, its machine restarted): whoever
      // answers at the endpoint within another reply_timeout_s is joined, as after a Stop.
      std::ostringstream why;
      why << "no answer to a push within " << timeout_s_ << " s";
      join_again_ = why.str();
      return false;
    }
    if (answer->type == MessageType::Stop) {
      const auto reason = static_cast<StopReason>(answer->aux);
      if (reason == StopReason::UnknownAgent || reason == StopReason::ServerStopped) {
        join_again_ = std::string(to_string(reason)) + " (update " + std::to_string(answer->params_version) + ")";
      } else {
        result_.exit = reason == StopReason::OtherNetwork ? AgentExit::Refused : AgentExit::Stopped;
      }
      return false;
    }
    if (answer->values.size() == count_) {  // otherwise not ours to use: keep the old parameters
      set_flat_parameters(net_, answer->values);
      version_ = answer->params_version;
    }
    return true;
  }

  void report(const std::vector<EpisodeStats>& finished) override {
    // The server takes messages of at most as many values as the network has parameters: a small
    // network with many environments sends its episodes in several messages.
    const std::size_t per_message = std::max<std::size_t>(1, count_ / kEpisodeValues);
    for (std::size_t first = 0; first < finished.size(); first += per_message) {
      const std::vector<EpisodeStats> chunk(finished.begin() + static_cast<std::ptrdiff_t>(first),
                                            finished.begin() + static_cast<std::ptrdiff_t>(std::min(finished.size(), first + per_message)));
      send(socket_, Message{MessageType::Episode, result_.agent_id, version_, 0, episode_values(chunk)});
    }
    result_.episodes += static_cast<std::int64_t>(finished.size());
  }

  // Why this agent is to join again (a Stop that asked it, no answer to a push), or nullopt.
  const std::optional<std::string>& join_again() const { return join_again_; }

 private:
  std::optional<std::string> join_again_;
  zmq::socket_t& socket_;
  ActorCritic& net_;
  AgentResult& result_;
  std::uint64_t& version_;
  std::size_t count_;
  double timeout_s_;
};

}  // namespace

constexpr double kHelloAgainS = 1.0;

std::optional<Message> AgentWorker::join(int observation_size, std::size_t count, AgentResult& result) {
  // One deadline for the whole join: a server that is draining answers a Hello with Stop at once,
  // and one restarting answers when it is bound again.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                               std::chrono::duration<double>(options_.a3c.reply_timeout_s));
  while (true) {
    const double left_s = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left_s <= 0) break;
    // Without waiting: with no connection to queue it on (a peer refused by CURVE, a server not
    // yet bound), the next round sends it again.
    const std::vector<char> hello =
        encode(Message{MessageType::Hello, 0, 0, static_cast<std::uint64_t>(observation_size), {static_cast<float>(count)}});
    (void)socket_.send(zmq::buffer(hello), zmq::send_flags::dontwait);
    // Sent again each second: a Hello that reached a server as it closed is lost, and its
    // successor on the endpoint answers the next one (a server answers a repeat with the same Welcome).
    const std::optional<Message> reply = await_reply(socket_, count, std::min(left_s, kHelloAgainS), Awaiting::Welcome);
    if (!reply) continue;
    if (reply->type == MessageType::Welcome) return reply;
    const auto reason = static_cast<StopReason>(reply->aux);
    if (reason == StopReason::ServerStopped || reason == StopReason::UnknownAgent) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));  // the old server is closing: ask its successor
      continue;
    }
    // Training already over: done for an agent that took part, a refusal for one that never did.
    result.exit = reason == StopReason::TrainingOver && result.gradients_pushed > 0 ? AgentExit::Stopped : AgentExit::Refused;
    return std::nullopt;
  }
  result.exit = AgentExit::ServerTimeout;
  return std::nullopt;
}

AgentResult AgentWorker::run() {
  AgentResult result;
  const int observation_size = vector_ ? vector_->observation_size() : envs_.front()->observation_size();
  const int max_move = vector_ ? vector_->max_move() : envs_.front()->max_move();
  ActorCritic net(ActorCriticSpec{observation_size, options_.a3c.hidden, orchestra::num_barrier_actions(max_move)});
  const std::size_t count = static_cast<std::size_t>(parameter_count(net));
  std::uint64_t version = 0;
  while (true) {
    const std::optional<Message> welcome = join(observation_size, count, result);
    if (!welcome) {
      if (result.rejoins == 0 && result.gradients_pushed == 0) return result;  // never joined: nothing to report
      break;
    }
    result.agent_id = welcome->agent_id;
    version = welcome->params_version;
    set_flat_parameters(net, welcome->values);
    // Everything random in this agent derives from the seed the server drew for it.
    const std::unique_ptr<Learner> learner =
        find_learner(options_.a3c.algorithm).make(LearnerSetup{options_.a3c, envs_, welcome->aux, vector_.get()});
    say("agent " + std::to_string(result.agent_id) + " joined at version " + std::to_string(version));
    ServerLink link(socket_, net, result, version, options_.a3c.reply_timeout_s);
    learner->learn(net, link);
    result.env_steps += learner->env_steps();
    result.last_params_version = version;
    if (!link.join_again()) break;
    // A server stopped early (Ctrl-C, SIGTERM) is resumed with serve --resume; one restarted does
    // not know this agent; one killed never answers its push. Each time the agent joins whoever
    // serves the endpoint within reply_timeout_s, rather than end as if training were over.
    ++result.rejoins;
    std::ostringstream line;
    line << "agent " << result.agent_id << ": " << *link.join_again() << "; joining again within " << options_.a3c.reply_timeout_s << " s";
    say(line.str());
  }
  try {
    send(socket_, Message{MessageType::Bye, result.agent_id, version, 0, {}});
  } catch (const std::exception&) {
    // The server is gone; nobody to say goodbye to.
  }
  say("agent " + std::to_string(result.agent_id) + ": " + to_string(result.exit) + " after " +
      std::to_string(result.gradients_pushed) + " pushes, " + std::to_string(result.episodes) + " episodes" +
      (result.rejoins > 0 ? ", joined again " + std::to_string(result.rejoins) + (result.rejoins == 1 ? " time" : " times") : ""));
  return result;
}

}  // namespace agents
