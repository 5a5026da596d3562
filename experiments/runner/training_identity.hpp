// What an A3C training is, for `orchestra train --resume`: the keys of its config that decide what
// is learned, as one JSON document. The checkpoint records it; a resume under a config whose
// document differs is refused naming the keys (agents/parameter_server.hpp), as `run --resume`
// refuses a changed experiment, instead of going on silently with another learning rate, reward
// or controller.
//
// Left out, so a resume may change them: how long and by how many (a3c.total_updates,
// a3c.agents), how often it reports and saves (checkpoint_every, snapshot_every, log_every,
// stats_window), its timeouts, the config's name, and a3c.init_policy (a resume starts from the
// checkpoint, not from that file). Experiments count by what they run (experiment_identity), not
// by their file's path; so do focus files (by their draws) and the surrogate (by its content,
// env::surrogate_digest).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace experiments {

struct TrainingIdentityParts {
  YAML::Node root;                         // the config's document as written
  nlohmann::json resolved_top;             // its top-level keys as read, defaults filled in
  nlohmann::json resolved_a3c;             // the a3c: section as read, defaults filled in
  std::vector<std::string> experiments;    // resolved paths
  std::vector<std::uint64_t> focus_draws;  // the focus files' clusters
  std::string surrogate_digest;            // environment: surrogate's model (env::surrogate_digest), or empty
};

nlohmann::json training_identity(const TrainingIdentityParts& parts);

// The YAML document as JSON: numbers and booleans as such (so "0.1" and "1e-1" are equal), "~" and
// "null" as null, any other scalar as text.
nlohmann::json yaml_as_json(const YAML::Node& node);

}  // namespace experiments
