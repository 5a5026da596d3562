#include "agents/parameter_server.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "agents/checkpoint.hpp"
#include "agents/endpoints.hpp"
#include "agents/policy_file.hpp"
#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "orchestra/barrier_env.hpp"

namespace agents {
namespace {

constexpr const char* kTrainHeader = "update,episodes,mean_reward,mean_time_to_target_ms,reached_share,dropped\n";

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const torch::Tensor& flat, const A3cOptions& o) {
  if (o.optimizer == OptimizerKind::RmsProp)
    return std::make_unique<torch::optim::RMSprop>(
        std::vector<torch::Tensor>{flat}, torch::optim::RMSpropOptions(o.learning_rate).alpha(o.rmsprop_alpha).eps(o.optimizer_eps));
  return std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{flat},
                                               torch::optim::AdamOptions(o.learning_rate).eps(o.optimizer_eps));
}

std::string checkpoint_path(const std::string& dir) { return (std::filesystem::path(dir) / "checkpoint.pt").string(); }

// a3c.init_policy: a trained network to fine-tune, of this training's shape.
void start_from_policy(ActorCritic& net, const std::string& path) {
  A3cPolicy policy = load_policy_of_shape(path, net->spec());
  set_flat_parameters(net, flat_parameters(policy.network()));
}

}  // namespace

ParameterServer::ParameterServer(zmq::context_t& context, ParameterServerOptions options)
    : options_(std::move(options)), socket_(context, zmq::socket_type::router) {
  validate(options_.a3c);
  if (!is_loopback_endpoint(options_.bind) && !options_.curve)
    throw std::invalid_argument("parameter server: binding to " + options_.bind +
                                " (not loopback) needs CURVE keys: run `orchestra keygen KEYFILE` and pass --keys KEYFILE");
  torch::manual_seed(options_.a3c.seed);  // the initial network is a function of the seed alone
  net_ = ActorCritic(ActorCriticSpec{options_.observation_size, options_.a3c.hidden, orchestra::num_barrier_actions(options_.control.max_move)});
  if (!options_.a3c.init_policy.empty() && !options_.resume) {
    start_from_policy(net_, options_.a3c.init_policy);
    say("fine-tuning " + options_.a3c.init_policy);
  }
  param_count_ = parameter_count(net_);
  flat_ = torch::tensor(flat_parameters(net_), torch::kFloat).set_requires_grad(true);
  optimizer_ = make_optimizer(flat_, options_.a3c);
  rng_.seed(splitmix64(options_.a3c.seed ^ 0xA3C0A3C0ULL));

  if (!options_.out_dir.empty()) std::filesystem::create_directories(options_.out_dir);
  if (options_.resume) {
    if (options_.out_dir.empty()) throw std::invalid_argument("parameter server: resume needs an output folder");
    const CheckpointState state = load_checkpoint(checkpoint_path(options_.out_dir), net_, *optimizer_, options_.identity);
    {
      torch::NoGradGuard no_grad;
      flat_.copy_(torch::tensor(flat_parameters(net_), torch::kFloat));  // in place: the optimizer holds flat_
    }
    start_updates_ = state.updates;
    updates_ = start_updates_;
    episodes_ = state.episodes;
    next_agent_id_ = state.next_agent_id;
    std::istringstream(state.rng_state) >> rng_;
    recent_.assign(state.recent.begin(), state.recent.end());
    say("resuming from " + checkpoint_path(options_.out_dir) + " at update " + std::to_string(updates_.load()));
  }

  socket_.set(zmq::sockopt::linger, 0);
  socket_.set(zmq::sockopt::router_mandatory, 1);  // a reply to a vanished peer fails, not blocks
  // A peer whose queue is full (it does not read its replies) is not waited for: its reply is
  // dropped at once. A wait of 1 s per reply let one such peer stall every other agent.
  socket_.set(zmq::sockopt::sndtimeo, 0);
  // libzmq refuses (and disconnects) a peer whose frame exceeds this, before it is even buffered:
  // the first line against a memory attack. Frames under it but over the parameter count are
  // dropped and counted by decode().
  socket_.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(2 * (kHeaderBytes + 4 * param_count_) + 4096));
  if (options_.curve) {
    zap_ = std::make_unique<ZapAuthenticator>(context, options_.curve->client.public_key);
    make_curve_server(socket_, *options_.curve);
  }
  try {
    set_ipv6_if_needed(socket_, options_.bind);
    socket_.bind(options_.bind);
  } catch (const zmq::error_t& e) {
    throw common::CommError(options_.bind + ": cannot listen here (" + e.what() + ")");
  }
  // Only once the server can serve: a bind that fails leaves no train.csv to be mistaken for a
  // training that can be resumed.
  if (!options_.out_dir.empty()) open_train_csv();
  last_message_ = Clock::now();
}

