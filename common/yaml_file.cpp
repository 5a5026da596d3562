#include "common/yaml_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>
#include <algorithm>

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
  return parse_yaml_text(text.str(), path);
}

YAML::Node parse_yaml_text(const std::string& text, const std::string& file) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    const std::string why = e.msg.substr(0, e.msg.find('\n'));
    throw ConfigError(file + ":" + std::to_string(std::max(e.mark.line, 0) + 1) + ": not valid YAML: " + (why.empty() ? "a character YAML does not allow" : why));
  }
  for (std::size_t k = 1; k < documents.size(); ++k)  // an empty one (a trailing `---`) says nothing
    if (documents[k] && !documents[k].IsNull())
      throw ConfigError(file + ":" + std::to_string(std::max(documents[k].Mark().line, 0) + 1) + ": a second YAML document: one config per file");
  return documents.empty() ? YAML::Node() : documents.front();
}

}  // namespace common
