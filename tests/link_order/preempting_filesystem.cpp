// A shared library that exports its own std::filesystem::remove_all, as pip's libtorch.so and
// libtorch_cpu.so export copies of libstdc++'s std::filesystem functions (issue 40). Linked before
// libstdc++, it takes over a program's calls; the link-order tests (run_check.cmake) use it to show
// that the configure-time check catches that, and that the project's link order wins over it.
#include <cstdint>
#include <filesystem>

namespace std::filesystem {

// Removes nothing: a program bound to this copy would notice (the check does not get that far).
std::uintmax_t remove_all(const path&) { return 0; }

}  // namespace std::filesystem
