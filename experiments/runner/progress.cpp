#include "experiments/runner/progress.hpp"

#include <algorithm>
#include <cmath>

namespace experiments {

Progress::Progress(Style style, FILE* stream) : Progress(style, stream, style == Style::Quiet ? ProgressTiming{} : ProgressTiming::from_environment()) {}

void Progress::update(const std::string& label, int epoch, int epochs, double fraction, double clock_s) {
  if (reporter_.style() == Style::Quiet) return;
  if (task_ != label) {
    task_ = label;
    done_ = 0;
    reporter_.start(prefix_ + label, "epochs", epochs, 0, false);  // epochs per second reads oddly; the ETA says it
  }
  done_ = std::max(done_, epoch + std::min(1.0, std::max(0.0, fraction)));
  char clock[48];
  std::snprintf(clock, sizeof clock, "%.1f s", clock_s);
  reporter_.update(done_, {{std::string(clock_) + " time", clock}});
}

void Progress::epoch_done(const std::string& label, const env::EpochReport& r, int epochs) {
  if (reporter_.style() == Style::Quiet) return;
  char line[512];
  const std::string name = prefix_ + label;
  if (std::isnan(r.accuracy))
    std::snprintf(line, sizeof line, "%-14s epoch %d/%d  %s %.2f s  SE %.3f  utilization %.2f", name.c_str(), r.epoch + 1, epochs, clock_,
                  r.clock_ms / 1000.0, r.mean_straggler_effect, r.utilization);
  else
    std::snprintf(line, sizeof line, "%-14s epoch %d/%d  acc %.4f  loss %.4f  %s %.2f s  SE %.3f  utilization %.2f", name.c_str(),
                  r.epoch + 1, epochs, r.accuracy, r.loss, clock_, r.clock_ms / 1000.0, r.mean_straggler_effect, r.utilization);
  reporter_.message(line);
}

}  // namespace experiments
