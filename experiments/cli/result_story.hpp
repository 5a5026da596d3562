// What `orchestra run` and `orchestra compare` print after their table: the lines that say who
// wins and why (analysis/explanation.hpp), then where the figures are, or how to draw them.
#pragma once

#include <string>
#include <vector>

#include "experiments/analysis/plots.hpp"
#include "experiments/results/policy_outcome.hpp"
#include "experiments/results/results_reader.hpp"

namespace experiments {

// The results in `out_dir` of the policies a run just finished (the folder may hold others, left
// by an earlier run with other policies), as story_after_table reads them.
std::vector<RunResults> results_of_run(const std::string& out_dir, const std::vector<PolicyOutcome>& outcomes);

// `plots` is null when no figure was drawn; `report_html` is empty when no report was written.
std::string story_after_table(const std::vector<RunResults>& runs, const std::string& results_dir, const PlotReport* plots,
                              const std::string& report_html = "");

}  // namespace experiments
