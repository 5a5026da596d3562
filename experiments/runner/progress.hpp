// Progress of a run (`orchestra run`, and rank 0 of `orchestra launch`): per policy, the epochs
// done on a ProgressReporter (progress_reporter.hpp: a redrawn line on a terminal, a plain line
// every few seconds otherwise) and one line of results per epoch.
#pragma once

#include <cstdio>
#include <string>

#include "env/round_cluster.hpp"
#include "env/round_plan.hpp"
#include "experiments/runner/progress_reporter.hpp"

namespace experiments {

class Progress {
 public:
  using Style = ProgressStyle;
  static Style style_for(FILE* stream, bool quiet) { return ProgressReporter::style_for(stream, quiet); }

  // Timing from the environment (ProgressTiming::from_environment), unless given.
  Progress(Style style, FILE* stream);
  Progress(Style style, FILE* stream, ProgressTiming timing) : reporter_(style, stream, timing) {}
  // Put before every label ("seed 7: "), for runs that are one of several.
  void set_prefix(const std::string& prefix) { prefix_ = prefix; }
  // Within an epoch: fraction of its samples used so far; clock_s is the run's clock.
  void update(const std::string& label, int epoch, int epochs, double fraction, double clock_s);
  void epoch_done(const std::string& label, const env::EpochReport& report, int epochs);
  void message(const std::string& text) { reporter_.message(text); }
  // What the printed clock measures ("sim" or "wall"); the run loop sets it from its cluster.
  void set_clock(env::ClockKind clock) { clock_ = env::clock_name(clock); }

 private:
  ProgressReporter reporter_;
  std::string prefix_;
  std::string task_;  // the label of the policy the reporter is following
  double done_ = 0;   // its epochs done: never shown going back (a real worker's fraction is 0 at an epoch's last round)
  const char* clock_ = "sim";
};

}  // namespace experiments