ParameterServer::~ParameterServer() = default;

std::string ParameterServer::endpoint() const { return socket_.get(zmq::sockopt::last_endpoint); }

void ParameterServer::say(const std::string& line) {
  if (options_.log) *options_.log << "[server] " << line << std::endl;
}

void ParameterServer::open_train_csv() {
  const std::string path = (std::filesystem::path(options_.out_dir) / "train.csv").string();
  // On resume, rows written after the checkpoint describe updates that are about to be redone.
  std::string kept = kTrainHeader;
  if (options_.resume && std::filesystem::exists(path)) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      // A row cut short by a kill has fewer columns; it is dropped with the ones after the checkpoint.
      if (std::count(line.begin(), line.end(), ',') != 5) continue;
      if (std::strtoll(line.c_str(), nullptr, 10) <= updates_.load()) kept += line + "\n";
    }
  }
  // The kept rows replace the file in one step (temp + fsync + rename): a kill between truncating
  // it and writing them back would lose the whole history. New rows are appended after.
  common::write_file_atomic(path, kept);
  train_csv_.open(path, std::ios::app);
  if (!train_csv_) throw common::SystemError(path + ": cannot write");
}

ServeResult ParameterServer::serve(const std::function<bool()>& keep_going, const std::function<bool()>& drain_while) {
  ServeResult result;
  result.start_updates = start_updates_;
  const auto idle_limit = std::chrono::duration<double>(options_.a3c.idle_timeout_s);
  last_message_ = Clock::now();
  say("serving " + endpoint() + " (" + std::to_string(param_count_) + " parameters, updates " +
      std::to_string(updates_.load()) + " -> " + std::to_string(options_.a3c.total_updates) + ")");
  result.outcome = ServeOutcome::Finished;
  while (updates_ < options_.a3c.total_updates) {
    if (stop_requested_ || (keep_going && !keep_going())) {
      result.outcome = ServeOutcome::Stopped;
      break;
    }
    const bool got = handle_one(false);
    const auto now = Clock::now();
    if (got) last_message_ = now;
    check_silence(now);
    if (now - last_message_ > idle_limit) {
      say("no agent has spoken for " + std::to_string(options_.a3c.idle_timeout_s) + " s; giving up");
      result.outcome = ServeOutcome::IdleTimeout;
      break;
    }
  }
  if (!options_.out_dir.empty()) {
    write_checkpoint();
    if (result.outcome == ServeOutcome::Finished) {
      A3cPolicy(network(), updates_.load(), options_.control, options_.training).save((std::filesystem::path(options_.out_dir) / "policy.pt").string());
      say("policy written to " + (std::filesystem::path(options_.out_dir) / "policy.pt").string());
    }
  }
  // Tell the agents still asking that training is over, or that this server stopped early (they
  // join its successor), within a bounded wait. It goes on after keep_going said stop (Ctrl-C on
  // `serve`: remote agents waiting on a push would otherwise wait out their reply timeout).
  const auto drain_until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(std::min(options_.a3c.reply_timeout_s, 10.0)));
  const auto anyone_left = [this] {
    for (const auto& a : agents_)
      if (!a.second.left && !a.second.lost) return true;
    return false;
  };
  // drain_while ends it too: `train` says no once its agent processes are gone.
  while (anyone_left() && Clock::now() < drain_until && (!drain_while || drain_while())) handle_one(true);

  result.updates = updates_.load();
  result.episodes = episodes_;
  result.agents_joined = static_cast<std::int64_t>(agents_.size());
  result.agents_lost = agents_lost_;
  result.rescaled_gradients = rescaled_gradients_;
  result.drops = drops_;
  say("done at update " + std::to_string(updates_.load()) + ": " + std::to_string(episodes_) + " episodes, " +
      std::to_string(drops_.total()) + " messages dropped, " + std::to_string(agents_lost_) + " agents lost");
  return result;
}

