// The one writer of an experiment's results folder. The runner hands it each policy's outcome, as
// it stands after an epoch (a real run, so that a failed run keeps what it finished) and when the
// policy is done; it writes the policy's folder whole (results_files.hpp) with config.json (the
// resolved config and the policy's keys) and summary.json (its speedup over the reference among
// the policies so far), and at the end every summary against the final reference and
// comparison.md. Simulated and real runs write through it alike.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/results/policy_outcome.hpp"

namespace experiments {

class ResultsWriter {
 public:
  // `resolved_config`: what every config.json records beside the policy's own keys.
  ResultsWriter(std::string out_dir, nlohmann::json resolved_config, double target_accuracy);

  // The policy's folder as it stands (after an epoch of a real run).
  void write_partial(const PolicyOutcome& outcome) const;
  // The policy's folder, finished; it counts for the summaries from now on.
  void write_finished(PolicyOutcome outcome);
  // A policy an earlier run finished and wrote (a resumed real run): it counts, nothing is written.
  void add_written(PolicyOutcome outcome);
  // Every summary.json against the final reference (a dsgd listed after other policies becomes
  // their reference only once it has run), then comparison.md.
  void finish() const;

  const std::string& out_dir() const { return out_dir_; }
  const std::vector<PolicyOutcome>& outcomes() const { return outcomes_; }

 private:
  void write(const PolicyOutcome& outcome) const;

  std::string out_dir_;
  nlohmann::json resolved_config_;
  double target_accuracy_;
  std::vector<PolicyOutcome> outcomes_;
};

// The table printed at the end of a run (and written as comparison.md): analysis/comparison.hpp.
std::string comparison_table(const std::vector<PolicyOutcome>& outcomes, double target_accuracy);

// How comparison.md (a run's, and a multi-seed run's) begins: a file of that name that does not is
// a user's, and is not replaced (results_folder.hpp).
constexpr const char* kComparisonMarkdownMarker = "| policy |";

}  // namespace experiments
