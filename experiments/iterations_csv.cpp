#include "experiments/iterations_csv.hpp"

#include <cstdio>

namespace experiments {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::string iterations_csv_header(const std::vector<std::string>& worker_names) {
  std::string header = "round,clock_ms,straggler_effect";
  for (const auto& name : worker_names) header += ',' + name + "_batch," + name + "_ms";
  return header + '\n';
}

void append_iteration_row(std::string& csv, const env::RoundReport& report) {
  csv += std::to_string(report.round) + ',' + num(report.clock_ms) + ',' + num(report.straggler_effect);
  for (const auto& w : report.workers) csv += ',' + std::to_string(w.batch_size) + ',' + num(w.compute_ms);
  csv += '\n';
}

}  // namespace experiments
