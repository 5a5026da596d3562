#include "experiments/results/round_csv.hpp"

#include <cmath>
#include <cstdio>

namespace experiments {

std::string csv_number(double value) {
  if (std::isnan(value)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", value);
  return buf;
}

std::string rounds_csv_header() {
  return "round,epoch,worker,batch_size,local_steps,compute_ms,idle_ms,comm_ms,round_ms,clock_ms,straggler_effect,barrier_ms\n";
}

void append_round_rows(std::string& csv, const env::RoundReport& r, const std::vector<std::string>& names) {
  const auto& num = csv_number;
  for (std::size_t i = 0; i < r.workers.size(); ++i) {
    const auto& w = r.workers[i];
    csv += std::to_string(r.round) + ',' + std::to_string(r.epoch) + ',' + names[i] + ',' + std::to_string(w.batch_size) + ',' +
           std::to_string(w.local_steps) + ',' + num(w.compute_ms) + ',' + num(w.idle_ms) + ',' + num(r.comm_ms) + ',' +
           num(r.round_ms) + ',' + num(r.clock_ms) + ',' + num(r.straggler_effect) + ',' + num(r.barrier_ms) + '\n';
  }
}

std::string iterations_csv_header(const std::vector<std::string>& worker_names) {
  std::string header = "round,clock_ms,straggler_effect";
  for (const auto& name : worker_names) header += ',' + name + "_batch," + name + "_ms";
  return header + '\n';
}

void append_iteration_row(std::string& csv, const env::RoundReport& report) {
  csv += std::to_string(report.round) + ',' + csv_number(report.clock_ms) + ',' + csv_number(report.straggler_effect);
  for (const auto& w : report.workers) csv += ',' + std::to_string(w.batch_size) + ',' + csv_number(w.compute_ms);
  csv += '\n';
}

}  // namespace experiments
