// c10d's ProcessGroupNCCL (the `nccl` row of c10d_backend_registry.cpp), in a source of its own:
// its header needs the CUDA toolkit's and NCCL's headers (cuda_runtime_api.h, cublas_v2.h,
// nccl.h), which only a CUDA build has. CMake compiles it only when it found them
// (ORCHESTRA_HAVE_NCCL, cmake/TorchSetup.cmake).
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include <cstdlib>

#include "env/real/c10d_communicator.hpp"
#include "env/real/c10d_group.hpp"

namespace env {

std::unique_ptr<C10dGroup> make_nccl_group(const C10dStore& store, const RendezvousSpec& spec) {
  // Blocking wait: Work::wait(timeout) blocks until the collective is done or the timeout has
  // passed, then throws, as Gloo's does; without it wait() returns at once and a hung peer shows
  // up only when the result is copied, with no timeout of ours. Read when the group is built; the
  // first name is PyTorch 2.x's, the second 1.x's. A value the user set is kept.
  ::setenv("TORCH_NCCL_BLOCKING_WAIT", "1", /*overwrite=*/0);
  ::setenv("NCCL_BLOCKING_WAIT", "1", /*overwrite=*/0);
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = spec.timeout;
  return std::make_unique<C10dGroupOf<c10d::ProcessGroupNCCL>>(
      c10::make_intrusive<c10d::ProcessGroupNCCL>(store.store, spec.rank, spec.world_size, options));
}

}  // namespace env