bool ParameterServer::handle_one(bool finishing) {
  zmq::pollitem_t item{static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
  try {
    zmq::poll(&item, 1, std::chrono::milliseconds(static_cast<long>(options_.a3c.poll_interval_ms)));
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) throw;
    return false;  // a signal (Ctrl-C): the caller's next keep_going() sees it
  }
  if (!(item.revents & ZMQ_POLLIN)) return false;
  std::vector<zmq::message_t> frames;
  do {
    frames.emplace_back();
    if (!socket_.recv(frames.back(), zmq::recv_flags::dontwait)) {
      frames.pop_back();
      break;
    }
  } while (frames.back().more());
  // A DEALER peer sends exactly one frame per message: [identity][payload].
  if (frames.size() != 2) {
    ++drops_.malformed;
    return true;
  }
  const Decoded d = decode(frames[1].data(), frames[1].size(), static_cast<std::size_t>(param_count_));
  const std::string identity = frames[0].to_string();
  switch (d.drop) {
    case DropReason::None: handle(identity, d.message, finishing); break;
    case DropReason::Oversized: ++drops_.oversized; break;
    case DropReason::NotFinite:
      ++drops_.not_finite;
      // A push from a known agent that waits for parameters: answer it so it does not time out.
      if (d.message.type == MessageType::Gradient) {
        const auto it = agents_.find(d.message.agent_id);
        if (it != agents_.end() && it->second.identity == identity) {
          if (finishing) it->second.left = true;
          reply(identity, Message{finishing ? MessageType::Stop : MessageType::Params, d.message.agent_id,
                                  static_cast<std::uint64_t>(updates_.load()),
                                  finishing ? static_cast<std::uint64_t>(finishing_reason()) : 0,
                                  finishing ? std::vector<float>{} : current_values()});
        }
      }
      break;
    default: ++drops_.malformed; break;
  }
  return true;
}

