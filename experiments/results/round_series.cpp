#include "experiments/results/round_series.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <optional>

#include "common/errors.hpp"
#include "common/number_text.hpp"
#include "common/csv_table.hpp"

namespace experiments {
namespace {

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

void add_round(RoundSeries& s, std::int64_t round, int epoch, double se, double barrier, double comm = kMissing, double length = kMissing,
               double clock = kMissing) {
  s.round.push_back(round);
  s.epoch.push_back(epoch);
  s.straggler_effect.push_back(se);
  s.barrier_ms.push_back(barrier);
  s.comm_ms.push_back(comm);
  s.round_ms.push_back(length);
  s.clock_ms.push_back(clock);
  for (auto& w : s.workers) {
    w.compute_ms.push_back(kMissing);
    w.batch_size.push_back(kMissing);
    w.local_steps.push_back(kMissing);
    w.idle_ms.push_back(kMissing);
  }
}

WorkerSeries& worker(RoundSeries& s, std::map<std::string, std::size_t>& index, const std::string& name) {
  auto it = index.find(name);
  if (it == index.end()) {
    WorkerSeries w;
    w.name = name;
    // A worker first seen late has no values for the rounds before.
    w.compute_ms.assign(s.round.size(), kMissing);
    w.batch_size.assign(s.round.size(), kMissing);
    w.local_steps.assign(s.round.size(), kMissing);
    w.idle_ms.assign(s.round.size(), kMissing);
    s.workers.push_back(std::move(w));
    it = index.emplace(name, s.workers.size() - 1).first;
  }
  return s.workers[it->second];
}

}  // namespace

RoundSeries read_rounds_csv(const std::string& path, RoundsCheck check) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw common::DataError(path + ": cannot read");
  common::CsvReader csv(in, path);
  const auto round = csv.column("round"), epoch = csv.column("epoch"), name = csv.column("worker"),
             batch = csv.column("batch_size"), compute = csv.column("compute_ms"), se = csv.column("straggler_effect");
  const auto steps = csv.find("local_steps"), barrier = csv.find("barrier_ms");
  const auto idle = csv.find("idle_ms"), comm = csv.find("comm_ms"), length = csv.find("round_ms"), clock = csv.find("clock_ms");
  const auto cell_or_nan = [&](const std::optional<std::size_t>& column) { return column ? csv.number(*column) : kMissing; };
  RoundSeries s;
  std::map<std::string, std::size_t> index;
  while (csv.next()) {
    const double r = csv.number(round);
    if (!std::isfinite(r)) throw common::DataError(path + ":" + std::to_string(csv.line()) + ": round: expected a number");
    if (check == RoundsCheck::Measured)
      for (std::size_t c = 0; c < csv.columns().size(); ++c) {
        if (c == name) continue;
        const double v = csv.number(c);
        if (!std::isfinite(v) || v < 0)
          throw common::DataError(path + ":" + std::to_string(csv.line()) + ": " + csv.columns()[c] + ": expected a finite number >= 0, got " +
                                  csv.cells()[c] + ": a fit needs measured times");
        // Counts a round can have (a config's batches stop at 2^24): 1e300 samples was fitted, and
        // 1e23 steps failed in the fit without the file's name.
        const double most = c == batch ? 16777216.0 : (steps && c == *steps) ? 1e9 : -1;
        if (most > 0 && (v > most || std::floor(v) != v))
          throw common::DataError(path + ":" + std::to_string(csv.line()) + ": " + csv.columns()[c] + ": expected a whole number in [0, " +
                                  common::shortest_number_text(most) + "], got " + csv.cells()[c]);
      }
    const auto round_id = static_cast<std::int64_t>(r);
    if (s.round.empty() || s.round.back() != round_id)
      add_round(s, round_id, static_cast<int>(csv.number(epoch)), csv.number(se), cell_or_nan(barrier), cell_or_nan(comm), cell_or_nan(length),
                cell_or_nan(clock));
    WorkerSeries& w = worker(s, index, csv.cells()[name]);
    w.compute_ms.back() = csv.number(compute);
    w.batch_size.back() = csv.number(batch);
    w.local_steps.back() = cell_or_nan(steps);
    w.idle_ms.back() = cell_or_nan(idle);
  }
  return s;
}

RoundSeries read_iterations_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw common::DataError(path + ": cannot read");
  common::CsvReader csv(in, path);
  const auto round = csv.column("round"), se = csv.column("straggler_effect");
  // Workers are the names with both a <name>_batch and a <name>_ms column.
  struct Columns {
    std::size_t batch, ms;
  };
  std::vector<Columns> columns;
  RoundSeries s;
  const std::string suffix = "_batch";
  for (const auto& c : csv.columns()) {
    if (c.size() <= suffix.size() || c.compare(c.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string name = c.substr(0, c.size() - suffix.size());
    if (const auto ms = csv.find(name + "_ms")) {
      columns.push_back({csv.column(c), *ms});
      WorkerSeries w;
      w.name = name;
      s.workers.push_back(std::move(w));
    }
  }
  if (s.workers.empty()) throw common::DataError(path + ": no worker columns (<name>_batch with <name>_ms)");
  while (csv.next()) {
    add_round(s, static_cast<std::int64_t>(csv.number(round)), -1, csv.number(se), kMissing);
    for (std::size_t i = 0; i < columns.size(); ++i) {
      s.workers[i].batch_size.back() = csv.number(columns[i].batch);
      s.workers[i].compute_ms.back() = csv.number(columns[i].ms);
      s.workers[i].local_steps.back() = 1;  // LBB synchronizes every iteration
    }
  }
  return s;
}

bool has_barrier(const RoundSeries& series) {
  for (const double t : series.barrier_ms)
    if (std::isfinite(t) && t > 0) return true;
  return false;
}

}  // namespace experiments
