// c10d's ProcessGroupGloo (the `gloo` row of c10d_backend_registry.cpp), in a source of its own:
// c10d's header hides it behind USE_C10D_GLOO, which CMake sets here where this build has Gloo's
// headers (ORCHESTRA_HAVE_GLOO, cmake/TorchSetup.cmake), and compiles the source only then.
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <cstdlib>

#include "env/real/c10d_communicator.hpp"
#include "env/real/c10d_group.hpp"

namespace env {
namespace {

bool is_loopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0; }

}  // namespace

std::unique_ptr<C10dGroup> make_gloo_group(const C10dStore& store, const RendezvousSpec& spec) {
  auto options = c10d::ProcessGroupGloo::Options::create(spec.timeout);
  // GLOO_SOCKET_IFNAME picks the interface on multi-homed machines, as in PyTorch.
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"))
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
  else if (is_loopback(spec.master_addr))
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  else
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  options->threads = 1;  // one collective at a time: the round loop never overlaps them
  return std::make_unique<C10dGroupOf<c10d::ProcessGroupGloo>>(
      c10::make_intrusive<c10d::ProcessGroupGloo>(store.store, spec.rank, spec.world_size, options));
}

}  // namespace env
