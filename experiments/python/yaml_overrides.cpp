#include "experiments/python/yaml_overrides.hpp"

#include <cmath>
#include <set>

namespace experiments::python {

namespace py = pybind11;

namespace {

// Python's float repr is the shortest text that reads back as the same double.
std::string float_text(double value) { return py::repr(py::float_(value)).cast<std::string>(); }

}  // namespace

YAML::Node to_yaml(const py::handle& value, const std::string& where) {
  if (value.is_none()) return YAML::Node(YAML::NodeType::Null);
  // bool before int: Python's True is an int too.
  if (py::isinstance<py::bool_>(value)) return YAML::Node(value.cast<bool>() ? "true" : "false");
  if (py::isinstance<py::int_>(value)) return YAML::Node(py::str(value).cast<std::string>());
  if (py::isinstance<py::float_>(value)) {
    const double x = value.cast<double>();
    if (!std::isfinite(x)) throw py::value_error(where + ": expected a finite number, got " + float_text(x));
    return YAML::Node(float_text(x));
  }
  if (py::isinstance<py::str>(value)) return YAML::Node(value.cast<std::string>());
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    YAML::Node list(YAML::NodeType::Sequence);
    std::size_t i = 0;
    for (const py::handle item : value) list.push_back(to_yaml(item, where + "[" + std::to_string(i++) + "]"));
    return list;
  }
  if (py::isinstance<py::dict>(value)) {
    YAML::Node map(YAML::NodeType::Map);
    for (const auto& [key, item] : value.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key))
        throw py::type_error(where + ": keys must be strings, got " + py::repr(key).cast<std::string>());
      const std::string name = key.cast<std::string>();
      map[name] = to_yaml(item, where + "." + name);
    }
    return map;
  }
  throw py::type_error(where + ": expected None, a bool, a number, a string, or a list or dict of them, got " +
                       py::repr(py::type::of(value)).cast<std::string>());
}

YAML::Node merge_overrides(const YAML::Node& root, const YAML::Node& overrides) {
  // A fresh mapping (no line of its own) holding the file's entries in their order, key nodes and
  // all (force_insert keeps the nodes, with their lines, and a repeated key, which the reader then
  // reports as one): an error about an overriding value or key names no line, one about the
  // file's names its line.
  YAML::Node merged(YAML::NodeType::Map);
  std::set<std::string> replaced;
  for (const auto& entry : root) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    const YAML::Node theirs = overrides[key];
    if (!theirs || replaced.count(key)) {
      merged.force_insert(entry.first, entry.second);
      continue;
    }
    replaced.insert(key);
    if (entry.second.IsMap() && theirs.IsMap())
      merged.force_insert(entry.first, merge_overrides(entry.second, theirs));
    else
      merged.force_insert(YAML::Node(key), theirs);
  }
  for (const auto& entry : overrides)
    if (!replaced.count(entry.first.Scalar())) merged.force_insert(entry.first, entry.second);
  return merged;
}

}  // namespace experiments::python
