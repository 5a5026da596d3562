#include "common/names.hpp"

#include <cstdio>
#include <set>

namespace common {

std::optional<std::string> name_problem(const std::string& name) {
  if (name.empty()) return std::string("is empty");
  if (name == ".") return std::string("is '.', which names the folder it is in");
  if (name == "..") return std::string("is '..', which names the folder above");
  for (const char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '/' || c == '\\') return "holds '" + std::string(1, c) + "', a path separator";
    if (byte < 0x20 || byte == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", byte);
      return "holds a control character (byte " + std::string(hex) + ")";
    }
    if (c == ',' || c == '"') return "holds '" + std::string(1, c) + "', which a CSV cell and a column header cannot hold unquoted";
  }
  if (name.front() == '.') return std::string("starts with '.', which hides a folder (compare skips it, and runs stage their files there)");
  if (name.size() > kMaxNameBytes) return "is " + std::to_string(name.size()) + " bytes long (at most " + std::to_string(kMaxNameBytes) + ")";
  return std::nullopt;
}

std::string quoted_name(const std::string& name) {
  std::string out = "'";
  for (const char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", byte);
      out += hex;
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::optional<std::string> first_duplicate(const std::vector<std::string>& names) {
  std::set<std::string> seen;
  for (const auto& n : names)
    if (!seen.insert(n).second) return n;
  return std::nullopt;
}

}  // namespace common
