// The per-round results files, written by the one run loop (runner/run_loop.cpp) for simulated and
// real runs alike, and the number format every CSV of a run uses.
//
// rounds.csv, one row per round and worker:
//   round,epoch,worker,batch_size,local_steps,compute_ms,idle_ms,comm_ms,round_ms,clock_ms,straggler_effect,barrier_ms
// iterations.csv, one row per round (iteration), one column pair per worker, ready to plot as LBB
// Fig. 7 (a) compute time, (b) batch size and (c) straggler effect per iteration; the wide form of
// the same numbers:
//   round,clock_ms,straggler_effect,<w>_batch,<w>_ms,...   (w: each worker's name, cluster order)
#pragma once

#include <string>
#include <vector>

#include "env/round_plan.hpp"

namespace experiments {

// Nine significant digits ("%.9g"), "nan" for NaN: the same value always gives the same text, so
// identical runs give identical files.
std::string csv_number(double value);

std::string rounds_csv_header();
void append_round_rows(std::string& csv, const env::RoundReport& report, const std::vector<std::string>& worker_names);

std::string iterations_csv_header(const std::vector<std::string>& worker_names);
// Appends the round's row: the batch each worker used and its compute time (0 and 0 for a
// worker out of the round).
void append_iteration_row(std::string& csv, const env::RoundReport& report);

}  // namespace experiments
