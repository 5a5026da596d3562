#include "experiments/python/yaml_overrides.hpp"

#include <cmath>
#include <set>

namespace experiments::python {

namespace py = pybind11;

namespace {

// Python's float repr is the shortest text that reads back as the same double.
std::string float_text(double value) { return py::repr(py::float_(value)).cast<std::string>(); }

// A controller key that belongs to one value of another: an override that picks another value
// drops the file's key with it, unless it gives the key again. So controller=policy.controller
// (an additive move, say) replaces a file's multiplicative `factor:` instead of clashing with it.
struct Belongs {
  const char* key;
  const char* to;     // the key whose value it belongs with
  const char* other;  // the value of `to` it does not go with
};
constexpr Belongs kControllerParameters[] = {
    {"factor", "move", "additive"},
    {"unit_ms", "move", "multiplicative"},
    {"interval_rounds", "interval", "epoch"},
};

bool dropped_by(const std::string& key, const YAML::Node& overrides) {
  for (const Belongs& b : kControllerParameters) {
    if (key != b.key || overrides[b.key]) continue;
    const YAML::Node chosen = overrides[b.to];
    if (chosen && chosen.IsScalar() && chosen.Scalar() == b.other) return true;
  }
  return false;
}

YAML::Node merge_mappings(const YAML::Node& root, const YAML::Node& overrides, const std::string& path);

}  // namespace

namespace {

// Deeper than any config (a policy entry inside a list of experiments is 5): a list or dict that
// contains itself recursed until the C++ stack overflowed, and the interpreter crashed.
constexpr int kMaxDepth = 64;

YAML::Node to_yaml_at(const py::handle& value, const std::string& where, int depth);

}  // namespace

YAML::Node to_yaml(const py::handle& value, const std::string& where) { return to_yaml_at(value, where, 0); }

namespace {

YAML::Node to_yaml_at(const py::handle& value, const std::string& where, int depth) {
  if (depth > kMaxDepth)
    throw py::value_error(where + ": nested more than " + std::to_string(kMaxDepth) + " levels deep (a list or dict that holds itself?)");
  const auto to_yaml = [depth](const py::handle& inner, const std::string& inner_where) { return to_yaml_at(inner, inner_where, depth + 1); };
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
  // numpy's scalars (np.int64(3) from np.arange, np.float32, np.bool_) and paths (pathlib.Path)
  // as the plain values they stand for.
  const py::module_ numpy = py::module_::import("numpy");
  if (py::isinstance(value, numpy.attr("bool_"))) return to_yaml(py::bool_(value.attr("item")()), where);
  if (py::isinstance(value, numpy.attr("integer")) || py::isinstance(value, numpy.attr("floating")))
    return to_yaml(value.attr("item")(), where);
  const py::module_ os = py::module_::import("os");
  if (py::isinstance(value, os.attr("PathLike"))) {
    const py::object text = os.attr("fspath")(value);
    if (py::isinstance<py::str>(text)) return YAML::Node(text.cast<std::string>());
  }
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

}  // namespace

YAML::Node merge_overrides(const YAML::Node& root, const YAML::Node& overrides) { return merge_mappings(root, overrides, ""); }

namespace {

YAML::Node merge_mappings(const YAML::Node& root, const YAML::Node& overrides, const std::string& path) {
  // A fresh mapping (no line of its own) holding the file's entries in their order, key nodes and
  // all (force_insert keeps the nodes, with their lines, and a repeated key, which the reader then
  // reports as one): an error about an overriding value or key names no line, one about the
  // file's names its line.
  YAML::Node merged(YAML::NodeType::Map);
  std::set<std::string> replaced;
  for (const auto& entry : root) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    const YAML::Node theirs = overrides[key];
    if (path == "controller" && dropped_by(key, overrides)) continue;
    if (!theirs || replaced.count(key)) {
      merged.force_insert(entry.first, entry.second);
      continue;
    }
    replaced.insert(key);
    if (entry.second.IsMap() && theirs.IsMap())
      merged.force_insert(entry.first, merge_mappings(entry.second, theirs, path.empty() ? key : path + "." + key));
    else
      merged.force_insert(YAML::Node(key), theirs);
  }
  for (const auto& entry : overrides)
    if (!replaced.count(entry.first.Scalar())) merged.force_insert(entry.first, entry.second);
  return merged;
}

}  // namespace

}  // namespace experiments::python
