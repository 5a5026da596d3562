// Configure-time check (cmake/StdlibFirst.cmake): built and linked exactly as the project's
// executables are, it finds which shared object each std::filesystem function this project calls
// resolves into, and fails unless every one is the C++ standard library's own.
//
// Why: PyTorch's pip wheels export their own copies of libstdc++ symbols (std::filesystem among
// them) from libtorch.so and libtorch_cpu.so. Where a torch library comes before libstdc++ in an
// executable's DT_NEEDED list, the dynamic linker binds the program's calls to those copies, and
// std::filesystem::remove_all crashed there (issue 40). The project links libstdc++ first.
//
// The lookup is dlsym(RTLD_NEXT, name): the first definition after this executable in the
// global search order, which is what the program's own calls bind to, PIE or not.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;

namespace {

struct Probe {
  const char* name;
  void* address;  // as this program sees it: only used to find the symbol's mangled name
};

bool is_stdlib(const char* file) { return file != nullptr && std::strstr(file, "libstdc++") != nullptr; }

}  // namespace

int main() {
  // The functions this project calls most (common/, experiments/): each std::filesystem function
  // a preempting library exports is as likely as another to be one of them.
  const Probe probes[] = {
      {"std::filesystem::remove_all", reinterpret_cast<void*>(static_cast<std::uintmax_t (*)(const fs::path&)>(&fs::remove_all))},
      {"std::filesystem::create_directories", reinterpret_cast<void*>(static_cast<bool (*)(const fs::path&)>(&fs::create_directories))},
      {"std::filesystem::status (exists, is_directory)", reinterpret_cast<void*>(static_cast<fs::file_status (*)(const fs::path&)>(&fs::status))},
      {"std::filesystem::rename", reinterpret_cast<void*>(static_cast<void (*)(const fs::path&, const fs::path&)>(&fs::rename))},
      {"std::filesystem::remove", reinterpret_cast<void*>(static_cast<bool (*)(const fs::path&)>(&fs::remove))},
      {"std::filesystem::absolute", reinterpret_cast<void*>(static_cast<fs::path (*)(const fs::path&)>(&fs::absolute))},
      {"std::filesystem::temp_directory_path", reinterpret_cast<void*>(static_cast<fs::path (*)()>(&fs::temp_directory_path))},
  };
  int preempted = 0;
  for (const Probe& p : probes) {
    Dl_info seen{};
    if (dladdr(p.address, &seen) == 0 || seen.dli_sname == nullptr) {
      std::printf("%s: no symbol found for its address\n", p.name);
      ++preempted;
      continue;
    }
    void* bound = dlsym(RTLD_NEXT, seen.dli_sname);
    Dl_info where{};
    if (bound == nullptr || dladdr(bound, &where) == 0) {
      // Only possible with a libstdc++ linked statically into the executable: then it is its own.
      std::printf("%s: defined in the executable itself\n", p.name);
      continue;
    }
    std::printf("%s (%s) -> %s\n", p.name, seen.dli_sname, where.dli_fname);
    if (!is_stdlib(where.dli_fname)) {
      std::printf("PREEMPTED: %s resolves into %s, not into libstdc++\n", p.name, where.dli_fname);
      ++preempted;
    }
  }
  if (preempted > 0) return 1;
  // And they work: the calls that crashed with libtorch's copies bound (issue 40).
  const fs::path dir = fs::temp_directory_path() / ("orchestra-stdlib-check-" + std::to_string(::getpid()));
  fs::create_directories(dir / "a" / "b");
  const bool made = fs::exists(dir / "a" / "b") && fs::is_directory(dir / "a");
  const std::uintmax_t removed = fs::remove_all(dir);
  if (!made || removed != 3 || fs::exists(dir)) {
    std::printf("std::filesystem calls gave wrong results (made %d, removed %ju)\n", made ? 1 : 0, removed);
    return 1;
  }
  std::printf("every std::filesystem function checked resolves into libstdc++\n");
  return 0;
}
