// Trace replay of a measured slowdown over time (`perturbations: {trace: FILE.csv}`): a worker's
// speed as it was recorded, e.g. a co-located job that came and went, turned into the scheduled
// perturbations the simulator (and a real run) already applies: t -> t * slowdown + add_ms.
//
// The file is CSV with a header; columns, in any order:
//   time_s    from when the row holds, in seconds of the run's clock; must not decrease
//   worker    the worker it slows (a name of the cluster)
//   slowdown  the factor on its step time from time_s on (> 0; 1 = its own speed)
//   add_ms    optional: milliseconds added to each step from time_s on (>= 0)
// A row holds until the same worker's next row (the last one to the end of the run).
#pragma once

#include <string>
#include <vector>

#include "env/sim/cluster.hpp"

namespace env {

// Throws common::DataError naming the file and line for a missing file or column, fewer than
// kMinPerturbationTraceRows rows, a time that goes back, a negative or non-finite value, a
// slowdown <= 0, and a worker not in `workers` (the cluster's names, in order).
std::vector<Perturbation> read_perturbation_trace(const std::string& path, const std::vector<std::string>& workers);

constexpr std::size_t kMinPerturbationTraceRows = 2;

}  // namespace env
