#include "experiments/runner/results_writer.hpp"

#include "common/atomic_file.hpp"
#include "experiments/analysis/comparison.hpp"
#include "experiments/analysis/speedup.hpp"
#include "experiments/results/results_files.hpp"

namespace experiments {
namespace {

// summary.json of `outcome`, the run's policy number `run_index`, with its speedup over the
// reference among `done` (speedup.hpp).
nlohmann::json summary_of(const std::vector<PolicyOutcome>& done, const PolicyOutcome& outcome, std::size_t run_index, double target_accuracy) {
  std::vector<std::string> kinds;
  for (const auto& o : done) kinds.push_back(o.kind);
  const PolicyOutcome& reference = done.empty() ? outcome : done[speedup_reference_index(kinds)];
  nlohmann::json summary = summary_json(outcome, target_accuracy, reference.label, speedup(reference, outcome));
  // Its place in the run: the reader orders policies by it (the speedup's reference is the first
  // dsgd, else the first policy), where file times are lost to a copy or a policy run again.
  summary["run_index"] = run_index;
  return summary;
}

}  // namespace

std::string comparison_table(const std::vector<PolicyOutcome>& outcomes, double target_accuracy) {
  return comparison_markdown(comparison_rows("", outcomes, target_accuracy));
}

ResultsWriter::ResultsWriter(std::string out_dir, nlohmann::json resolved_config, double target_accuracy)
    : out_dir_(std::move(out_dir)), resolved_config_(std::move(resolved_config)), target_accuracy_(target_accuracy) {}

void ResultsWriter::write(const PolicyOutcome& outcome) const {
  std::vector<PolicyOutcome> so_far = outcomes_;
  so_far.push_back(outcome);
  nlohmann::json config = resolved_config_;
  config["policy"] = outcome.params;
  write_policy_folder(out_dir_, outcome, summary_of(so_far, outcome, outcomes_.size(), target_accuracy_), config);
}

void ResultsWriter::write_partial(const PolicyOutcome& outcome) const { write(outcome); }

void ResultsWriter::write_finished(PolicyOutcome outcome) {
  write(outcome);
  outcomes_.push_back(std::move(outcome));
}

void ResultsWriter::add_written(PolicyOutcome outcome) { outcomes_.push_back(std::move(outcome)); }

void ResultsWriter::finish() const {
  for (std::size_t i = 0; i < outcomes_.size(); ++i) write_summary(out_dir_, outcomes_[i], summary_of(outcomes_, outcomes_[i], i, target_accuracy_));
  common::write_file_atomic(out_dir_ + "/comparison.md", comparison_table(outcomes_, target_accuracy_));
}

}  // namespace experiments
