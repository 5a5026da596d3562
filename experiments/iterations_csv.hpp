// iterations.csv: one row per round (iteration), one column pair per worker, ready to plot as LBB
// Fig. 7 (a) compute time, (b) batch size and (c) straggler effect per iteration. rounds.csv holds
// the same numbers one row per round and worker; this is its wide form.
//
//   round,clock_ms,straggler_effect,<w>_batch,<w>_ms,...   (w: each worker's name, cluster order)
#pragma once

#include <string>
#include <vector>

#include "env/round_plan.hpp"

namespace experiments {

std::string iterations_csv_header(const std::vector<std::string>& worker_names);

// Appends the round's row: the batch each worker used and its compute time (0 and 0 for a
// worker out of the round).
void append_iteration_row(std::string& csv, const env::RoundReport& report);

}  // namespace experiments
