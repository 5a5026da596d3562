#include "env/sim/step_trace.hpp"

#include <algorithm>
#include <cmath>

#include "common/csv_table.hpp"
#include "common/errors.hpp"
#include "common/limits.hpp"

namespace env {
namespace {

constexpr common::Range kClockMs{0.0, common::kClockS.max * 1000.0};

std::string at(const common::CsvTable& t, std::size_t row) { return t.source + ":" + std::to_string(t.lines[row]) + ": "; }

}  // namespace

StepTrace StepTrace::read(const std::string& path, const std::string& worker, const std::set<std::string>& known_workers) {
  const common::CsvTable t = common::read_csv(path);
  const std::size_t clock = t.column("clock_ms"), batch = t.column("batch"), ms = t.column("ms");
  const auto who = t.find("worker");
  std::vector<StepTraceRow> rows;
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    if (who) {
      const std::string& name = t.rows[r][*who];
      if (!known_workers.count(name)) throw common::DataError(at(t, r) + "worker: no worker named '" + name + "' in the cluster");
      if (name != worker) continue;
    }
    StepTraceRow row{t.number(r, clock), t.number(r, batch), t.number(r, ms)};
    // The ranges of the YAML keys that mean the same (common/limits.hpp).
    if (const auto problem = common::range_problem(row.clock_ms, kClockMs)) throw common::DataError(at(t, r) + "clock_ms: " + *problem);
    if (const auto problem = common::range_problem(row.ms, common::kStepMs)) throw common::DataError(at(t, r) + "ms: a step time: " + *problem);
    if (!(row.batch >= 1) || !(row.batch <= static_cast<double>(common::kMaxBatch)))
      throw common::DataError(at(t, r) + "batch: expected a batch size >= 1 and <= " + std::to_string(common::kMaxBatch));
    if (!rows.empty() && row.clock_ms < rows.back().clock_ms)
      throw common::DataError(at(t, r) + "clock_ms: the clock goes back (" + std::to_string(row.clock_ms) + " after " +
                              std::to_string(rows.back().clock_ms) + "): rows must be in the order the steps ran");
    rows.push_back(row);
  }
  if (rows.size() < kMinRows)
    throw common::DataError(path + ": " + std::to_string(rows.size()) + " rows" + (who ? " for worker '" + worker + "'" : "") +
                            ": a trace needs at least " + std::to_string(kMinRows) + " (a constant time is a time_model: {coefficients: [ms]})");
  // As for coefficients: a step must take some time, or profiling and the barrier see 0 ms.
  if (std::all_of(rows.begin(), rows.end(), [](const StepTraceRow& row) { return row.ms == 0; }))
    throw common::DataError(path + ": ms: every step" + (who ? " of worker '" + worker + "'" : "") + " takes 0 ms: a trace needs steps that take time");
  return StepTrace(std::move(rows), path);
}

StepTrace::StepTrace(std::vector<StepTraceRow> rows, std::string source) : rows_(std::move(rows)) {
  if (rows_.size() < kMinRows) throw common::DataError(source + ": a trace needs at least " + std::to_string(kMinRows) + " rows");
  std::vector<BatchTimePoint> points;
  double top = 0, ms_per_sample = 0;
  for (const auto& r : rows_) {
    points.push_back({r.batch, r.ms});
    top = std::max(top, r.batch);
    ms_per_sample += r.ms / r.batch;
  }
  bool one_batch = true;
  for (const auto& r : rows_) one_batch = one_batch && r.batch == rows_.front().batch;
  // One batch size gives no slope: scale in proportion to the batch (a0 = 0).
  BatchTimeModel fitted = one_batch ? BatchTimeModel({0.0, ms_per_sample / static_cast<double>(rows_.size())}, top)
                                    : BatchTimeModel::fit(points, 1);
  // A line with a negative slope (noise over a narrow range of batches) would make larger
  // batches faster, and a negative intercept small batches take no time: keep the mean time per
  // sample then.
  if (fitted.coefficients().size() > 1 && (fitted.coefficients()[1] < 0 || fitted.coefficients()[0] < 0))
    fitted = BatchTimeModel({0.0, ms_per_sample / static_cast<double>(rows_.size())}, top);
  model_ = std::make_shared<const BatchTimeModel>(std::move(fitted));
}

double StepTrace::step_ms(std::size_t step, double batch) const {
  if (batch <= 0) return 0.0;
  const StepTraceRow& row = rows_[step % rows_.size()];
  if (batch == row.batch) return row.ms;  // exact replay
  const double recorded = model_->eval(row.batch);
  return recorded > 0 ? row.ms * model_->eval(batch) / recorded : model_->eval(batch);
}

}  // namespace env
