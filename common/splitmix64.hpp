// SplitMix64 (Steele, Lea and Flood 2014, "Fast splittable pseudorandom number generators"): one
// 64-bit mix that decorrelates seeds differing by one, so that seed + k gives streams that look
// independent. The agents seed every episode with it, and the vector environment its per-env
// episode streams (orchestra/vector_barrier_env.hpp).
#pragma once

#include <cstdint>

namespace common {

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace common
