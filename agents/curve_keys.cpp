#include "agents/curve_keys.hpp"

#include <yaml-cpp/yaml.h>

#include <array>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"

namespace agents {

bool curve_available() { return zmq_has("curve") != 0; }

CurveKeys generate_curve_keys() {
  if (!curve_available()) throw common::SystemError("this libzmq has no CURVE support (built without libsodium)");
  CurveKeys keys;
  for (CurveKeyPair* pair : {&keys.server, &keys.client}) {
    std::array<char, 41> pub{}, sec{};
    if (zmq_curve_keypair(pub.data(), sec.data()) != 0) throw common::SystemError(std::string("zmq_curve_keypair failed: ") + zmq_strerror(zmq_errno()));
    pair->public_key = pub.data();
    pair->secret_key = sec.data();
  }
  return keys;
}

void write_curve_keys(const std::string& path, const CurveKeys& keys) {
  const std::string text =
      "# orchestra A3C CURVE keys (orchestra keygen). Give this file to the server and to every agent;\n"
      "# keep it private: anyone holding it can join training.\n"
      "server_public: \"" + keys.server.public_key + "\"\nserver_secret: \"" + keys.server.secret_key +
      "\"\nclient_public: \"" + keys.client.public_key + "\"\nclient_secret: \"" + keys.client.secret_key + "\"\n";
  common::write_file_atomic(path, text, common::FileAccess::OwnerOnly);
}

CurveKeys read_curve_keys(const std::string& path) {
  YAML::Node root;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw common::DataError(path + ": is a directory, not a key file (write one with orchestra keygen)");
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw common::DataError(path + ": cannot read the key file (" + e.what() + ")");
  }
  const auto key = [&](const char* name) {
    const YAML::Node v = root.IsMap() ? root[name] : YAML::Node();
    if (!v || !v.IsScalar() || v.Scalar().size() != 40)
      throw common::DataError(path + ": " + name + ": expected a 40-character Z85 key (write one with orchestra keygen)");
    return v.Scalar();
  };
  return CurveKeys{{key("server_public"), key("server_secret")}, {key("client_public"), key("client_secret")}};
}

void make_curve_server(zmq::socket_t& socket, const CurveKeys& keys) {
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, keys.server.secret_key);
  socket.set(zmq::sockopt::zap_domain, "orchestra-a3c");
}

void make_curve_client(zmq::socket_t& socket, const CurveKeys& keys) {
  socket.set(zmq::sockopt::curve_serverkey, keys.server.public_key);
  socket.set(zmq::sockopt::curve_publickey, keys.client.public_key);
  socket.set(zmq::sockopt::curve_secretkey, keys.client.secret_key);
}

ZapAuthenticator::ZapAuthenticator(zmq::context_t& context, std::string allowed_client_public_key)
    : socket_(context, zmq::socket_type::rep), allowed_(std::move(allowed_client_public_key)) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind("inproc://zeromq.zap.01");
  thread_ = std::thread([this] { serve(); });
}

ZapAuthenticator::~ZapAuthenticator() {
  stop_ = true;
  thread_.join();
}

void ZapAuthenticator::serve() {
  while (!stop_) {
    zmq::pollitem_t item{static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
    if (!(item.revents & ZMQ_POLLIN)) continue;
    // RFC 27: version, request id, domain, address, identity, mechanism, credentials...
    std::vector<zmq::message_t> frames;
    do {
      frames.emplace_back();
      if (!socket_.recv(frames.back(), zmq::recv_flags::none)) break;
    } while (frames.back().more());
    bool ok = false;
    if (frames.size() >= 7 && frames[5].to_string() == "CURVE" && frames[6].size() == 32) {
      std::array<char, 41> z85{};
      zmq_z85_encode(z85.data(), static_cast<const std::uint8_t*>(frames[6].data()), 32);
      ok = allowed_ == z85.data();
    }
    if (!ok) ++refused_;
    const std::string version = frames.size() > 0 ? frames[0].to_string() : "1.0";
    const std::string request = frames.size() > 1 ? frames[1].to_string() : "";
    socket_.send(zmq::buffer(version), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(request), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(std::string(ok ? "200" : "400")), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(std::string(ok ? "OK" : "unknown client key")), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(std::string(ok ? "agent" : "")), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(std::string()), zmq::send_flags::none);
  }
}

}  // namespace agents
