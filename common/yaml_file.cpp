#include "common/yaml_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <cctype>
#include <algorithm>

#include "common/errors.hpp"

namespace common {

YAML::Node read_yaml_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw ConfigError(path + ": no such config file");
  if (std::filesystem::is_directory(path, ec)) throw ConfigError(path + ": is a directory, not a config file");
  // A FIFO or a device would block, or never end: a config is a file.
  if (!std::filesystem::is_regular_file(path, ec)) throw ConfigError(path + ": is not a regular file (a FIFO, socket or device), not a config file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot read (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(path + ": cannot read (" + std::strerror(errno) + ")");
  return parse_yaml_text(text.str(), path);
}

namespace {

// yaml-cpp says "illegal map value" for a tab that indents a line (YAML indents with spaces only,
// and an editor may insert one): the hint names the cause when the line, or the one above it, has one.
std::string tab_hint(const std::string& text, int error_line) {
  std::istringstream lines(text);
  std::string line;
  for (int n = 0; std::getline(lines, line) && n <= error_line; ++n) {
    if (n < error_line - 1) continue;
    const auto indent_end = line.find_first_not_of(" \t");
    if (line.substr(0, indent_end).find('\t') != std::string::npos)
      return " (line " + std::to_string(n + 1) + " is indented with a tab: YAML indents with spaces only)";
  }
  return "";
}

}  // namespace

YAML::Node parse_yaml_text(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    const std::string why = e.msg.substr(0, e.msg.find('\n'));
    const int line = std::max(e.mark.line, 0);
    throw ConfigError(file + ":" + std::to_string(line + 1) + ": not valid YAML: " + (why.empty() ? "a character YAML does not allow" : why) +
                      tab_hint(text, line));
  }
  // Load reads the first document and drops the rest without a word. (LoadAll would say, but it
  // loops forever on some inputs: found by fuzzing.) So the first `---` line after content starts
  // a second document if what follows it is one.
  bool content = false;
  int line = 1;
  for (std::size_t start = 0; start < text.size(); ++line) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view row(text.data() + start, end - start);
    if (row.rfind("---", 0) == 0 && (row.size() == 3 || std::isspace(static_cast<unsigned char>(row[3])))) {
      if (content) {
        YAML::Node second;
        try {
          second = YAML::Load(text.substr(start));
        } catch (const YAML::Exception&) {
          break;  // not a document of its own (a line of a block scalar, say): the first one's
        }
        if (second && !second.IsNull())
          throw ConfigError(file + ":" + std::to_string(line + std::max(second.Mark().line, 0)) + ": a second YAML document: one config per file");
        break;
      }
    } else if (row.find_first_not_of(" \t\r") != std::string_view::npos && row[row.find_first_not_of(" \t\r")] != '#') {
      content = true;
    }
    start = end + 1;
  }
  return root;
}
}  // namespace common
