// What peers that misbehave do to the parameter server: garbage, oversized, non-finite and stale
// messages, a finite gradient far above the clip, a peer that never reads its replies, one that
// says Hello in a loop, an agent that falls silent. Each is dropped, bounded or written off,
// counted, and training goes on.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <thread>

#include "agents/agent_worker.hpp"
#include "agents/parameter_server.hpp"
#include "agents/protocol.hpp"
#include "agents/toy_barrier_env.hpp"
#include "toy_server.hpp"

using testing::ManualAgent;
using testing::recv_with_timeout;
using testing::server_options;
using testing::small_options;

TEST_CASE("the server survives garbage, oversized, non-finite and stale messages, and counts them") {
  zmq::context_t context;
  auto options = server_options(small_options(1000000), "tcp://127.0.0.1:*");
  options.a3c.max_staleness = 2;
  agents::ParameterServer server(context, options);
  const std::string endpoint = server.endpoint();
  // Read before serving starts: network() refreshes the reply cache that the serving thread reads.
  const std::size_t count = static_cast<std::size_t>(agents::parameter_count(server.network()));
  std::future<agents::ServeResult> serving = std::async(std::launch::async, [&server] { return server.serve(); });

  // Not even ZeroMQ: raw bytes on a plain TCP connection (libzmq's handshake rejects them).
  {
    const int port = std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    const char junk[] = "GET / HTTP/1.1\r\n\r\n\xff\xfe\x00garbage";
    CHECK(::write(fd, junk, sizeof junk) > 0);
    ::close(fd);
  }
  zmq::socket_t peer(context, zmq::socket_type::dealer);
  peer.set(zmq::sockopt::linger, 0);
  peer.connect(endpoint);
  peer.send(zmq::str_buffer("hello?"), zmq::send_flags::none);                         // malformed
  peer.send(zmq::str_buffer("two"), zmq::send_flags::sndmore);                         // two frames:
  peer.send(zmq::str_buffer("frames"), zmq::send_flags::none);                         //  malformed
  std::vector<char> big = agents::encode(agents::Message{agents::MessageType::Gradient, 0, 0, 0,
                                                         std::vector<float>(count + 10, 0.0f)});
  peer.send(zmq::buffer(big), zmq::send_flags::none);                                  // oversized
  std::vector<char> lying = agents::encode(agents::Message{agents::MessageType::Gradient, 0, 0, 0, {1.0f}});
  lying.resize(lying.size() + 8);
  peer.send(zmq::buffer(lying), zmq::send_flags::none);                                // malformed
  std::vector<char> huge(64 * 1024 * 1024, 'x');  // over ZMQ_MAXMSGSIZE: libzmq drops the peer
  {
    zmq::socket_t flooder(context, zmq::socket_type::dealer);
    flooder.set(zmq::sockopt::linger, 0);
    flooder.connect(endpoint);
    flooder.send(zmq::buffer(huge), zmq::send_flags::dontwait);
  }
  // A proper agent now: its Welcome proves the server is alive and has read everything above.
  const agents::ToyBarrierEnv toy;
  peer.send(zmq::buffer(agents::encode(agents::Message{agents::MessageType::Hello, 0, 0,
                                                       static_cast<std::uint64_t>(toy.observation_size()),
                                                       {static_cast<float>(count)}})),
            zmq::send_flags::none);
  zmq::message_t reply = recv_with_timeout(peer, 10000);
  agents::Decoded welcome = agents::decode(reply.data(), reply.size(), count);
  REQUIRE(welcome.drop == agents::DropReason::None);
  REQUIRE(welcome.message.type == agents::MessageType::Welcome);
  const std::uint32_t id = welcome.message.agent_id;

  const auto push = [&](std::uint64_t version, std::vector<float> g) {
    peer.send(zmq::buffer(agents::encode(agents::Message{agents::MessageType::Gradient, id, version, 0, std::move(g)})),
              zmq::send_flags::none);
    zmq::message_t r = recv_with_timeout(peer, 10000);
    return agents::decode(r.data(), r.size(), count);
  };
  // Three good pushes move the version to 3; then one computed at version 0 is 3 > 2 updates old.
  for (std::uint64_t v = 0; v < 3; ++v) CHECK(push(v, std::vector<float>(count, 0.01f)).message.params_version == v + 1);
  const agents::Decoded after_stale = push(0, std::vector<float>(count, 0.01f));
  CHECK(after_stale.message.type == agents::MessageType::Params);
  CHECK(after_stale.message.params_version == 3);  // not applied, but answered with fresh parameters
  CHECK(push(99, std::vector<float>(count, 0.01f)).message.params_version == 3);  // from the future
  // Versions that a cast to int64 read as -1 and as its lowest value (the subtraction overflowed):
  // a hostile peer's gradient passed as fresh and was applied.
  CHECK(push(std::numeric_limits<std::uint64_t>::max(), std::vector<float>(count, 0.01f)).message.params_version == 3);
  CHECK(push(std::uint64_t{1} << 63, std::vector<float>(count, 0.01f)).message.params_version == 3);
  std::vector<float> nan(count, 0.0f);
  nan[5] = std::numeric_limits<float>::infinity();
  CHECK(push(3, nan).message.params_version == 3);
  CHECK(push(3, std::vector<float>(count - 1, 0.0f)).drop == agents::DropReason::None);  // wrong size answered
  peer.send(zmq::buffer(agents::encode(agents::Message{agents::MessageType::Bye, id, 3, 0, {}})), zmq::send_flags::none);

  // And real training still works after all that.
  agents::ToyBarrierEnv env;
  agents::AgentWorkerOptions ao;
  ao.a3c = options.a3c;
  ao.connect = endpoint;
  std::future<agents::AgentResult> agent = std::async(std::launch::async, [&] { return agents::AgentWorker(context, ao, env).run(); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (server.updates() < 20 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  server.request_stop();
  const agents::ServeResult result = serving.get();
  CHECK(agent.get().exit == agents::AgentExit::Stopped);
  CHECK(result.outcome == agents::ServeOutcome::Stopped);
  CHECK(result.updates >= 20);
  CHECK(result.drops.malformed == 3);
  CHECK(result.drops.oversized == 1);
  CHECK(result.drops.stale == 4);
  CHECK(result.drops.not_finite == 1);
  CHECK(result.drops.wrong_size == 1);
}

TEST_CASE("a peer that never reads its replies does not stall the others") {
  zmq::context_t context;
  auto options = server_options(small_options(1000000), "inproc://a3c-deaf");
  agents::ParameterServer server(context, options);
  const std::size_t count = static_cast<std::size_t>(agents::parameter_count(server.network()));
  std::future<agents::ServeResult> serving = std::async(std::launch::async, [&server] { return server.serve(); });
  // Hellos from a peer that reads nothing: past the pipe's high-water mark (the server's 1000
  // plus its 1), every reply to it would wait for room.
  zmq::socket_t deaf(context, zmq::socket_type::dealer);
  deaf.set(zmq::sockopt::linger, 0);
  deaf.set(zmq::sockopt::rcvhwm, 1);
  deaf.connect("inproc://a3c-deaf");
  const agents::ToyBarrierEnv toy;
  const std::vector<char> hello = agents::encode(agents::Message{agents::MessageType::Hello, 0, 0, static_cast<std::uint64_t>(toy.observation_size()),
                                                                 {static_cast<float>(count)}});
  for (int k = 0; k < 1300; ++k) deaf.send(zmq::buffer(hello), zmq::send_flags::none);
  // An honest agent trains on: with a 1 s wait per undeliverable reply, 300 of them alone took 300 s.
  agents::ToyBarrierEnv env;
  agents::AgentWorkerOptions ao;
  ao.a3c = options.a3c;
  ao.connect = "inproc://a3c-deaf";
  std::future<agents::AgentResult> agent = std::async(std::launch::async, [&] { return agents::AgentWorker(context, ao, env).run(); });
  const auto start = std::chrono::steady_clock::now();
  while (server.updates() < 200 && std::chrono::steady_clock::now() < start + std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(server.updates() << " updates in " << seconds << " s");
  CHECK(server.updates() >= 200);
  CHECK(seconds < 30);  // about 1 s here; over 100 s when each reply to the deaf peer waited 1 s
  server.request_stop();
  serving.get();
  CHECK(agent.get().exit == agents::AgentExit::Stopped);
}

TEST_CASE("a silent agent is written off and training goes on without it") {
  zmq::context_t context;
  auto options = server_options(small_options(30), "inproc://a3c-silent");
  options.a3c.agent_silence_s = 0.3;
  agents::ParameterServer server(context, options);
  zmq::socket_t mute(context, zmq::socket_type::dealer);
  mute.set(zmq::sockopt::linger, 0);
  mute.connect(server.endpoint());
  const auto count = static_cast<float>(agents::parameter_count(server.network()));
  mute.send(zmq::buffer(agents::encode(agents::Message{agents::MessageType::Hello, 0, 0,
                                                       agents::ToyBarrierEnv::kObservationSize, {count}})),
            zmq::send_flags::none);
  agents::ToyBarrierEnv env;
  agents::AgentWorkerOptions ao;
  ao.a3c = options.a3c;
  ao.connect = server.endpoint();
  std::future<agents::AgentResult> agent = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));  // let the mute one fall silent first
    return agents::AgentWorker(context, ao, env).run();
  });
  const agents::ServeResult result = server.serve();
  CHECK(agent.get().exit == agents::AgentExit::Stopped);
  CHECK(result.outcome == agents::ServeOutcome::Finished);
  CHECK(result.updates == 30);
  CHECK(result.agents_joined == 2);
  CHECK(result.agents_lost == 1);
}

