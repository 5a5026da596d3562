#include "common/yaml_reader.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "common/errors.hpp"
#include "common/names.hpp"

namespace common {
namespace {

// One key of a mapping and its value (null when written without one), or nothing.
struct KeyEntry {
  YAML::Node key;
  YAML::Node value;
};
std::optional<KeyEntry> entry_of(const YAML::Node& map, const std::string& key) {
  if (!map || !map.IsMap()) return std::nullopt;
  for (auto it = map.begin(); it != map.end(); ++it)
    if (it->first.Scalar() == key) return KeyEntry{it->first, it->second};
  return std::nullopt;
}

std::string shown(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "nothing";
}

// What an integer key accepts: "a positive integer", "an integer >= 2", "an integer <= 64", ...
std::string range_text(std::int64_t min, std::int64_t max, std::int64_t got, bool parsed) {
  std::ostringstream s;
  if (parsed && got > max) {
    s << "an integer <= " << max;
  } else if (min == 1) {
    s << "a positive integer";
  } else if (min == 0) {
    s << "a non-negative integer";
  } else {
    s << "an integer >= " << min;
  }
  return s.str();
}

bool parse_integer(const std::string& text, std::int64_t& out) {
  std::size_t used = 0;
  try {
    out = std::stoll(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == text.size();
}

bool parse_real(const std::string& text, double& out) {
  std::size_t used = 0;
  try {
    out = std::stod(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == text.size() && std::isfinite(out);
}

}  // namespace

std::string where(const YAML::Node& node, const std::string& file) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return file;
  return file + ":" + std::to_string(mark.line + 1);
}

YamlReader::YamlReader(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {
  if (node_ && !node_.IsNull() && !node_.IsMap()) fail_at(node_, file_, path_.empty() ? "config" : path_, "expected a mapping of keys, got " + shown(node_));
  // yaml-cpp keeps both entries of a repeated key and answers lookups with the first, so a
  // second `seed:` would be ignored without a word.
  if (!node_ || !node_.IsMap()) return;
  std::map<std::string, YAML::Mark> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string();
    const auto [first, fresh] = seen.emplace(key, it->first.Mark());
    if (!fresh)
      fail_at(it->first, file_, key_path(key),
              "duplicate key (first given on line " + std::to_string(first->second.line + 1) + ")");
  }
}

void YamlReader::fail_at(const YAML::Node& node, const std::string& file, const std::string& path,
                         const std::string& message) {
  throw ConfigError(where(node, file) + ": " + path + ": " + message);
}

void YamlReader::fail(const std::string& key, const std::string& message) const {
  const std::optional<KeyEntry> entry = entry_of(node_, key);
  if (entry && !entry->value.IsNull() && !entry->value.Mark().is_null()) fail_at(entry->value, file_, key_path(key), message);
  // A key without a value: yaml-cpp marks its null where parsing went on (the next line), so
  // point at the key itself; a missing key, at the mapping.
  if (entry && !entry->key.Mark().is_null()) fail_at(entry->key, file_, key_path(key), message);
  fail_at(node_, file_, key_path(key), message);
}

YAML::Node YamlReader::value(const std::string& key) const {
  const std::optional<KeyEntry> entry = entry_of(node_, key);
  return entry ? entry->value : YAML::Node();
}

bool YamlReader::has(const std::string& key) const {
  const YAML::Node v = value(key);
  return v && !v.IsNull();
}

// value() answers a missing key with a null node too: this looks for the key itself.
bool YamlReader::given(const std::string& key) const { return entry_of(node_, key).has_value(); }

std::int64_t YamlReader::integer(const std::string& key, std::int64_t fallback, std::int64_t min, std::int64_t max) {
  read_.insert(key);
  std::int64_t v = fallback;
  if (given(key)) {  // a key without a value is an error, not its default
    const YAML::Node n = value(key);
    if (!n.IsScalar() || !parse_integer(n.Scalar(), v)) fail(key, "expected " + range_text(min, max, 0, false) + ", got " + shown(n));
    if (v < min || v > max) fail(key, "expected " + range_text(min, max, v, true) + ", got " + n.Scalar());
  }
  resolved_[key] = v;
  return v;
}

std::int64_t YamlReader::required_integer(const std::string& key, std::int64_t min, std::int64_t max) {
  if (!has(key)) fail(key, "required key is missing");
  return integer(key, 0, min, max);
}

double YamlReader::real(const std::string& key, double fallback, double min, double max, bool min_exclusive) {
  read_.insert(key);
  double v = fallback;
  if (given(key)) {  // a key without a value is an error, not its default
    const YAML::Node n = value(key);
    std::ostringstream expect;
    expect << "expected a number " << (min_exclusive ? "> " : ">= ") << min;
    if (max < std::numeric_limits<double>::max()) expect << " and <= " << max;
    if (!n.IsScalar() || !parse_real(n.Scalar(), v)) fail(key, expect.str() + ", got " + shown(n));
    if (v < min || (min_exclusive && v == min) || v > max) fail(key, expect.str() + ", got " + n.Scalar());
  }
  resolved_[key] = v;
  return v;
}

bool YamlReader::boolean(const std::string& key, bool fallback) {
  read_.insert(key);
  bool v = fallback;
  if (given(key)) {  // a key without a value is an error, not its default
    const YAML::Node n = value(key);
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) fail(key, "expected true or false, got " + shown(n));
  }
  resolved_[key] = v;
  return v;
}

std::string YamlReader::text(const std::string& key, const std::string& fallback) {
  read_.insert(key);
  std::string v = fallback;
  if (given(key)) {  // a key without a value is an error, not its default
    const YAML::Node n = value(key);
    if (!n.IsScalar()) fail(key, "expected a string, got " + shown(n));
    v = n.Scalar();
  }
  resolved_[key] = v;
  return v;
}

std::string YamlReader::name(const std::string& key, const std::string& fallback) {
  const std::string v = text(key, fallback);
  if (const auto problem = name_problem(v)) fail(key, "expected a name (it names a folder or a column), got " + quoted_name(v) + ", which " + *problem);
  return v;
}

std::string YamlReader::choice(const std::string& key, const std::string& fallback, const std::vector<std::string>& allowed) {
  const std::string v = text(key, fallback);
  for (const auto& a : allowed)
    if (a == v) return v;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  fail(key, "expected one of " + list + ", got '" + v + "'");
}

std::vector<double> YamlReader::reals(const std::string& key, double min, double max) {
  read_.insert(key);
  std::vector<double> out;
  if (!has(key)) return out;
  const YAML::Node n = value(key);
  if (!n.IsSequence()) fail(key, "expected a list of numbers, got " + shown(n));
  for (std::size_t i = 0; i < n.size(); ++i) {
    double v = 0;
    if (!n[i].IsScalar() || !parse_real(n[i].Scalar(), v) || v < min || v > max) {
      std::ostringstream expect;
      expect << "expected a number";
      if (min > std::numeric_limits<double>::lowest()) expect << " >= " << min;
      if (max < std::numeric_limits<double>::max()) expect << (min > std::numeric_limits<double>::lowest() ? " and" : "") << " <= " << max;
      fail_at(n[i], file_, key_path(key) + "[" + std::to_string(i) + "]", expect.str() + ", got " + shown(n[i]));
    }
    out.push_back(v);
  }
  resolved_[key] = out;
  return out;
}

std::vector<std::int64_t> YamlReader::integers(const std::string& key, const std::vector<std::int64_t>& fallback,
                                               std::int64_t min, std::int64_t max) {
  read_.insert(key);
  std::vector<std::int64_t> out = fallback;
  if (given(key)) {  // a key without a value is an error, not its default
    const YAML::Node n = value(key);
    if (!n.IsSequence()) fail(key, "expected a list of integers, got " + shown(n));
    out.clear();
    for (std::size_t i = 0; i < n.size(); ++i) {
      std::int64_t v = 0;
      const bool parsed = n[i].IsScalar() && parse_integer(n[i].Scalar(), v);
      if (!parsed || v < min || v > max)
        fail_at(n[i], file_, key_path(key) + "[" + std::to_string(i) + "]", "expected " + range_text(min, max, v, parsed) + ", got " + shown(n[i]));
      out.push_back(v);
    }
  }
  resolved_[key] = out;
  return out;
}

YamlReader YamlReader::child(const std::string& key) {
  read_.insert(key);
  return YamlReader(value(key), file_, key_path(key));
}

std::vector<YAML::Node> YamlReader::sequence(const std::string& key) {
  read_.insert(key);
  std::vector<YAML::Node> out;
  if (!has(key)) return out;
  const YAML::Node n = value(key);
  if (!n.IsSequence()) fail(key, "expected a list, got " + shown(n));
  for (std::size_t i = 0; i < n.size(); ++i) out.push_back(n[i]);
  return out;
}

YAML::Node YamlReader::raw(const std::string& key) {
  read_.insert(key);
  return value(key);
}

void YamlReader::reject_unknown_keys() const {
  if (!node_ || !node_.IsMap()) return;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    // A key that is a list or a mapping (`[a, b]: 3`) has no name: show how it was written.
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : YAML::Dump(it->first);
    if (!it->first.IsScalar() || !read_.count(key)) {
      std::string known;
      for (const auto& k : read_) known += (known.empty() ? "" : ", ") + k;
      fail_at(it->first, file_, key_path(key), "unknown key" + (known.empty() ? std::string() : " (known here: " + known + ")"));
    }
  }
}

}  // namespace common
