#include "env/sim/perturbation_trace.hpp"

#include <cmath>
#include <map>

#include "common/csv_table.hpp"
#include "common/errors.hpp"
#include "common/limits.hpp"

namespace env {

std::vector<Perturbation> read_perturbation_trace(const std::string& path, const std::vector<std::string>& workers) {
  const common::CsvTable t = common::read_csv(path);
  const std::size_t time = t.column("time_s"), who = t.column("worker"), slowdown = t.column("slowdown");
  const auto add = t.find("add_ms");
  if (t.rows.size() < kMinPerturbationTraceRows)
    throw common::DataError(path + ": " + std::to_string(t.rows.size()) + " rows: a perturbation trace needs at least " +
                            std::to_string(kMinPerturbationTraceRows) + " (a constant slowdown is a plain perturbation)");
  std::vector<Perturbation> out;
  std::map<int, std::size_t> open;  // worker -> its perturbation still running
  double last_time = 0;
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const std::string here = path + ":" + std::to_string(t.lines[r]) + ": ";
    const std::string& name = t.rows[r][who];
    int worker = -1;
    for (std::size_t i = 0; i < workers.size(); ++i)
      if (workers[i] == name) worker = static_cast<int>(i);
    if (worker < 0) throw common::DataError(here + "worker: no worker named '" + name + "' in the cluster");
    const double at = t.number(r, time), factor = t.number(r, slowdown), extra = add ? t.number(r, *add) : 0.0;
    // The ranges of the YAML keys that mean the same (common/limits.hpp).
    if (const auto problem = common::range_problem(at, common::kClockS)) throw common::DataError(here + "time_s: " + *problem);
    if (r > 0 && at < last_time)
      throw common::DataError(here + "time_s: the clock goes back (" + std::to_string(at) + " after " + std::to_string(last_time) +
                              "): rows must be in time order");
    if (const auto problem = common::range_problem(factor, common::kSlowdown)) throw common::DataError(here + "slowdown: " + *problem);
    if (const auto problem = common::range_problem(extra, common::kStepMs)) throw common::DataError(here + "add_ms: " + *problem);
    last_time = at;
    if (const auto it = open.find(worker); it != open.end()) {
      out[it->second].end_s = at;
      open.erase(it);
    }
    if (factor == 1.0 && extra == 0.0) continue;  // back to its own speed
    Perturbation p;
    p.worker = worker;
    p.start_s = at;
    p.slowdown = factor;
    p.add_ms = extra;
    open[worker] = out.size();
    out.push_back(p);
  }
  // A row that starts and ends at the same time never holds.
  std::vector<Perturbation> kept;
  for (const auto& p : out)
    if (p.end_s > p.start_s) kept.push_back(p);
  return kept;
}

}  // namespace env
