#include "env/train/compute_threads.hpp"

#include <dlfcn.h>
#include <torch/torch.h>

namespace env {

void set_compute_threads(int threads) {
  at::set_num_threads(threads);
  // Debian's libtorch reaches BLAS through the libblas.so.3 alternative; when that is OpenBLAS,
  // its thread count is set through its own entry point, looked up at run time so that other
  // BLAS implementations still work.
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(threads);
}

}  // namespace env
