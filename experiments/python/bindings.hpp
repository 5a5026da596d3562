// The parts of the `orchestra` Python module's compiled core (`orchestra._core`), one per file;
// module.cpp puts them together. The Python package around it (experiments/python/orchestra/)
// adds the Gymnasium class, pandas and the documentation a Python user reads.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace experiments::python {

// A path from Python as the system will read it. Python strings may hold a NUL byte, where the
// system's calls end the path: "a.yaml\0b" read a.yaml. A ValueError, as Python's open() gives.
inline const std::string& checked_path(const std::string& path, const std::string& what) {
  if (path.find('\0') != std::string::npos) throw pybind11::value_error(what + ": embedded null byte in the path");
  return path;
}

// python_errors.cpp: the toolkit's error kinds as Python exception classes, and the translation.
void bind_errors(pybind11::module_& m);
// barrier_env_binding.cpp: the environment `orchestra train` trains on, stepped from Python.
void bind_barrier_env(pybind11::module_& m);
// policy_binding.cpp: a policy file and the controller's greedy (or sampled) action.
void bind_policy(pybind11::module_& m);
// experiment_binding.cpp: `orchestra run` and the index of a results folder.
void bind_experiments(pybind11::module_& m);

}  // namespace experiments::python
