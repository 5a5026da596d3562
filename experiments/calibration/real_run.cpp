#include "experiments/calibration/real_run.hpp"

#include <fstream>
#include <sstream>

#include "common/errors.hpp"
#include "experiments/results/results_reader.hpp"

namespace experiments::calibration {
namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw common::DataError(path + ": cannot read");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw common::DataError(path + ": not valid JSON: " + e.what());
  }
}

}  // namespace

RealRun read_real_run(const std::string& dir) {
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
    const nlohmann::json config = read_json(config_path);
    if (p.clock != env::ClockKind::Wall || !config.contains("real"))
      throw common::DataError(p.dir + ": not a real run (its clock is simulated time): calibrate needs the results of orchestra launch");
    if (!config.contains("data") || !config["data"].contains("dataset") || !config.contains("cluster"))
      throw common::DataError(config_path + ": has no resolved data and cluster sections (written by an older version): run the real experiment again");
    if (p.rounds_csv.empty())
      throw common::DataError(p.dir + ": no rounds.csv (the run had output.rounds_csv: false): calibration needs every round's times");
    RealPolicyRun policy;
    policy.label = p.label;
    policy.dir = p.dir;
    policy.policy = config.value("policy", nlohmann::json::object());
    policy.rounds = experiments::read_rounds_csv(p.rounds_csv);
    if (policy.rounds.round.empty()) throw common::DataError(p.rounds_csv + ": no rounds");
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
