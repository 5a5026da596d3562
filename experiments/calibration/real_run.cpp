#include "experiments/calibration/real_run.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <cmath>

#include "common/errors.hpp"
#include "common/json_file.hpp"
#include "common/json_diff.hpp"
#include "experiments/results/results_folder.hpp"
#include "experiments/results/results_reader.hpp"

namespace experiments::calibration {
RealRun read_real_run(const std::string& dir) {
  // A policy's folder without its summary (deleted, or cut short) was passed over: the fit would
  // then be of the other policies alone, without a word.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::filesystem::path folder = entry.path();
    if (entry.is_directory(ec) && !std::filesystem::exists(folder / "summary.json", ec) &&
        (std::filesystem::exists(folder / "config.json", ec) || std::filesystem::exists(folder / "rounds.csv", ec)))
      throw common::DataError(folder.string() + ": a policy's results without summary.json (damaged, or a run still writing): calibrate fits every policy of the run");
  }
  const std::vector<experiments::RunResults> runs = experiments::read_results({dir});
  if (runs.size() != 1)
    throw common::DataError(dir + ": holds " + std::to_string(runs.size()) + " experiments; give the folder of one real run (orchestra launch --out DIR)");
  const experiments::RunResults& results = runs.front();
  if (results.policies.empty()) throw common::DataError(dir + ": no policy results");
  RealRun run;
  run.dir = dir;
  run.name = results.name;
  for (const auto& p : results.policies) {
    const std::string config_path = p.dir + "/config.json";
    const nlohmann::json config = common::read_json_file(config_path);
    if (p.clock != env::ClockKind::Wall || !config.contains("real"))
      throw common::DataError(p.dir + ": not a real run (its clock is simulated time): calibrate needs the results of orchestra launch");
    if (!config.contains("data") || !config["data"].contains("dataset") || !config.contains("cluster"))
      throw common::DataError(config_path + ": has no resolved data and cluster sections (written by an older version): run the real experiment again");
    if (p.rounds_csv.empty())
      throw common::DataError(p.dir + ": no rounds.csv (the run had output.rounds_csv: false): calibration needs every round's times");
    // One experiment: every policy ran the first one's config (a policy folder copied in from
    // another run, or a damaged config.json, would be fitted as if it were this one).
    if (!run.config.is_null() && experiments::experiment_identity(config) != experiments::experiment_identity(run.config))
      throw common::DataError(config_path + ": not the config of " + run.policies.front().dir + "/config.json (" +
                              common::describe_differences(experiments::experiment_identity(run.config), experiments::experiment_identity(config), 3) +
                              "): calibrate fits one real run's policies");
    RealPolicyRun policy;
    policy.label = p.label;
    policy.dir = p.dir;
    policy.policy = config.value("policy", nlohmann::json::object());
    if (!policy.policy.is_object()) throw common::DataError(config_path + ": policy: expected the policy's resolved keys");
    policy.rounds = experiments::read_rounds_csv(p.rounds_csv, experiments::RoundsCheck::Measured);
    if (policy.rounds.round.empty()) throw common::DataError(p.rounds_csv + ": no rounds");
    // Cut at a line boundary, the file still reads: its rounds are counted against the summary's,
    // and every round must have a row of every worker.
    if (static_cast<std::int64_t>(policy.rounds.round.size()) != p.rounds)
      throw common::DataError(p.rounds_csv + ": " + std::to_string(policy.rounds.round.size()) + " rounds, but summary.json says " +
                              std::to_string(p.rounds) + ": a truncated file is not fitted");
    for (const auto& w : policy.rounds.workers)
      for (std::size_t k = 0; k < w.compute_ms.size(); ++k)
        if (std::isnan(w.compute_ms[k]))
          throw common::DataError(p.rounds_csv + ": round " + std::to_string(policy.rounds.round[k]) + " has no row of worker " + w.name +
                                  ": a truncated or damaged file is not fitted");
    if (run.config.is_null()) run.config = config;
    run.policies.push_back(std::move(policy));
  }
  return run;
}

nlohmann::json policy_entry(const nlohmann::json& resolved) {
  nlohmann::json entry = nlohmann::json::object();
  for (const auto& [key, value] : resolved.items())
    if (!(value.is_array() && value.empty())) entry[key] = value;
  return entry;
}

std::string real_config_text(const RealRun& run) {
  nlohmann::json c = run.config;
  for (const char* key : {"file", "real", "policy", "seeds"}) c.erase(key);
  c["policies"] = nlohmann::json::array();
  for (const auto& p : run.policies) c["policies"].push_back(policy_entry(p.policy));
  return c.dump(1) + "\n";
}

}  // namespace experiments::calibration