TEST_CASE("a finite but huge gradient is applied at the agents' clip, and its parameter goes on learning") {
  zmq::context_t context;
  auto options = server_options(small_options(1000000), "inproc://a3c-huge");
  agents::ParameterServer server(context, options);
  const auto count = static_cast<std::size_t>(agents::parameter_count(server.network()));
  std::future<agents::ServeResult> serving = std::async(std::launch::async, [&server] { return server.serve(); });
  ManualAgent agent(context, server.endpoint(), count);
  std::vector<float> huge(count, 0.01f);
  huge[0] = 3e38f;  // finite: the protocol lets it through; its square is inf in float
  const float start = agent.parameters.at(0);
  CHECK(agent.exchange(agents::Message{agents::MessageType::Gradient, agent.id, 0, 0, huge}).message.params_version == 1);
  const float after_huge = agent.parameters.at(0);
  CHECK(std::fabs(start - after_huge) < 2 * options.a3c.learning_rate);  // one Adam step, of its usual size
  // Honest pushes after it: Adam's second moment of that parameter was inf, and every later step
  // of it 0, before the server applied the clip itself.
  double moved = 0;
  for (std::uint64_t v = 1; v <= 3; ++v) moved += std::fabs(agent.push(v, 0.01f));
  CHECK(moved > 0.1 * options.a3c.learning_rate);
  for (float p : agent.parameters) REQUIRE(std::isfinite(p));
  agent.bye(4);
  server.request_stop();
  const agents::ServeResult result = serving.get();
  CHECK(result.rescaled_gradients == 1);  // the honest pushes (norm ~0.15 < 0.5) went as sent
  CHECK(result.updates == 4);
}

