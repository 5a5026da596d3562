#include "experiments/calibration/network_fit.hpp"

#include <algorithm>
#include <cmath>

#include "common/errors.hpp"

namespace experiments::calibration {

NetworkFit fit_network(const std::vector<MeasuredAllReduce>& measured, const env::LinkSpec& configured) {
  struct Row {
    double x1, x2, ms;
  };
  std::vector<Row> rows;
  for (const auto& m : measured) {
    if (m.participants < 2 || !std::isfinite(m.ms) || m.ms < 0) continue;
    const double n = m.participants;
    rows.push_back({2.0 * (n - 1.0), 2.0 * (n - 1.0) / n * m.bytes, m.ms});
  }
  if (rows.empty()) throw common::DataError("no round of the real run has an all-reduce among 2 or more workers to fit the network to");
  NetworkFit fit;
  fit.rounds = rows.size();
  double s11 = 0, s12 = 0, s22 = 0, s1y = 0, s2y = 0, sum = 0;
  for (const auto& r : rows) {
    s11 += r.x1 * r.x1, s12 += r.x1 * r.x2, s22 += r.x2 * r.x2, s1y += r.x1 * r.ms, s2y += r.x2 * r.ms, sum += r.ms;
  }
  fit.mean_ms = sum / static_cast<double>(rows.size());
  const double det = s11 * s22 - s12 * s12;
  // Separable only if the rounds differ in x2 / x1 (relative determinant well away from 0).
  const bool separable = s22 > 0 && det > 1e-9 * s11 * s22;
  bool done = false;
  if (separable) {
    const double alpha = (s1y * s22 - s2y * s12) / det;
    const double inv_beta = (s11 * s2y - s12 * s1y) / det;
    if (alpha >= 0 && inv_beta > 0) {
      fit.link.alpha_ms = alpha;
      fit.link.bytes_per_ms = 1.0 / inv_beta;
      fit.kind = NetworkFitKind::AlphaAndBeta;
      done = true;
    }
  }
  if (!done) {
    // The configured bandwidth carries the bytes; the latency takes the rest (least squares in alpha).
    fit.link.bytes_per_ms = configured.bytes_per_ms;
    double num = 0;
    for (const auto& r : rows) num += r.x1 * (r.ms - r.x2 / configured.bytes_per_ms);
    fit.link.alpha_ms = std::max(0.0, num / s11);
    fit.kind = NetworkFitKind::AlphaOnly;
  }
  double rss = 0;
  for (const auto& r : rows) {
    const double e = r.ms - (r.x1 * fit.link.alpha_ms + r.x2 / fit.link.bytes_per_ms);
    rss += e * e;
  }
  fit.rms_ms = std::sqrt(rss / static_cast<double>(rows.size()));
  return fit;
}

}  // namespace experiments::calibration
