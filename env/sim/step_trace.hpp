// Trace replay of a worker's measured step times (`time_model: {trace: FILE.csv}`): instead of
// LBB Eq. 1, the worker's k-th training step takes the k-th time its trace recorded, so a
// simulation can run on times measured on a real cluster (a real run of this toolkit, exported by
// `orchestra calibrate --trace`, or a researcher's own logs in the same form).
//
// The file is CSV with a header; columns, in any order:
//   clock_ms  when the step started on the recording's clock (ms); must not decrease
//   batch     the step's local batch size (samples, >= 1)
//   ms        the step's compute time (ms, >= 0)
//   worker    optional: whose step it was; a file may then hold every worker's trace
// Rows are replayed in file order (the clock only has to agree with that order). A step of the
// batch the row recorded takes exactly the row's time; a step of another batch B takes
// ms * t(B) / t(batch), with t the least-squares line of LBB Eq. 1 through the trace's own
// (batch, ms) points, so a policy that moves batches still sees the measured jitter. After the
// last row the trace starts over from the first.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "env/sim/batch_time_model.hpp"

namespace env {

struct StepTraceRow {
  double clock_ms = 0;
  double batch = 0;
  double ms = 0;
};

class StepTrace {
 public:
  // The rows of `worker` in `path` (every row when the file has no worker column). Throws
  // common::DataError naming the file (and line) for a missing file or column, fewer than
  // kMinRows rows, a clock that goes back, a negative or non-finite time, a batch below 1, and a
  // worker column naming a worker not in `known_workers`.
  static StepTrace read(const std::string& path, const std::string& worker, const std::set<std::string>& known_workers);
  explicit StepTrace(std::vector<StepTraceRow> rows, std::string source = "trace");

  static constexpr std::size_t kMinRows = 2;

  // The time of replayed step number `step` (from 0) for `batch` samples.
  double step_ms(std::size_t step, double batch) const;
  // LBB Eq. 1 fitted to the trace (linear; through the origin with one distinct batch): what
  // profiling (probes) and the policies' estimates see, so probes do not use up trace rows.
  const std::shared_ptr<const BatchTimeModel>& model() const { return model_; }
  const std::vector<StepTraceRow>& rows() const { return rows_; }

 private:
  std::vector<StepTraceRow> rows_;
  std::shared_ptr<const BatchTimeModel> model_;
};

}  // namespace env
