// Progress of a long command, the same for every one (`run`, `run --seeds`, `launch`, `train`, and
// any new one): on a terminal, one line redrawn in place (at most 10 times a second); otherwise (a
// pipe, a log file, CI) one plain line every few seconds while the command works, so a log never
// goes silent for long; with --quiet nothing at all.
//
// Use (a command with a known amount of work):
//
//   ProgressReporter progress(ProgressReporter::style_for(stderr, quiet), stderr,
//                             ProgressTiming::from_environment());
//   progress.start("evaluate", "runs", total_runs);      // a task: its label, unit and total
//   while (working) {
//     ...
//     progress.update(runs_done, {{"cluster", name}, {"mean ratio", fixed(r, 2)}});
//   }                                                    // call it often: it prints only when due
//   progress.message("cluster b: oracle T = 1.2 s");     // an event: always printed, on its own line
//   progress.finish();                                   // the last state, printed now
//
// update() is cheap and prints only when due: call it from the loop that waits (a poll, a round),
// not only when something has changed, because in a log the line every few seconds is what says
// that the command is alive. A line reads, fields in the order given:
//
//   <label>  <done>/<total> <unit> (<pct>%)  <name> <value>  ...  [<rate> <unit>/s]  elapsed <t>  ETA <t>
//   train  120/1000 updates (12%)  episodes 48  mean return -5.21  5.3 updates/s  elapsed 0:23  ETA 2:46
//
// On a terminal a bar stands after the label ("dsgd [######..........]  1.4/4 epochs ...") and the
// line fits the terminal's width: the last fields are left out first, the end cut last. Times read M:SS (H:MM:SS from an hour); ETA is "-" until some
// work is done (the rate is the work done since start() over the time since start()). A total of 0
// means unknown: no percentage, bar or ETA.
//
// Line timing comes from ProgressTiming; ORCHESTRA_PROGRESS_EVERY_S sets the seconds between plain
// lines (default 5), which tests use to see many lines in a short run. Not thread-safe: one thread
// reports (the one that runs the loop).
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace experiments {

enum class ProgressStyle {
  Redrawn,  // a terminal: one line, redrawn in place
  Lines,    // a pipe or a file: a plain line every ProgressTiming::line_every
  Quiet,    // nothing
};

struct ProgressTiming {
  std::chrono::milliseconds line_every{5000};   // Lines: at least this long between two lines
  std::chrono::milliseconds redraw_every{100};  // Redrawn: at most one redraw per this
  // line_every from ORCHESTRA_PROGRESS_EVERY_S (seconds, 0.05 to 3600) when it is set; throws
  // common::UsageError naming the variable for any other value.
  static ProgressTiming from_environment();
};

// One "name value" pair of a line: {"episodes", "48"}, {"mean return", "-5.21"}.
struct ProgressField {
  std::string name;
  std::string value;
};

class ProgressReporter {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;

  // Redrawn on a terminal, Lines otherwise, Quiet when asked.
  static ProgressStyle style_for(FILE* stream, bool quiet);

  // `now` is the clock (injected by tests); `stream` is not owned.
  ProgressReporter(ProgressStyle style, FILE* stream, ProgressTiming timing = {}, Now now = Clock::now);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // A new task: the rate, elapsed time and ETA start from here. `done` is where it starts (a
  // resumed training's update count); `show_rate` adds "<rate> <unit>/s" to the line.
  void start(const std::string& label, const std::string& unit, double total, double done = 0, bool show_rate = true);
  // Where the task stands (`done` may be fractional: 1.4 epochs); printed if due, else kept for
  // the next line. The first update of a task is printed at once.
  void update(double done, std::vector<ProgressField> fields = {});
  // A line of its own, always printed (Quiet aside); on a terminal the redrawn line is cleared
  // first and drawn again at the next update.
  void message(const std::string& text);
  // Prints the last state now, as a line of its own (nothing if no task was started).
  void finish();

  // Each line written to this stream becomes a message() (a component that logs to an
  // std::ostream, such as the A3C parameter server, then shares the terminal line with progress).
  std::ostream& log_stream();

  ProgressStyle style() const { return style_; }
  // The line an update would print now, without the bar (tests, and finish()).
  std::string line() const;

 private:
  class LineBuffer;
  std::string line_with(std::size_t shown_fields) const;  // the first `shown_fields` fields only
  void draw(bool redrawn);
  void clear_redrawn();

  ProgressStyle style_;
  FILE* stream_;
  ProgressTiming timing_;
  Now now_;
  std::string label_, unit_;
  double total_ = 0, start_done_ = 0, done_ = 0;
  bool show_rate_ = true;
  bool started_ = false, printed_since_start_ = false;
  bool undrawn_update_ = false;  // an update since the last line: finish() prints it, else not again
  std::vector<ProgressField> fields_;
  Clock::time_point task_start_{}, last_print_{};
  bool redrawn_visible_ = false;
  std::unique_ptr<LineBuffer> log_buffer_;
  std::unique_ptr<std::ostream> log_stream_;
};

// "0:07", "12:34", "1:02:03": whole seconds, M:SS under an hour.
std::string format_duration(double seconds);

}  // namespace experiments
