// Typed reads from one YAML mapping, with every error naming file:line and the key's full path
// (e.g. "configs/x.yaml:12: policies[2].H: expected a positive integer, got -3"), and a check that
// no unknown key was given and none was given twice. What was read (defaults included) is collected
// as the resolved config. The one reader of every YAML file the toolkit takes (experiments, A3C
// training configs).
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include "common/limits.hpp"
#include <initializer_list>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace common {

class YamlReader {
 public:
  // `node` must be a mapping (or null, meaning empty) with no key twice; `path` is its key path
  // ("" at the top).
  YamlReader(YAML::Node node, std::string file, std::string path);

  // The key with a value (`epochs: 3`; not `epochs:` or `epochs: ~`, whose value is null).
  bool has(const std::string& key) const;
  // The key written, with a value or without: a number, flag or text read from a key written
  // without a value is an error ("expected a positive integer, got nothing"), not the default.
  bool given(const std::string& key) const;
  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t min, std::int64_t max);
  std::int64_t required_integer(const std::string& key, std::int64_t min, std::int64_t max);
  double real(const std::string& key, double fallback, double min, double max, bool min_exclusive = false);
  // A time, coefficient, slowdown, ... in one of the named ranges of common/limits.hpp.
  double real(const std::string& key, double fallback, const Range& range) {
    return real(key, fallback, range.min, range.max, range.min_exclusive);
  }
  bool boolean(const std::string& key, bool fallback);
  std::string text(const std::string& key, const std::string& fallback);
  // A text that becomes a path component or a CSV column (common/names.hpp): an error names the
  // key and says what is wrong with the name.
  std::string name(const std::string& key, const std::string& fallback);
  std::string choice(const std::string& key, const std::string& fallback, const std::vector<std::string>& allowed);
  // One of a typed enum's spellings: {{"uniform", Weighting::Uniform}, {"samples", Weighting::BySamples}}.
  template <class E>
  E option(const std::string& key, E fallback, std::initializer_list<std::pair<const char*, E>> spellings) {
    return option(key, fallback, std::vector<std::pair<const char*, E>>(spellings));
  }
  template <class E>
  E option(const std::string& key, E fallback, const std::vector<std::pair<const char*, E>>& spellings) {
    std::vector<std::string> names;
    std::string fallback_name;
    for (const auto& [name, value] : spellings) {
      names.emplace_back(name);
      if (value == fallback) fallback_name = name;
    }
    const std::string chosen = choice(key, fallback_name, names);
    for (const auto& [name, value] : spellings)
      if (chosen == name) return value;
    return fallback;
  }
  std::vector<double> reals(const std::string& key, double min, double max);
  std::vector<std::int64_t> integers(const std::string& key, const std::vector<std::int64_t>& fallback, std::int64_t min,
                                     std::int64_t max);
  // A nested mapping (absent = empty); mark it read.
  YamlReader child(const std::string& key);
  // A sequence (absent = empty); mark it read.
  std::vector<YAML::Node> sequence(const std::string& key);
  YAML::Node raw(const std::string& key);  // marks the key read; the caller checks the shape

  // Throws for the first key that was never read.
  void reject_unknown_keys() const;

  // file:line: path.key: message
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  [[noreturn]] static void fail_at(const YAML::Node& node, const std::string& file, const std::string& path,
                                   const std::string& message);
  std::string key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  const nlohmann::json& resolved() const { return resolved_; }
  nlohmann::json& resolved() { return resolved_; }

 private:
  YAML::Node value(const std::string& key) const;

  YAML::Node node_;
  std::string file_;
  std::string path_;
  std::set<std::string> read_;
  nlohmann::json resolved_ = nlohmann::json::object();
};

// "file:line" of a node (line from 1), or "file" when the node has no position.
std::string where(const YAML::Node& node, const std::string& file);

}  // namespace common
