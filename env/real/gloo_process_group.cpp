// c10d's ProcessGroupGloo (the `gloo` row of c10d_backend_registry.cpp), in a source of its own: its
// header includes Gloo's headers, which a pip PyTorch does not ship, so configure may take them from
// elsewhere (Debian's libgloo-dev) after checking this very file against them
// (cmake/GlooHeaders.cmake): compiled with them, it must hold no code of Gloo's and depend on no
// Gloo class's layout, only on libtorch's own ProcessGroupGloo (whose object, devices and contexts
// libtorch builds and destroys). CMake compiles it only where ORCHESTRA_HAVE_GLOO.
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <cstdlib>

#include "env/real/c10d_group.hpp"

namespace env {

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
