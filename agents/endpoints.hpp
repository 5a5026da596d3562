// ZeroMQ endpoints as the command line gives them (serve --bind, agent --connect): which are
// loopback (no CURVE keys needed), and what is wrong with one before libzmq says "Invalid argument".
#pragma once

#include <zmq.hpp>

#include <optional>
#include <string>

namespace agents {

// True for tcp://127.0.0.1..., tcp://localhost..., tcp://[::1]..., ipc:// and inproc:// endpoints.
bool is_loopback_endpoint(const std::string& endpoint);
// What is wrong with an endpoint to bind (serve --bind) or connect to (agent --connect), or nullopt:
// a transport libzmq does not take here, a tcp:// host or port missing, a port out of range
// (libzmq keeps its low 16 bits: 99999 became 34463), * where an agent connects, a host name where
// the server binds. libzmq's own word for each was "Invalid argument", exit 1.
enum class EndpointUse { Bind, Connect };
std::optional<std::string> endpoint_problem(const std::string& endpoint, EndpointUse use);
// A tcp://[IPv6]:PORT endpoint needs the socket's IPv6 option before bind or connect.
void set_ipv6_if_needed(zmq::socket_t& socket, const std::string& endpoint);

}  // namespace agents
