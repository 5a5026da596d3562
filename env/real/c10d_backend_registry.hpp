// The c10d backends a real run can reduce with: one table from which `orchestra launch --backend`'s
// spellings and --help, the ORCHESTRA_BACKEND a worker reads, the checks before a launch and the
// communicator's process group all come. To add a backend: the source that builds its process
// group (a `*_process_group.cpp` beside gloo_process_group.cpp), one row in
// c10d_backend_registry.cpp, and env/real/CMakeLists.txt compiling that source where its headers
// are found (docs/ARCHITECTURE.md, "Adding things"). A test runs the communicator's collectives
// over every backend that can run here.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace env {

struct RendezvousSpec;  // c10d_communicator.hpp
class C10dGroup;        // c10d_group.hpp (private to env/real)
struct C10dStore;       // c10d_group.hpp: the rendezvous store, as c10d holds it

struct C10dBackend {
  const char* name;     // `orchestra launch --backend`, ORCHESTRA_BACKEND
  const char* summary;  // one line for --help
  // Its collectives run on each rank's own GPU (NCCL): a rank on the CPU, or two ranks of a
  // machine on one GPU, are refused. Otherwise they run in host memory (Gloo), a GPU rank's
  // tensors staged through it, and ranks may share a GPU.
  bool one_gpu_per_rank;
  // Why it cannot run in this build or on this machine, in one clause; empty when it can.
  std::string (*unavailable)();
  // Its process group over the store; null where this build did not compile it (`unavailable` says why).
  std::unique_ptr<C10dGroup> (*make)(const C10dStore& store, const RendezvousSpec& spec);
};

// Every backend, the default (gloo) first, in the order --help lists them.
const std::vector<C10dBackend>& c10d_backends();
std::vector<std::string> c10d_backend_names();
// The row of `name`, or null for a name not in the table.
const C10dBackend* find_c10d_backend(const std::string& name);
// "  name   summary" lines, one per backend, with "(not in this build: why)" where one cannot run.
std::string c10d_backend_help();

}  // namespace env
