// The Communicator of real runs over one of c10d's process groups, the backend's row in the table
// of c10d_backend_registry.hpp: ProcessGroupGloo (collectives on the CPU, for ranks that train on
// the CPU or on a GPU), ProcessGroupNCCL for ranks that train on a GPU each, where libtorch has
// CUDA (compiled away otherwise: backend_unavailable_reason says why). Rendezvous goes through a
// c10d::TCPStore hosted by RendezvousServer (the launcher on node 0, as torchrun's agent does).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "env/real/communicator.hpp"
#include "common/errors.hpp"

namespace env {

struct RendezvousSpec {
  std::string master_addr = "127.0.0.1";  // where the TCPStore listens
  int master_port = 0;                    // its port (RendezvousServer::port())
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;                     // rank on this machine (env::rank_device picks its GPU from it)
  std::chrono::milliseconds timeout{60000};  // every store call and every collective
  std::string backend = "gloo";           // a name in the c10d backend table (c10d_backend_registry.hpp)
  torch::Device device = torch::kCPU;     // where this rank trains; NCCL runs the collectives there (a GPU)
};

// Hosts the TCPStore every rank connects to. Port 0 asks the OS for a free port (single-node
// runs); a multi-machine run passes the agreed --master-port.
class RendezvousServer {
 public:
  RendezvousServer(int port, std::chrono::milliseconds timeout);
  ~RendezvousServer();
  RendezvousServer(const RendezvousServer&) = delete;
  RendezvousServer& operator=(const RendezvousServer&) = delete;
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class C10dCommunicator final : public Communicator {
 public:
  // Connects to the store and builds the process group; throws common::CommError when the store cannot be
  // reached or not every rank arrives within the timeout.
  explicit C10dCommunicator(const RendezvousSpec& spec);
  ~C10dCommunicator() override;

  int rank() const override;
  int world_size() const override;
  std::chrono::milliseconds timeout() const override;
  std::string describe() const override;
  void all_reduce_sum(std::vector<torch::Tensor>& tensors, const std::string& what) override;
  void broadcast(torch::Tensor& tensor, int root, const std::string& what) override;
  torch::Tensor all_gather(const torch::Tensor& input, const std::string& what) override;
  void barrier(const std::string& what) override;
  void abandon() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Why `backend` cannot run here, in one clause (empty when it can): NCCL needs a CUDA libtorch,
// the CUDA and NCCL headers at configure time, and a visible GPU; Gloo a libtorch built with it;
// a name not in the table cannot run anywhere.
std::string backend_unavailable_reason(const std::string& backend);

}  // namespace env