TEST_CASE("a peer that says Hello again and again is one agent: the table does not grow") {
  zmq::context_t context;
  auto options = server_options(small_options(1000000), "inproc://a3c-hellos");
  agents::ParameterServer server(context, options);
  const auto count = static_cast<std::size_t>(agents::parameter_count(server.network()));
  std::future<agents::ServeResult> serving = std::async(std::launch::async, [&server] { return server.serve(); });
  ManualAgent agent(context, server.endpoint(), count);
  const std::uint32_t first_id = agent.id;
  const agents::Message hello{agents::MessageType::Hello, 0, 0, agents::ToyBarrierEnv::kObservationSize, {static_cast<float>(count)}};
  // Before its first push, a Hello again is the agent's Hello sent again (the first may have gone
  // to a server that was closing): the same id and seed.
  const std::uint64_t seed = agent.exchange(hello).message.aux;
  for (int k = 0; k < 50; ++k) {
    const agents::Decoded d = agent.exchange(hello);
    REQUIRE(d.message.type == agents::MessageType::Welcome);
    CHECK(d.message.agent_id == first_id);
    CHECK(d.message.aux == seed);
  }
  CHECK(agent.push(0, 0.01f) != 0);
  // After a push, a Hello starts the agent over: a new id (then the same again), the old one over.
  for (int k = 0; k < 50; ++k) REQUIRE(agent.exchange(hello).message.type == agents::MessageType::Welcome);
  agent.id = agent.exchange(hello).message.agent_id;
  CHECK(agent.id != first_id);
  const std::vector<float> welcomed = agent.parameters;
  const agents::Decoded old_id =
      agent.exchange(agents::Message{agents::MessageType::Gradient, first_id, 1, 0, std::vector<float>(count, 0.01f)});
  CHECK(old_id.message.type == agents::MessageType::Stop);
  CHECK(old_id.message.aux == static_cast<std::uint64_t>(agents::StopReason::UnknownAgent));
  agent.parameters = welcomed;  // the Stop carried none
  CHECK(agent.push(1, 0.01f) != 0);
  agent.bye(2);
  server.request_stop();
  const agents::ServeResult result = serving.get();
  CHECK(result.agents_joined == 1);
  CHECK(result.drops.unknown_agent == 1);
  CHECK(result.updates == 2);
}
