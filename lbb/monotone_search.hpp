// Binary searches over a nondecreasing time function of the batch size, shared by the Eq. 3
// solver and its tie-break.
#pragma once

namespace lbb::detail {

// Largest b in [lo, hi] with t(b) <= threshold, given that lo qualifies (lo == 0 always does:
// a worker with no samples takes no time, and t is never called at 0).
template <class Time>
int largest_within(const Time& t, int lo, int hi, double threshold) {
  while (lo < hi) {
    const int mid = static_cast<int>(lo + (static_cast<long long>(hi) - lo + 1) / 2);  // no overflow at INT_MAX
    if (t(mid) <= threshold) lo = mid; else hi = mid - 1;
  }
  return lo;
}

// Smallest b in [lo, hi] with t(b) >= level, given that hi qualifies.
template <class Time>
int smallest_reaching(const Time& t, int lo, int hi, double level) {
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (t(mid) >= level) hi = mid; else lo = mid + 1;
  }
  return lo;
}

}  // namespace lbb::detail
