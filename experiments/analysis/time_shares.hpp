// Where a policy's time went: of its workers' time (N workers x the run's clock), the shares spent
// computing, idle at a barrier waiting for the slowest, communicating, and the rest (profiling,
// LBB's Alg. 1, costs clock time but is none of these). The explanation after the comparison
// table and the timeline figure tell the same story from these.
#pragma once

#include "experiments/results/results_reader.hpp"

namespace experiments {

struct TimeShares {
  double compute = 0;  // the run's utilization
  double idle = 0;     // the mean over workers of their idle time, over the clock
  double comm = 0;     // the sum of the rounds' communication, over the clock
  double other = 0;    // what is left (never below 0)
  bool comm_known = false;  // false without rounds.csv: comm is then counted in `other`
};

// Reads the policy's rounds.csv when it has one (throws common::DataError for a malformed one).
TimeShares time_shares(const PolicyResults& policy);

}  // namespace experiments
