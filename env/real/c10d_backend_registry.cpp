// Which backends this build has comes from c10d_backends.hpp, written by CMake
// (cmake/TorchSetup.cmake): Gloo where libtorch was built with it and its headers were found, NCCL
// where libtorch has CUDA and the CUDA and NCCL headers were found.
#include "env/real/c10d_backend_registry.hpp"

#include <cstdio>

#include "c10d_backends.hpp"
#include "env/real/c10d_group.hpp"
#include "env/train/device.hpp"

namespace env {

// Each backend's process group, in a source of its own compiled only where CMake found what it
// needs (a c10d backend's header pulls in its transport's headers).
std::unique_ptr<C10dGroup> make_gloo_group(const C10dStore& store, const RendezvousSpec& spec);  // gloo_process_group.cpp
std::unique_ptr<C10dGroup> make_nccl_group(const C10dStore& store, const RendezvousSpec& spec);  // nccl_process_group.cpp

namespace {

std::string gloo_unavailable() { return ORCHESTRA_HAVE_GLOO ? "" : ORCHESTRA_NO_GLOO_REASON; }

std::string nccl_unavailable() {
#if ORCHESTRA_HAVE_NCCL
  return cuda_unavailable_reason();  // compiled in; a GPU must also be visible
#else
  return ORCHESTRA_NO_NCCL_REASON;
#endif
}

}  // namespace

const std::vector<C10dBackend>& c10d_backends() {
  static const std::vector<C10dBackend> table = {
      {"gloo", "ProcessGroupGloo: collectives in host memory over TCP; ranks on the CPU or on GPUs (staged through host memory)",
       false, gloo_unavailable,
#if ORCHESTRA_HAVE_GLOO
       make_gloo_group
#else
       nullptr
#endif
      },
      {"nccl", "ProcessGroupNCCL: collectives on each rank's GPU (runtime.device: cuda, one GPU per rank; a CUDA libtorch)", true,
       nccl_unavailable,
#if ORCHESTRA_HAVE_NCCL
       make_nccl_group
#else
       nullptr
#endif
      },
  };
  return table;
}

std::vector<std::string> c10d_backend_names() {
  std::vector<std::string> names;
  for (const auto& b : c10d_backends()) names.emplace_back(b.name);
  return names;
}

const C10dBackend* find_c10d_backend(const std::string& name) {
  for (const auto& b : c10d_backends())
    if (name == b.name) return &b;
  return nullptr;
}

std::string c10d_backend_help() {
  std::string text;
  for (const auto& b : c10d_backends()) {
    char line[320];
    std::snprintf(line, sizeof line, "  %-6s %s\n", b.name, b.summary);
    text += line;
    if (const std::string why = b.unavailable(); !why.empty()) text += "         (cannot run here: " + why + ")\n";
  }
  return text;
}

}  // namespace env
