// Keyword arguments of the Python module as YAML: `BarrierEnv("a3c_train.yaml", reward="time",
// controller={"factor": 4})` reads the file and then these keys, so that every key is parsed,
// checked and reported by the one reader of the config (experiments/runner/train_config.hpp), and
// a key added there (environment: surrogate, say) is a keyword here with no change to the module.
//
// How an override meets the file: a mapping merges into the file's mapping key by key
// (recursively), so `controller={"factor": 4}` keeps the file's `move:`; anything else (a number,
// a string, a list) replaces the file's value. In `controller:`, a `move` or `interval` that picks
// another value drops the file's keys of the old one (`factor` of a multiplicative move, `unit_ms`
// of an additive one, `interval_rounds` of `rounds`) unless the override gives them again, so
// controller=policy.controller deploys a policy on any training config. Override nodes carry no line, so an error in one
// reads `FILE: key: ...` where an error in the file reads `FILE:LINE: key: ...`; the module then
// names the keyword instead of the file (barrier_env_binding.cpp).
#pragma once

#include <pybind11/pybind11.h>
#include <yaml-cpp/yaml.h>

#include <string>

namespace experiments::python {

// A Python value as a YAML node: None, bool, int, float, str, numpy's scalars, an os.PathLike,
// and lists, tuples and dicts of them (dict keys must be str). Throws pybind11::type_error naming `where` for anything else
// (a numpy array, an object), and pybind11::value_error for a float that is not finite.
YAML::Node to_yaml(const pybind11::handle& value, const std::string& where);

// `root` (a mapping) with `overrides` merged in as described above; neither is changed.
YAML::Node merge_overrides(const YAML::Node& root, const YAML::Node& overrides);

}  // namespace experiments::python
