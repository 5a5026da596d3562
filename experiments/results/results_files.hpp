// Writers of a policy's results folder and the experiment's comparison files.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "experiments/results/policy_outcome.hpp"

namespace experiments {

std::string epochs_csv(const PolicyOutcome& outcome);
std::string evals_csv(const PolicyOutcome& outcome);
nlohmann::json summary_json(const PolicyOutcome& outcome, double target_accuracy, const std::string& reference_label,
                            std::optional<double> speedup_vs_reference);

// Writes the folder `<out_dir>/<label>` whole: files go to a hidden staging folder first, which
// then replaces any earlier results of that label.
void write_policy_folder(const std::string& out_dir, const PolicyOutcome& outcome, const nlohmann::json& summary,
                         const nlohmann::json& resolved_config);

// Replaces `<out_dir>/<label>/summary.json` alone (the speedup reference can change once every
// policy has run).
void write_summary(const std::string& out_dir, const PolicyOutcome& outcome, const nlohmann::json& summary);

}  // namespace experiments
