#include "experiments/runner/progress.hpp"

#include <unistd.h>

#include <cmath>

namespace experiments {

Progress::Style Progress::style_for(FILE* stream, bool quiet) {
  if (quiet) return Style::Quiet;
  return ::isatty(::fileno(stream)) ? Style::Bar : Style::Lines;
}

void Progress::clear_line() {
  if (bar_drawn_) std::fprintf(stream_, "\r\033[2K");
  bar_drawn_ = false;
}

void Progress::update(const std::string& label, int epoch, int epochs, double fraction, double clock_s) {
  if (style_ != Style::Bar) return;
  const auto now = std::chrono::steady_clock::now();
  if (bar_drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;  // redraw at most 10 times a second
  last_draw_ = now;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(std::lround(std::min(1.0, std::max(0.0, fraction)) * kWidth));
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kWidth - filled), '.');
  std::fprintf(stream_, "\r\033[2K%-14s epoch %d/%d [%s] %3.0f%%  %s %.1f s", label.c_str(), epoch + 1, epochs, bar.c_str(),
               100.0 * fraction, clock_, clock_s);
  std::fflush(stream_);
  bar_drawn_ = true;
}

void Progress::epoch_done(const std::string& label, const env::EpochReport& r, int epochs) {
  if (style_ == Style::Quiet) return;
  clear_line();
  if (std::isnan(r.accuracy))
    std::fprintf(stream_, "%-14s epoch %d/%d  %s %.2f s  SE %.3f  utilization %.2f\n", label.c_str(), r.epoch + 1, epochs, clock_,
                 r.clock_ms / 1000.0, r.mean_straggler_effect, r.utilization);
  else
    std::fprintf(stream_, "%-14s epoch %d/%d  acc %.4f  loss %.4f  %s %.2f s  SE %.3f  utilization %.2f\n", label.c_str(),
                 r.epoch + 1, epochs, r.accuracy, r.loss, clock_, r.clock_ms / 1000.0, r.mean_straggler_effect, r.utilization);
  std::fflush(stream_);
}

void Progress::message(const std::string& text) {
  if (style_ == Style::Quiet) return;
  clear_line();
  std::fprintf(stream_, "%s\n", text.c_str());
  std::fflush(stream_);
}

}  // namespace experiments
