// The communicator over whichever c10d backend the rendezvous names: the process group comes from
// the backend's row in c10d_backend_registry.cpp; this file knows no backend by name.
#include "env/real/c10d_communicator.hpp"
#include "common/errors.hpp"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>

#include "env/real/c10d_backend_registry.hpp"
#include "env/real/c10d_group.hpp"

namespace env {
namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// What the transport's error means for someone reading the log of a failed run.
std::string explain(const std::string& detail, std::chrono::milliseconds timeout) {
  const auto has = [&](const char* s) { return detail.find(s) != std::string::npos; };
  const std::string seconds = std::to_string(timeout.count() / 1000.0).substr(0, 5) + " s";
  if (has("imed out") || has("imeout") || has("timed out"))
    return "no answer within the timeout of " + seconds + " (a worker hung or is far slower than the timeout allows)";
  if (has("closed by peer") || has("reset by peer") || has("Broken pipe") || has("Connection refused") || has("EOF"))
    return "a peer closed its connection (a worker died or stopped)";
  return "transport error";
}

// libtorch reports through c10::Error; the backtrace stays out of the one-line message.
std::string reason_of(const std::exception& e) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) return first_line(c10->what_without_backtrace());
  return first_line(e.what());
}

}  // namespace

std::string backend_unavailable_reason(const std::string& backend) {
  const C10dBackend* row = find_c10d_backend(backend);
  return row ? row->unavailable() : "no c10d backend named '" + backend + "'";
}

std::string broadcast_bytes(Communicator& comm, const std::string& bytes, int root, const std::string& what) {
  torch::Tensor size = torch::full({1}, static_cast<std::int64_t>(bytes.size()), torch::kInt64);
  comm.broadcast(size, root, what + " (size)");
  const std::int64_t n = size.item<std::int64_t>();
  if (n < 0 || n > (std::int64_t{1} << 30)) throw common::CommError(comm.describe() + ": " + what + ": implausible message size " + std::to_string(n));
  torch::Tensor payload = torch::zeros({n}, torch::kUInt8);
  if (comm.rank() == root && n > 0) std::memcpy(payload.data_ptr<std::uint8_t>(), bytes.data(), bytes.size());
  if (n > 0) comm.broadcast(payload, root, what);
  return std::string(reinterpret_cast<const char*>(payload.data_ptr<std::uint8_t>()), static_cast<std::size_t>(n));
}

// ---------------------------------------------------------------------------------------------

struct RendezvousServer::Impl {
  c10::intrusive_ptr<c10d::TCPStore> store;
};

namespace {

// A port another program listens on: libtorch's store logs three lines of its own before its
// error, breaking the one-line rule; a bind of our own first (with the SO_REUSEADDR the store
// sets, so a port in TIME_WAIT still passes) says it in one. Port 0 (the OS picks) always passes.
std::optional<std::string> port_in_use(int port) {
  if (port == 0) return std::nullopt;
  const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return std::nullopt;  // no IPv6 here: the store says what it finds
  const int yes = 1, no = 0;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof no);  // [::] covers 0.0.0.0, as the store binds
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_any;
  address.sin6_port = htons(static_cast<std::uint16_t>(port));
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  const int error = errno;
  ::close(fd);
  if (bound || error != EADDRINUSE) return std::nullopt;
  return std::string(std::strerror(error));
}

}  // namespace

RendezvousServer::RendezvousServer(int port, std::chrono::milliseconds timeout) : impl_(std::make_unique<Impl>()) {
  if (const auto why = port_in_use(port))
    throw common::CommError("cannot host the rendezvous store on port " + std::to_string(port) + ": " + *why +
                            " (another launch, or another program, listens there): choose another --master-port");
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(port);
  options.isServer = true;
  options.waitWorkers = false;  // the workers are counted by the process group's own rendezvous
  options.timeout = timeout;
  try {
    impl_->store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
  } catch (const std::exception& e) {
    throw common::CommError("cannot host the rendezvous store on port " + std::to_string(port) + ": " + reason_of(e));
  }
}

RendezvousServer::~RendezvousServer() = default;

int RendezvousServer::port() const { return impl_->store->getPort(); }

// ---------------------------------------------------------------------------------------------

struct C10dCommunicator::Impl {
  RendezvousSpec spec;
  c10::intrusive_ptr<c10d::Store> store;
  std::unique_ptr<C10dGroup> group;
  // Where the collectives run: the rank's GPU under NCCL, the CPU under Gloo (a GPU rank's tensors
  // are staged through host memory, as ProcessGroupGloo itself would do with CUDA tensors).
  torch::Device device = torch::kCPU;

  [[noreturn]] void fail(const std::string& what, const std::exception& e) const {
    const std::string detail = reason_of(e);
    throw common::CommError(spec.backend + " rank " + std::to_string(spec.rank) + "/" +
                    std::to_string(spec.world_size) + ": " + what + " failed: " + explain(detail, spec.timeout) + " [" +
                    detail + "]");
  }

