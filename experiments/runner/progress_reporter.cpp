#include "experiments/runner/progress_reporter.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <streambuf>

#include "common/errors.hpp"

namespace experiments {
namespace {

constexpr const char* kEveryVariable = "ORCHESTRA_PROGRESS_EVERY_S";
constexpr int kBarWidth = 20;
constexpr std::size_t kDefaultWidth = 120;  // a terminal that does not say its width

std::string progress_number(double v) {
  char buf[48];
  if (std::fabs(v - std::round(v)) < 1e-9) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string rate_text(double rate) {
  char buf[48];
  std::snprintf(buf, sizeof buf, rate >= 10 ? "%.0f" : rate >= 1 ? "%.1f" : "%.2f", rate);
  return buf;
}

std::size_t terminal_width(FILE* stream) {
  winsize size{};
  if (::ioctl(::fileno(stream), TIOCGWINSZ, &size) == 0 && size.ws_col > 10) return size.ws_col;
  return kDefaultWidth;
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-";
  const auto s = static_cast<long long>(std::llround(seconds));
  char buf[48];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  return buf;
}

ProgressTiming ProgressTiming::from_environment() {
  ProgressTiming timing;
  const char* value = std::getenv(kEveryVariable);
  if (!value || !*value) return timing;
  char* end = nullptr;
  const double seconds = std::strtod(value, &end);
  if (*end != '\0' || !std::isfinite(seconds) || seconds < 0.05 || seconds > 3600)
    throw common::UsageError(std::string(kEveryVariable) + "=" + value + ": expected seconds between progress lines, from 0.05 to 3600");
  timing.line_every = std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(seconds * 1000)));
  return timing;
}

// Collects what is written to log_stream() and hands each whole line to message().
class ProgressReporter::LineBuffer : public std::streambuf {
 public:
  explicit LineBuffer(ProgressReporter& owner) : owner_(owner) {}
  ~LineBuffer() override {
    if (!pending_.empty()) owner_.message(pending_);
  }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    if (c == '\n') {
      owner_.message(pending_);
      pending_.clear();
    } else {
      pending_ += static_cast<char>(c);
    }
    return c;
  }

 private:
  ProgressReporter& owner_;
  std::string pending_;
};

ProgressStyle ProgressReporter::style_for(FILE* stream, bool quiet) {
  if (quiet) return ProgressStyle::Quiet;
  return ::isatty(::fileno(stream)) ? ProgressStyle::Redrawn : ProgressStyle::Lines;
}

ProgressReporter::ProgressReporter(ProgressStyle style, FILE* stream, ProgressTiming timing, Now now)
    : style_(style), stream_(stream), timing_(timing), now_(std::move(now)) {}

ProgressReporter::~ProgressReporter() {
  log_stream_.reset();  // flushes a last unterminated log line through message()
  log_buffer_.reset();
  clear_redrawn();
}

std::ostream& ProgressReporter::log_stream() {
  if (!log_stream_) {
    log_buffer_ = std::make_unique<LineBuffer>(*this);
    log_stream_ = std::make_unique<std::ostream>(log_buffer_.get());
  }
  return *log_stream_;
}

void ProgressReporter::start(const std::string& label, const std::string& unit, double total, double done, bool show_rate) {
  label_ = label;
  unit_ = unit;
  total_ = total;
  start_done_ = done_ = done;
  show_rate_ = show_rate;
  fields_.clear();
  started_ = true;
  printed_since_start_ = false;
  undrawn_update_ = false;
  task_start_ = now_();
}

std::string ProgressReporter::line() const { return line_with(fields_.size()); }

std::string ProgressReporter::line_with(std::size_t shown_fields) const {
  const double elapsed = std::chrono::duration<double>(now_() - task_start_).count();
  std::string s = label_ + "  " + progress_number(done_);
  if (total_ > 0) {
    char pct[32];
    std::snprintf(pct, sizeof pct, " (%.0f%%)", std::floor(100.0 * std::clamp(done_ / total_, 0.0, 1.0)));
    s += "/" + progress_number(total_) + " " + unit_ + pct;
  } else {
    s += " " + unit_;
  }
  for (std::size_t i = 0; i < std::min(shown_fields, fields_.size()); ++i) s += "  " + fields_[i].name + " " + fields_[i].value;
  const double rate = elapsed > 0 ? (done_ - start_done_) / elapsed : 0.0;
  if (show_rate_) s += "  " + rate_text(rate) + " " + unit_ + "/s";
  s += "  elapsed " + format_duration(elapsed);
  if (total_ > 0) s += "  ETA " + (rate > 0 ? format_duration(std::max(0.0, total_ - done_) / rate) : std::string("-"));
  return s;
}

void ProgressReporter::clear_redrawn() {
  if (!redrawn_visible_) return;
  std::fprintf(stream_, "\r\033[2K");
  std::fflush(stream_);
  redrawn_visible_ = false;
}

void ProgressReporter::draw(bool redrawn) {
  std::string text = line();
  if (redrawn) {
    std::string bar;
    if (total_ > 0) {
      const int filled = static_cast<int>(std::lround(std::clamp(done_ / total_, 0.0, 1.0) * kBarWidth));
      bar = " [" + std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(kBarWidth - filled), '.') + "]";
    }
    // A wrapped line could not be redrawn in place: the last fields give way first, so that the
    // rate, elapsed time and ETA stay in sight, then the end is cut.
    const std::size_t width = terminal_width(stream_);
    for (std::size_t shown = fields_.size(); shown > 0 && text.size() + bar.size() >= width; --shown) text = line_with(shown - 1);
    text.insert(label_.size(), bar);
    if (text.size() >= width) text.resize(width - 1);
    std::fprintf(stream_, "\r\033[2K%s", text.c_str());
    redrawn_visible_ = true;
  } else {
    std::fprintf(stream_, "%s\n", text.c_str());
  }
  std::fflush(stream_);
  last_print_ = now_();
  printed_since_start_ = true;
  undrawn_update_ = false;
}

void ProgressReporter::update(double done, std::vector<ProgressField> fields) {
  if (style_ == ProgressStyle::Quiet || !started_) return;
  done_ = done;
  fields_ = std::move(fields);
  undrawn_update_ = true;
  const auto since = now_() - last_print_;
  if (style_ == ProgressStyle::Redrawn) {
    if (!printed_since_start_ || !redrawn_visible_ || since >= timing_.redraw_every) draw(true);
  } else if (!printed_since_start_ || since >= timing_.line_every) {
    draw(false);
  }
}

void ProgressReporter::message(const std::string& text) {
  if (style_ == ProgressStyle::Quiet) return;
  clear_redrawn();
  std::fprintf(stream_, "%s\n", text.c_str());
  std::fflush(stream_);
  last_print_ = now_();  // a line was printed: the next progress line is due line_every from now
}

void ProgressReporter::finish() {
  if (style_ == ProgressStyle::Quiet || !started_) return;
  // The last state as a line of its own, unless it was just printed as one (a plain log would
  // otherwise show its final line twice).
  const bool shown = style_ == ProgressStyle::Lines && printed_since_start_ && !undrawn_update_;
  clear_redrawn();
  if (!shown) draw(false);
  started_ = false;
}

}  // namespace experiments
