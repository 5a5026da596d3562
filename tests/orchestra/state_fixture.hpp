// The barrier controller's state inputs of a two-worker cluster, shared by the state's tests.
#pragma once

#include <vector>

#include "orchestra/rl_state.hpp"

namespace testing {

// A 2080 Ti and a T4 at their batch (10 and 20 ms), T = 40 ms after a start at 20 ms, an
// all-reduce of 160 ms, tau = 4 and 2.
inline orchestra::StateInputs two_workers() {
  orchestra::StateInputs in;
  in.batch_ms = {10, 20};
  in.start_batch_ms = {10, 20};
  in.local_steps = {4, 2};
  in.max_local_steps = 64;
  in.barrier_ms = 40;
  in.start_barrier_ms = 20;
  in.min_barrier_ms = 10;
  in.max_barrier_ms = 640;
  in.comm_ms = 160;
  return in;
}

// A state entry by its StateLayout index.
inline float at(const std::vector<float>& s, int i) { return s[static_cast<std::size_t>(i)]; }

}  // namespace testing
