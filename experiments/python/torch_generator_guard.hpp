// libtorch's default CPU generator, which Debian's python3-torch shares with this module: the
// toolkit seeds it where it initializes a network (an episode's replicas, env/train/replicas.cpp;
// a policy file's network before its weights are read). From Python that must neither disturb the
// user's own torch.rand draws nor be disturbed by another thread's, so such calls run under
// with_torch_generator: one at a time in the process, the generator's state put back afterwards.
#pragma once

#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace experiments::python {

// Longest a call waits for another thread's to finish with the generator: far above any episode's
// setup (probing and one evaluation), so only a hung call makes it expire.
inline constexpr auto kTorchGeneratorTimeout = std::chrono::minutes(10);

inline std::timed_mutex& torch_generator_lock() {
  static std::timed_mutex lock;
  return lock;
}

// Runs `f` with the default CPU generator put back afterwards (also when `f` throws), without the
// lock: for a whole experiment (orchestra.run), which may take hours and seeds the generator as the
// command line does; the user's next torch draw is what it would have been.
template <class F>
auto keeping_torch_generator(F&& f) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  const at::Tensor saved = generator.get_state();
  struct Restore {
    at::Generator& generator;
    const at::Tensor& state;
    ~Restore() { generator.set_state(state); }
  } restore{generator, saved};
  return f();
}

// Runs `f` holding the process-wide lock, with the default CPU generator put back afterwards
// (also when `f` throws) to the state it had before. `what` names the caller in the timeout's error.
template <class F>
auto with_torch_generator(const std::string& what, F&& f) {
  std::unique_lock<std::timed_mutex> lock(torch_generator_lock(), std::defer_lock);
  if (!lock.try_lock_for(kTorchGeneratorTimeout))
    throw std::runtime_error(what + ": another thread has held libtorch's generator for 10 minutes");
  return keeping_torch_generator(std::forward<F>(f));
}

}  // namespace experiments::python
