// The four collectives C10dCommunicator uses, over one of c10d's process groups. ProcessGroupGloo
// and ProcessGroupNCCL derive from c10d::ProcessGroup in libtorch 1.x (Debian's) and from
// c10d::Backend in 2.x (PyTorch's), with the same calls; C10dGroupOf holds either.
// Private to env/real: only the communicator and the backends' sources (c10d_backend_registry.hpp) include it.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <memory>
#include <string>
#include <vector>

#include "env/real/c10d_communicator.hpp"

namespace env {

class C10dGroup {
 public:
  virtual ~C10dGroup() = default;
  virtual c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors) = 0;
  virtual c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& options) = 0;
  virtual c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& out, std::vector<at::Tensor>& in) = 0;
  virtual c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& options) = 0;
};

template <class Group>
class C10dGroupOf final : public C10dGroup {
 public:
  explicit C10dGroupOf(c10::intrusive_ptr<Group> group) : group_(std::move(group)) {}
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors) override { return group_->allreduce(tensors); }
  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& options) override {
    return group_->broadcast(tensors, options);
  }
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& out, std::vector<at::Tensor>& in) override {
    return group_->allgather(out, in);
  }
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& options) override { return group_->barrier(options); }

 private:
  c10::intrusive_ptr<Group> group_;
};

// The rendezvous store every backend's group is built over (c10d_backend_registry.hpp's makers).
struct C10dStore {
  c10::intrusive_ptr<c10d::Store> store;
};

// Whether `host` names this machine's loopback interface (the Gloo device then binds to it).
inline bool is_loopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0; }

}  // namespace env
