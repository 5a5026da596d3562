// ZeroMQ CURVE security for a parameter server reachable from other machines (RFC 26/CurveZMQ;
// ZAP, RFC 27). `orchestra keygen FILE` writes one key file holding the server's key pair and the
// agents' key pair (Z85 text, mode 0600); the server and every agent are given the same file. The
// server encrypts with its pair and, through a ZAP handler, admits only clients presenting the
// agents' public key; a peer without the file cannot complete the handshake and is refused.
#pragma once

#include <zmq.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace agents {

struct CurveKeyPair {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;
};

struct CurveKeys {
  CurveKeyPair server;
  CurveKeyPair client;
};

// True when this libzmq was built with CURVE (libsodium); Debian's is.
bool curve_available();
CurveKeys generate_curve_keys();  // throws common::SystemError without CURVE
void write_curve_keys(const std::string& path, const CurveKeys& keys);  // 0600, atomic
// Throws common::DataError naming the path and the missing or malformed key.
CurveKeys read_curve_keys(const std::string& path);

// Server side: curve_server on `socket` with the server's secret key. Call before bind.
void make_curve_server(zmq::socket_t& socket, const CurveKeys& keys);
// Client side: the server's public key and the agent's pair. Call before connect.
void make_curve_client(zmq::socket_t& socket, const CurveKeys& keys);

// The ZAP handler of `context`: answers libzmq's authentication requests on
// inproc://zeromq.zap.01, admitting CURVE clients whose public key is the agents' and refusing
// every other. Runs on its own thread from construction to destruction (bounded 100 ms polls).
class ZapAuthenticator {
 public:
  ZapAuthenticator(zmq::context_t& context, std::string allowed_client_public_key);
  ~ZapAuthenticator();
  ZapAuthenticator(const ZapAuthenticator&) = delete;
  ZapAuthenticator& operator=(const ZapAuthenticator&) = delete;
  std::int64_t refused() const { return refused_.load(); }

 private:
  void serve();

  zmq::socket_t socket_;
  std::string allowed_;
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> refused_{0};
  std::thread thread_;
};

}  // namespace agents
