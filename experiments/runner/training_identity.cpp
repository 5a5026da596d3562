#include "experiments/runner/training_identity.hpp"

#include <cerrno>
#include <cstdlib>

#include "experiments/config/config.hpp"
#include "experiments/results/results_folder.hpp"

namespace experiments {
namespace {

// Keys of a3c: a resume may change (see the header).
constexpr const char* kFreeA3cKeys[] = {"total_updates", "agents", "checkpoint_every", "snapshot_every", "log_every", "stats_window",
                                        "agent_silence_s", "idle_timeout_s", "reply_timeout_s", "poll_interval_ms", "init_policy"};

nlohmann::json scalar_as_json(const std::string& text) {
  if (text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  if (!text.empty()) {
    char* end = nullptr;
    errno = 0;
    const long long whole = std::strtoll(text.c_str(), &end, 10);
    if (errno == 0 && end == text.c_str() + text.size()) return whole;
    errno = 0;
    const double real = std::strtod(text.c_str(), &end);
    if (errno == 0 && end == text.c_str() + text.size()) return real;
  }
  return text;
}

}  // namespace

nlohmann::json yaml_as_json(const YAML::Node& node) {
  if (!node || node.IsNull()) return nullptr;
  if (node.IsScalar()) return scalar_as_json(node.Scalar());
  if (node.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : node) out.push_back(yaml_as_json(item));
    return out;
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& entry : node) out[entry.first.Scalar()] = yaml_as_json(entry.second);
  return out;
}

nlohmann::json training_identity(const TrainingIdentityParts& parts) {
  nlohmann::json id = yaml_as_json(parts.root);
  if (!id.is_object()) id = nlohmann::json::object();
  for (const auto& [key, value] : parts.resolved_top.items()) id[key] = value;
  id.erase("name");
  nlohmann::json a3c = parts.resolved_a3c;
  for (const char* key : kFreeA3cKeys) a3c.erase(key);
  id["a3c"] = a3c;
  if (!parts.experiments.empty()) {
    nlohmann::json experiments = nlohmann::json::array();
    for (const auto& file : parts.experiments) experiments.push_back(experiment_identity(load_config(file).resolved));
    id["experiments"] = experiments;
  }
  if (!parts.surrogate_digest.empty()) id["surrogate"] = parts.surrogate_digest;
  if (id.contains("focus") && id["focus"].is_object()) {
    id["focus"].erase("files");
    id["focus"]["draws"] = parts.focus_draws;
  }
  return id;
}

}  // namespace experiments
