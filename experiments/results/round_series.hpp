// Per-round, per-worker series for the plots (LBB Fig. 7; Orchestra's T and tau_n), read from a
// policy's rounds.csv (long: one row per round and worker) or, when a run did not write that,
// from LBB's iterations.csv (wide: round, clock_ms, straggler_effect, <worker>_batch, <worker>_ms).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace experiments {

struct WorkerSeries {
  std::string name;
  // Indexed like RoundSeries::round; NaN where the file has no value for this worker.
  std::vector<double> compute_ms;
  std::vector<double> batch_size;
  std::vector<double> local_steps;  // tau_n for Orchestra's policies
  std::vector<double> idle_ms;      // rounds.csv only (NaN from iterations.csv)
};

struct RoundSeries {
  std::vector<std::int64_t> round;
  std::vector<int> epoch;               // -1 where the file does not say (iterations.csv)
  std::vector<double> straggler_effect;
  std::vector<double> barrier_ms;       // T for Orchestra's policies; 0 or NaN for the others
  // rounds.csv only (NaN where the file does not have them): the round's communication, length
  // and clock at its end, as the run's clock counted them (simulated, or wall time in real runs).
  std::vector<double> comm_ms;
  std::vector<double> round_ms;
  std::vector<double> clock_ms;
  std::vector<WorkerSeries> workers;    // in the order they first appear
};

// Measured: every number of every row must be finite and >= 0 (times, batches, the clock), as a
// run writes them; what calibrate fits. Plots take what there is.
enum class RoundsCheck { AsWritten, Measured };

// Throws common::DataError for an unreadable or malformed file (and, with Measured, naming the
// line and column of a value that is not a finite number >= 0).
RoundSeries read_rounds_csv(const std::string& path, RoundsCheck check = RoundsCheck::AsWritten);
RoundSeries read_iterations_csv(const std::string& path);

// True if some round has a barrier T (> 0): the run used a barrier policy (orchestra-lcm, fixed-t, A3C).
bool has_barrier(const RoundSeries& series);

}  // namespace experiments
