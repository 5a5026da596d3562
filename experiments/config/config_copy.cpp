#include "experiments/config/config_copy.hpp"

#include <filesystem>

namespace experiments {

void anchor_relative_paths(YAML::Node& root, const std::string& config_file) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(config_file).parent_path();
  for (const auto& [section, key] : {std::pair{"data", "path"}, std::pair{"runtime", "surrogate"}}) {
    if (!root.IsMap() || !root[section] || !root[section].IsMap()) continue;
    YAML::Node value = root[section][key];
    if (!value || !value.IsScalar() || value.Scalar().empty()) continue;  // empty: the default, no path
    const fs::path path = value.Scalar();
    if (path.is_relative()) root[section][key] = fs::absolute(folder / path).lexically_normal().string();
  }
  // A policy's file is read as given, else beside the config (registry/a3c_policy.cpp,
  // registry/planned_barrier.cpp): the copy names the one the original reads.
  if (!root.IsMap() || !root["policies"] || !root["policies"].IsSequence()) return;
  for (YAML::Node policy : root["policies"]) {
    if (!policy.IsMap()) continue;
    for (const char* key : {"policy", "surrogate"}) {
      YAML::Node value = policy[key];
      if (!value || !value.IsScalar() || value.Scalar().empty()) continue;
      const fs::path path = value.Scalar();
      std::error_code ec;
      if (path.is_absolute()) continue;
      if (fs::exists(path, ec)) policy[key] = fs::absolute(path).lexically_normal().string();
      else if (fs::exists(folder / path, ec)) policy[key] = fs::absolute(folder / path).lexically_normal().string();
    }
  }
}

}  // namespace experiments
