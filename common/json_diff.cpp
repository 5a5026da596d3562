#include "common/json_diff.hpp"

namespace common {
namespace {

void collect(const nlohmann::json& a, const nlohmann::json& b, const std::string& prefix, std::vector<std::string>& out) {
  if (!a.is_object() || !b.is_object()) {
    if (a != b) out.push_back(prefix);
    return;
  }
  auto i = a.begin();
  auto j = b.begin();
  // nlohmann's objects keep their keys sorted: one merge pass.
  while (i != a.end() || j != b.end()) {
    if (j == b.end() || (i != a.end() && i.key() < j.key())) {
      out.push_back(prefix.empty() ? i.key() : prefix + "." + i.key());
      ++i;
    } else if (i == a.end() || j.key() < i.key()) {
      out.push_back(prefix.empty() ? j.key() : prefix + "." + j.key());
      ++j;
    } else {
      collect(i.value(), j.value(), prefix.empty() ? i.key() : prefix + "." + i.key(), out);
      ++i;
      ++j;
    }
  }
}

const nlohmann::json* at_path(const nlohmann::json& doc, const std::string& path) {
  const nlohmann::json* node = &doc;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return node;
}

std::string shown_value(const nlohmann::json* v) {
  if (!v) return "absent";
  std::string text = v->dump();
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

}  // namespace

std::vector<std::string> differing_keys(const nlohmann::json& a, const nlohmann::json& b) {
  std::vector<std::string> out;
  collect(a, b, "", out);
  return out;
}

std::string describe_differences(const nlohmann::json& before, const nlohmann::json& now, std::size_t shown) {
  const std::vector<std::string> keys = differing_keys(before, now);
  std::string text;
  for (std::size_t k = 0; k < keys.size() && k < shown; ++k)
    text += (k ? ", " : "") + keys[k] + " (" + shown_value(at_path(before, keys[k])) + ", now " + shown_value(at_path(now, keys[k])) + ")";
  if (keys.size() > shown) text += " and " + std::to_string(keys.size() - shown) + " more";
  return text;
}

}  // namespace common
