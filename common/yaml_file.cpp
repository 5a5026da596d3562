#include "common/yaml_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/errors.hpp"

namespace common {

YAML::Node read_yaml_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw ConfigError(path + ": no such config file");
  if (std::filesystem::is_directory(path, ec)) throw ConfigError(path + ": is a directory, not a config file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot read (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(path + ": cannot read (" + std::strerror(errno) + ")");
  try {
    return YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
}

}  // namespace common