  // Every collective waits at most the timeout: no blocking wait without one.
  void run(const std::string& what, const std::function<c10::intrusive_ptr<c10d::Work>()>& start) {
    if (!group) throw common::CommError("rank " + std::to_string(spec.rank) + ": " + what + ": the process group was abandoned");
    try {
      start()->wait(spec.timeout);
    } catch (const std::exception& e) {
      fail(what, e);
    }
  }
};

C10dCommunicator::C10dCommunicator(const RendezvousSpec& spec) : impl_(std::make_unique<Impl>()) {
  impl_->spec = spec;
  if (spec.world_size < 1 || spec.rank < 0 || spec.rank >= spec.world_size)
    throw common::CommError("rank " + std::to_string(spec.rank) + " outside world size " + std::to_string(spec.world_size));
  const C10dBackend* backend = find_c10d_backend(spec.backend);
  const std::string unavailable = backend_unavailable_reason(spec.backend);
  if (!backend || !unavailable.empty() || !backend->make)
    throw common::CommError("the " + spec.backend + " backend is not available: " + unavailable);
  if (backend->one_gpu_per_rank && !spec.device.is_cuda())
    throw common::CommError("the " + spec.backend + " backend reduces CUDA tensors, but rank " + std::to_string(spec.rank) +
                            " trains on the CPU (set runtime.device: cuda)");
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(spec.master_port);
  options.isServer = false;
  options.timeout = spec.timeout;
  try {
    auto tcp = c10::make_intrusive<c10d::TCPStore>(spec.master_addr, options);
    impl_->store = c10::make_intrusive<c10d::PrefixStore>("orchestra", tcp);
  } catch (const std::exception& e) {
    impl_->fail("connecting to the rendezvous store at " + spec.master_addr + ":" + std::to_string(spec.master_port), e);
  }
  try {
    if (backend->one_gpu_per_rank) impl_->device = spec.device;  // its collectives run on the rank's GPU
    impl_->group = backend->make(C10dStore{impl_->store}, spec);
  } catch (const common::CommError&) {
    throw;
  } catch (const std::exception& e) {
    impl_->fail("building the process group (every rank must arrive within the timeout)", e);
  }
}

C10dCommunicator::~C10dCommunicator() = default;

int C10dCommunicator::rank() const { return impl_->spec.rank; }
int C10dCommunicator::world_size() const { return impl_->spec.world_size; }
std::chrono::milliseconds C10dCommunicator::timeout() const { return impl_->spec.timeout; }

std::string C10dCommunicator::describe() const {
  return impl_->spec.backend + " rank " + std::to_string(impl_->spec.rank) + "/" +
         std::to_string(impl_->spec.world_size);
}

void C10dCommunicator::all_reduce_sum(std::vector<torch::Tensor>& tensors, const std::string& what) {
  if (tensors.empty()) return;
  // One flat buffer: c10d's vector argument means "one tensor per local device", not a list of
  // parameters, and one message is cheaper than one per layer.
  std::vector<torch::Tensor> flat_parts;
  for (const auto& t : tensors) flat_parts.push_back(t.reshape({-1}));
  std::vector<torch::Tensor> buffer{torch::cat(flat_parts).to(impl_->device)};
  impl_->run(what, [&] { return impl_->group->allreduce(buffer); });
  const torch::Tensor& result = buffer[0];  // copy_ below moves it back where each tensor lives
  torch::NoGradGuard no_grad;
  std::int64_t offset = 0;
  for (auto& t : tensors) {
    t.copy_(result.slice(0, offset, offset + t.numel()).view_as(t));
    offset += t.numel();
  }
}

void C10dCommunicator::broadcast(torch::Tensor& tensor, int root, const std::string& what) {
  std::vector<torch::Tensor> buffer{tensor.contiguous().to(impl_->device)};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  options.timeout = impl_->spec.timeout;
  impl_->run(what, [&] { return impl_->group->broadcast(buffer, options); });
  tensor.copy_(buffer[0]);
}

torch::Tensor C10dCommunicator::all_gather(const torch::Tensor& input, const std::string& what) {
  const int n = impl_->spec.world_size;
  std::vector<torch::Tensor> in{input.contiguous().to(impl_->device)};
  std::vector<std::vector<torch::Tensor>> out(1);
  for (int r = 0; r < n; ++r) out[0].push_back(torch::empty_like(in[0]));
  impl_->run(what, [&] { return impl_->group->allgather(out, in); });
  return torch::stack(out[0]).to(torch::kCPU);
}

void C10dCommunicator::barrier(const std::string& what) {
  c10d::BarrierOptions options;
  options.timeout = impl_->spec.timeout;
  impl_->run(what, [&] { return impl_->group->barrier(options); });
}

void C10dCommunicator::abandon() {
  // Deliberately leaked: destroying a group whose peer died joins a transport thread that may still
  // be blocked until its own timeout, and the process is about to exit anyway.
  if (impl_->group) (void)impl_->group.release();
  if (impl_->store) (void)impl_->store.release();
}

}  // namespace env