void ParameterServer::reply(const std::string& identity, const Message& message) {
  const std::vector<char> bytes = encode(message);
  try {
    socket_.send(zmq::buffer(identity), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(bytes), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    // EHOSTUNREACH: the peer went away between its request and our answer; nothing to do.
    say(std::string("reply not delivered (") + e.what() + ")");
  }
}

// What the closing drain tells an agent: done, or stopped early (to be resumed, so join again).
StopReason ParameterServer::finishing_reason() const {
  return updates_.load() >= options_.a3c.total_updates || stop_requested_ ? StopReason::TrainingOver : StopReason::ServerStopped;
}

void ParameterServer::handle(const std::string& identity, const Message& m, bool finishing) {
  const auto now = Clock::now();
  const auto stop = [&](StopReason reason) {
    reply(identity, Message{MessageType::Stop, m.agent_id, static_cast<std::uint64_t>(updates_.load()), static_cast<std::uint64_t>(reason), {}});
  };
  const auto params = [&](std::uint32_t id) {
    return Message{MessageType::Params, id, static_cast<std::uint64_t>(updates_.load()), 0, current_values()};
  };
  if (m.type == MessageType::Hello) {
    if (m.aux != static_cast<std::uint64_t>(options_.observation_size) || m.values.size() != 1 ||
        static_cast<std::int64_t>(m.values[0]) != param_count_) {
      ++drops_.wrong_size;
      say("refused an agent with another network (observation size " + std::to_string(m.aux) + ")");
      stop(StopReason::OtherNetwork);
      return;
    }
    if (finishing) {
      stop(finishing_reason());
      return;
    }
    // A second Hello on one connection: one record per peer, so a peer that says Hello in a loop
    // cannot grow the table (and each poll's silence check). Before its first push it is the
    // agent's Hello sent again (the first may have gone to a server that was closing): the same
    // Welcome, id and seed. After, the agent started over: it replaces the record.
    for (auto earlier = agents_.begin(); earlier != agents_.end(); ++earlier)
      if (earlier->second.identity == identity) {
        if (!earlier->second.pushed && !earlier->second.lost && !earlier->second.left) {
          earlier->second.last_seen = now;
          Message again = params(earlier->first);
          again.type = MessageType::Welcome;
          again.aux = earlier->second.seed;
          reply(identity, again);
          return;
        }
        if (earlier->second.lost) --agents_lost_;
        agents_.erase(earlier);
        break;
      }
    const auto id = static_cast<std::uint32_t>(next_agent_id_++);
    const std::uint64_t seed = rng_();  // the agent's seed: episodes and action sampling
    agents_[id] = AgentRecord{identity, now, false, false, seed, false};
    Message welcome = params(id);
    welcome.type = MessageType::Welcome;
    welcome.aux = seed;
    reply(identity, welcome);
    say("agent " + std::to_string(id) + " joined");
    return;
  }
  const auto it = agents_.find(m.agent_id);
  if (it == agents_.end() || it->second.identity != identity) {
    ++drops_.unknown_agent;
    // It is waiting: rather than let it hang, tell it to join again (this server was restarted
    // with --resume, or its connection was made anew).
    if (m.type == MessageType::Gradient) stop(finishing ? finishing_reason() : StopReason::UnknownAgent);
    return;
  }
  AgentRecord& agent = it->second;
  agent.last_seen = now;
  if (agent.lost) {
    agent.lost = false;
    --agents_lost_;
    say("agent " + std::to_string(m.agent_id) + " is back");
  }
  switch (m.type) {
    case MessageType::Gradient: {
      agent.pushed = true;
      if (finishing) {
        stop(finishing_reason());
        agent.left = true;  // told: it leaves, or joins the next server under a new id
        return;
      }
      // Compared unsigned, before any cast: a version of 2^64-1 cast to int64 read as -1 and 2^63
      // overflowed the subtraction, and such a gradient from a hostile peer passed as fresh.
      const std::uint64_t updates = static_cast<std::uint64_t>(updates_);
      if (m.params_version > updates || updates - m.params_version > static_cast<std::uint64_t>(options_.a3c.max_staleness)) {
        ++drops_.stale;
      } else if (static_cast<std::int64_t>(m.values.size()) != param_count_) {
        ++drops_.wrong_size;
      } else {
        apply_gradient(m.values, m.agent_id);
      }
      if (updates_ >= options_.a3c.total_updates) {
        stop(StopReason::TrainingOver);
      } else {
        reply(identity, params(m.agent_id));
      }
      return;
    }
    case MessageType::Episode: {
      const std::vector<EpisodeStats> finished = episodes_from_values(m.values);
      if (finished.empty()) {
        ++drops_.malformed;
        return;
      }
      for (const EpisodeStats& e : finished) {
        ++episodes_;
        recent_.push_back(e);
      }
      while (static_cast<int>(recent_.size()) > options_.a3c.stats_window) recent_.pop_front();
      return;
    }
    case MessageType::Bye:
      agent.left = true;
      say("agent " + std::to_string(m.agent_id) + " left");
      return;
    default:
      ++drops_.malformed;  // Welcome/Params/Stop travel the other way
      return;
  }
}

// The clip every agent applies before a push (a3c.max_grad_norm; 1e9 when it clips nothing),
// enforced here too: a finite but huge gradient (3e38) makes Adam's second moment inf, and that
// parameter then never moves again. An agent's own clip leaves a norm at most max_grad_norm, so the
// 0.1% margin never touches an honest push, which stays bit for bit as sent.
void ParameterServer::apply_gradient(std::vector<float> gradient, std::uint32_t agent_id) {
  constexpr double kNormWithoutClip = 1e9, kMargin = 1.001;
  const double limit = options_.a3c.max_grad_norm > 0 ? options_.a3c.max_grad_norm : kNormWithoutClip;
  double squares = 0;
  for (float g : gradient) squares += static_cast<double>(g) * g;
  const double norm = std::sqrt(squares);  // in double: the float sum of 3e38 squared is inf
  if (norm > limit * kMargin) {
    const double scale = limit / norm;
    for (float& g : gradient) g = static_cast<float>(g * scale);
    if (rescaled_gradients_++ == 0)
      say("agent " + std::to_string(agent_id) + " pushed a gradient of norm " + std::to_string(norm) +
          ", above a3c.max_grad_norm; applied at that norm (does its config clip as this one does?)");
  }
  flat_.mutable_grad() = torch::tensor(gradient, torch::kFloat);
  // Set before every step (not only at construction) so that --resume follows the same schedule.
  for (auto& group : optimizer_->param_groups()) group.options().set_lr(learning_rate_at(options_.a3c, updates_.load()));
  optimizer_->step();
  ++updates_;
  if (updates_ % options_.a3c.log_every == 0) write_train_row();
  if (!options_.out_dir.empty() && updates_ % options_.a3c.checkpoint_every == 0) write_checkpoint();
  if (!options_.out_dir.empty() && options_.a3c.snapshot_every > 0 && updates_ % options_.a3c.snapshot_every == 0) {
    const auto dir = std::filesystem::path(options_.out_dir) / "snapshots";
    std::filesystem::create_directories(dir);
    A3cPolicy(network(), updates_.load(), options_.control, options_.training)
        .save((dir / ("policy-" + std::to_string(updates_.load()) + ".pt")).string());
  }
}

void ParameterServer::check_silence(Clock::time_point now) {
  const auto limit = std::chrono::duration<double>(options_.a3c.agent_silence_s);
  for (auto& [id, agent] : agents_) {
    if (agent.lost || agent.left || now - agent.last_seen <= limit) continue;
    agent.lost = true;
    ++agents_lost_;
    say("agent " + std::to_string(id) + " silent for " + std::to_string(options_.a3c.agent_silence_s) +
        " s; going on without it");
  }
}

TrainingStats ParameterServer::stats() const {
  TrainingStats s;
  s.updates = updates_.load();
  s.total_updates = options_.a3c.total_updates;
  s.episodes = episodes_;
  s.window = static_cast<int>(recent_.size());
  double reward = 0, ttt = 0;
  for (const auto& e : recent_) {
    reward += e.total_reward;
    if (e.reached_target) {
      ttt += e.time_to_target_ms;
      ++s.reached;
    }
  }
  if (s.window > 0) s.mean_return = reward / s.window;
  if (s.reached > 0) s.mean_time_to_target_ms = ttt / s.reached;
  s.dropped = drops_.total();
  return s;
}

void ParameterServer::write_train_row() {
  if (!train_csv_.is_open()) return;
  const TrainingStats s = stats();
  train_csv_ << s.updates << ',' << s.episodes << ',';
  if (s.window == 0) train_csv_ << ",,";
  else train_csv_ << s.mean_return << ',' << (s.reached ? std::to_string(s.mean_time_to_target_ms) : "") << ',' << static_cast<double>(s.reached) / s.window;
  train_csv_ << ',' << s.dropped << '\n' << std::flush;
}

void ParameterServer::write_checkpoint() {
  CheckpointState state;
  state.updates = updates_;
  state.episodes = episodes_;
  state.next_agent_id = next_agent_id_;
  std::ostringstream rng;
  rng << rng_;
  state.rng_state = rng.str();
  state.recent.assign(recent_.begin(), recent_.end());
  state.identity = options_.identity;
  save_checkpoint(checkpoint_path(options_.out_dir), network(), *optimizer_, state);
}

}  // namespace agents

namespace agents {

const std::vector<float>& ParameterServer::current_values() {
  if (reply_version_ != updates_) {
    const torch::Tensor c = flat_.detach().contiguous();
    reply_values_.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    reply_version_ = updates_;
  }
  return reply_values_;
}

ActorCritic& ParameterServer::network() {
  set_flat_parameters(net_, current_values());
  return net_;
}

}  // namespace agents
