// Fitting the alpha-beta network model to measured all-reduce times: a ring all-reduce of B bytes
// over N ranks costs 2(N-1) alpha + 2(N-1)/N B / beta (env/sim/network.hpp), so the measured times
// are regressed on x1 = 2(N-1) and x2 = 2(N-1)/N B by least squares.
//
// A real run on one machine usually sends one message size among one number of ranks, which
// leaves alpha and beta inseparable (x2 / x1 is the same in every round): then the bandwidth is
// kept as configured and the latency alone is fitted, which reproduces the measured times of that
// message exactly as well; the fit says which of the two happened.
#pragma once

#include <cstddef>
#include <vector>

#include "env/sim/network.hpp"

namespace experiments::calibration {

struct MeasuredAllReduce {
  int participants = 0;
  double bytes = 0;
  double ms = 0;
};

enum class NetworkFitKind { AlphaAndBeta, AlphaOnly };

struct NetworkFit {
  env::LinkSpec link;
  NetworkFitKind kind = NetworkFitKind::AlphaOnly;
  std::size_t rounds = 0;   // measured all-reduces used
  double mean_ms = 0;       // their mean
  double rms_ms = 0;        // residuals of the fit
};

// `configured` gives the bandwidth kept when only alpha can be fitted. Rounds with fewer than 2
// participants (no all-reduce) are skipped. Throws common::DataError when none is left.
NetworkFit fit_network(const std::vector<MeasuredAllReduce>& measured, const env::LinkSpec& configured);

}  // namespace experiments::calibration
