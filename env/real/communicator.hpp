// Collectives between the worker processes of a real run (docs/ARCHITECTURE.md "Real runs"). The simulated
// cluster averages in process (ReplicaSet) and needs none of this; real runs go through c10d
// (C10dCommunicator). Every call blocks for at most the communicator's timeout and then throws
// common::CommError, so a dead or hung peer ends a run with one clear message instead of a hang.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <stdexcept>

#include "common/errors.hpp"
#include <string>
#include <vector>

namespace env {

// A collective that fails or times out throws common::CommError; the message names the operation,
// this rank, and what the transport said (a peer that closed its connection, a timeout).
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual std::chrono::milliseconds timeout() const = 0;
  // "gloo rank 1/2": for messages.
  virtual std::string describe() const = 0;

  // Sums `tensors` (any shapes, one dtype) over all ranks, in place. `what` names the call in
  // error messages ("model average of round 12").
  virtual void all_reduce_sum(std::vector<torch::Tensor>& tensors, const std::string& what) = 0;
  // Copies `root`'s `tensor` into every rank's `tensor` (same shape and dtype everywhere).
  virtual void broadcast(torch::Tensor& tensor, int root, const std::string& what) = 0;
  // Every rank's `input` (same shape on all ranks), stacked in rank order: [world_size, ...].
  virtual torch::Tensor all_gather(const torch::Tensor& input, const std::string& what) = 0;
  virtual void barrier(const std::string& what) = 0;
  // Drops this rank's share of the group without waiting for the others. Called on the failure
  // path only: a group whose peer died can block its own destructor on the transport's timeout.
  virtual void abandon() = 0;
};

// Broadcasts a byte string from `root` (its length first, then the bytes); returns it on every rank.
std::string broadcast_bytes(Communicator& comm, const std::string& bytes, int root, const std::string& what);

}  // namespace env
