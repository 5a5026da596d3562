// A small toy training for the parameter server's tests (tests/agents/test_agents_transport.cpp,
// test_parameter_server_robustness.cpp): its options, and a hand-driven agent whose every message
// the test chooses.
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "agents/a3c_options.hpp"
#include "agents/parameter_server.hpp"
#include "agents/protocol.hpp"
#include "agents/toy_barrier_env.hpp"

namespace testing {

// A3C on the toy environment, small enough that a training takes seconds.
inline agents::A3cOptions small_options(std::int64_t updates) {
  agents::A3cOptions o;
  o.hidden = {16};
  o.n_steps = 4;
  o.total_updates = updates;
  o.agents = 1;
  o.poll_interval_ms = 20;
  o.reply_timeout_s = 10;
  o.idle_timeout_s = 20;
  o.agent_silence_s = 10;
  o.seed = 11;
  return o;
}

// A server of those options on `bind`, for the toy environment's observations.
inline agents::ParameterServerOptions server_options(const agents::A3cOptions& a3c, const std::string& bind) {
  agents::ParameterServerOptions s;
  s.a3c = a3c;
  s.observation_size = agents::ToyBarrierEnv::kObservationSize;
  s.bind = bind;
  return s;
}

// The next message, or an empty one when none came within `ms`.
inline zmq::message_t recv_with_timeout(zmq::socket_t& socket, int ms) {
  zmq::pollitem_t item{static_cast<void*>(socket), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, std::chrono::milliseconds(ms));
  zmq::message_t m;
  if (item.revents & ZMQ_POLLIN) (void)socket.recv(m, zmq::recv_flags::dontwait);
  return m;
}

// A hand-driven agent: Hello, then gradients it chooses; every reply's parameters are kept.
struct ManualAgent {
  zmq::socket_t socket;
  std::size_t count;
  std::uint32_t id = 0;
  std::vector<float> parameters;

  ManualAgent(zmq::context_t& context, const std::string& endpoint, std::size_t parameter_count)
      : socket(context, zmq::socket_type::dealer), count(parameter_count) {
    socket.set(zmq::sockopt::linger, 0);
    socket.connect(endpoint);
    const agents::ToyBarrierEnv toy;
    const agents::Decoded welcome = exchange(agents::Message{agents::MessageType::Hello, 0, 0,
                                                             static_cast<std::uint64_t>(toy.observation_size()),
                                                             {static_cast<float>(count)}});
    REQUIRE(welcome.message.type == agents::MessageType::Welcome);
    id = welcome.message.agent_id;
  }
  agents::Decoded exchange(const agents::Message& m) {
    socket.send(zmq::buffer(agents::encode(m)), zmq::send_flags::none);
    zmq::message_t r = recv_with_timeout(socket, 10000);
    agents::Decoded d = agents::decode(r.data(), r.size(), count);
    parameters = d.message.values;
    return d;
  }
  // One push of the same gradient everywhere; returns how far the first parameter moved.
  double push(std::uint64_t version, float gradient) {
    const float before = parameters.at(0);
    const agents::Decoded d = exchange(agents::Message{agents::MessageType::Gradient, id, version, 0, std::vector<float>(count, gradient)});
    REQUIRE(d.message.type == agents::MessageType::Params);
    return static_cast<double>(before - parameters.at(0));
  }
  void bye(std::uint64_t version) {
    socket.send(zmq::buffer(agents::encode(agents::Message{agents::MessageType::Bye, id, version, 0, {}})), zmq::send_flags::none);
  }
};

}  // namespace testing
