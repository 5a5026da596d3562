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
}

}  // namespace experiments
