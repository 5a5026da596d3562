// Progress of a run: a redrawn bar on a terminal, one plain line per epoch otherwise (logs, CI).
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "env/round_cluster.hpp"
#include "env/round_plan.hpp"

namespace experiments {

class Progress {
 public:
  enum class Style { Bar, Lines, Quiet };
  static Style style_for(FILE* stream, bool quiet);

  Progress(Style style, FILE* stream) : style_(style), stream_(stream) {}
  // Within an epoch: fraction of its samples used so far.
  void update(const std::string& label, int epoch, int epochs, double fraction, double clock_s);
  void epoch_done(const std::string& label, const env::EpochReport& report, int epochs);
  void message(const std::string& text);
  // What the printed clock measures ("sim" or "wall"); the run loop sets it from its cluster.
  void set_clock(env::ClockKind clock) { clock_ = env::clock_name(clock); }

 private:
  void clear_line();

  Style style_;
  FILE* stream_;
  const char* clock_ = "sim";
  bool bar_drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace experiments
