#include "agents/endpoints.hpp"

namespace agents {

bool is_loopback_endpoint(const std::string& e) {
  for (const char* prefix : {"inproc://", "ipc://", "tcp://127.", "tcp://localhost:", "tcp://[::1]:"})
    if (e.rfind(prefix, 0) == 0) return true;
  return false;
}

std::optional<std::string> endpoint_problem(const std::string& e, EndpointUse use) {
  const bool binding = use == EndpointUse::Bind;
  for (const char* other : {"ipc://", "inproc://"})
    if (e.rfind(other, 0) == 0) return e.size() > std::string(other).size() ? std::nullopt : std::optional<std::string>(e + ": a name is missing after " + other);
  if (e.rfind("tcp://", 0) != 0)
    return e + ": expected tcp://HOST:PORT, ipc://PATH or inproc://NAME (libzmq said only \"Invalid argument\")";
  const auto colon = e.rfind(':');
  const std::string port = colon == std::string::npos || colon < 6 ? "" : e.substr(colon + 1);
  const std::string host = colon == std::string::npos || colon < 6 ? e.substr(6) : e.substr(6, colon - 6);
  if (host.empty()) return e + ": expected tcp://HOST:PORT, the host is missing";
  if (!binding && (host == "*" || port == "*")) return e + ": an agent connects to one host and port, not to * (that is for --bind)";
  // libzmq binds to an interface's address or name, not to a host name: localhost failed with
  // "No such device"; an IPv6 address needs the socket's IPv6 option, which set_ipv6_if_needed sets.
  if (binding && host == "localhost") return e + ": bind to an address: tcp://127.0.0.1:" + port;
  if (port == "*" && binding) return std::nullopt;
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535)
    return e + ": expected tcp://HOST:PORT with a port from 0 to 65535" + (binding ? " (or * for any free one)" : "") + ", got '" + port + "'";
  return std::nullopt;
}

void set_ipv6_if_needed(zmq::socket_t& socket, const std::string& endpoint) {
  if (endpoint.rfind("tcp://[", 0) == 0) socket.set(zmq::sockopt::ipv6, 1);
}

}  // namespace agents
