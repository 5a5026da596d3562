#include "orchestra/data_partition.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace orchestra {
namespace {

bool usable(double value) { return std::isfinite(value) && value > 0; }

}  // namespace

std::vector<double> normalize_shares(const std::vector<double>& speeds) {
  if (speeds.empty()) throw std::invalid_argument("normalize_shares: no speeds (expected one per worker)");
  double total = 0;
  for (std::size_t n = 0; n < speeds.size(); ++n) {
    if (!usable(speeds[n]))
      throw std::invalid_argument("normalize_shares: speed of worker " + std::to_string(n) +
                                  " must be positive and finite, got " + std::to_string(speeds[n]));
    total += speeds[n];
  }
  std::vector<double> shares(speeds.size());
  for (std::size_t n = 0; n < speeds.size(); ++n) shares[n] = speeds[n] / total;
  return shares;
}

std::vector<double> measured_batches_per_second(const env::EpochReport& report, int num_workers) {
  const auto n_workers = static_cast<std::size_t>(num_workers);
  std::vector<double> speeds(n_workers, std::numeric_limits<double>::quiet_NaN());
  if (report.worker_steps.size() != n_workers || report.worker_busy_ms.size() != n_workers) return speeds;
  for (std::size_t n = 0; n < n_workers; ++n) {
    const double steps = static_cast<double>(report.worker_steps[n]);
    const double busy_s = report.worker_busy_ms[n] / 1000.0;
    if (usable(steps) && usable(busy_s) && usable(steps / busy_s)) speeds[n] = steps / busy_s;
  }
  return speeds;
}

DataPartitionController::DataPartitionController(std::vector<int> batch_sizes)
    : batch_sizes_(std::move(batch_sizes)) {
  if (batch_sizes_.empty()) throw std::invalid_argument("DataPartitionController: no workers");
  for (std::size_t n = 0; n < batch_sizes_.size(); ++n) {
    if (batch_sizes_[n] < 1)
      throw std::invalid_argument("DataPartitionController: batch size of worker " + std::to_string(n) +
                                  " must be >= 1, got " + std::to_string(batch_sizes_[n]));
  }
  batches_per_second_.assign(batch_sizes_.size(), 1.0);
  recompute_shares();
}

void DataPartitionController::set_batch_times(const std::vector<double>& batch_ms) {
  if (batch_ms.size() != batch_sizes_.size())
    throw std::invalid_argument("DataPartitionController: expected " + std::to_string(batch_sizes_.size()) +
                                " batch times, got " + std::to_string(batch_ms.size()));
  for (std::size_t n = 0; n < batch_ms.size(); ++n)
    if (usable(batch_ms[n]) && usable(1000.0 / batch_ms[n])) batches_per_second_[n] = 1000.0 / batch_ms[n];
  recompute_shares();
}

int DataPartitionController::update(const env::EpochReport& report) {
  const auto measured = measured_batches_per_second(report, static_cast<int>(batch_sizes_.size()));
  int updated = 0;
  for (std::size_t n = 0; n < measured.size(); ++n) {
    if (!usable(measured[n])) continue;
    batches_per_second_[n] = measured[n];
    ++updated;
  }
  recompute_shares();
  return updated;
}

void DataPartitionController::recompute_shares() {
  // 3.1.2: "normalize it to get the percentage of speed that is the final data partition",
  // in samples per second (see the header).
  std::vector<double> samples_per_second(batch_sizes_.size());
  for (std::size_t n = 0; n < batch_sizes_.size(); ++n)
    samples_per_second[n] = batch_sizes_[n] * batches_per_second_[n];
  shares_ = normalize_shares(samples_per_second);
}

}  // namespace orchestra
