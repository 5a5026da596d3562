// Thread settings for CPU training. libtorch's intra-op pool (OpenMP) and OpenBLAS's own pthreads
// each default to every core; on 2 cores the two pools fight (README "Threads" has the figures),
// so both are set to the same small count explicitly.
#pragma once

namespace env {

void set_compute_threads(int threads);

}  // namespace env
