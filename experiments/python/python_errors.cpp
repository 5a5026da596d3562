// The toolkit's errors in Python. Every common::Error reaches Python as an exception of its own
// class under `orchestra.Error`, with the same one-line message the command line prints (a config
// error names file:line: key) and the attributes `kind` ("config error") and `exit_code` (what
// the command would have exited with). Each class also derives from the built-in exception a
// Python user would catch for that failure, so `except ValueError` catches a bad config as it
// catches a bad argument anywhere else:
//
// | C++ (common/errors.hpp) | Python                 | also a       |
// |-------------------------|------------------------|--------------|
// | ConfigError             | orchestra.ConfigError  | ValueError   |
// | DataError               | orchestra.DataError    | ValueError   |
// | UsageError              | orchestra.UsageError   | ValueError   |
// | PlanError               | orchestra.PlanError    | RuntimeError |
// | CommError               | orchestra.CommError    | RuntimeError |
// | ProtocolError           | orchestra.ProtocolError | RuntimeError |
// | PlotError               | orchestra.PlotError    | RuntimeError |
// | another kind            | orchestra.Error        | Exception    |
//
// The rest keep pybind11's translation: std::invalid_argument (a bad action, a step after the
// episode ended) is a ValueError, std::out_of_range an IndexError, any other std::exception a
// RuntimeError; none of them crashes the interpreter.
#include <Python.h>

#include <string>
#include <vector>

#include "common/errors.hpp"
#include "experiments/python/bindings.hpp"

namespace experiments::python {

namespace py = pybind11;

namespace {

struct ErrorKind {
  const char* kind;     // common::Error::kind()
  const char* name;     // the Python class, in module `orchestra`
  PyObject* builtin;    // the built-in base besides orchestra.Error
  void (*raise)(const std::string& message);  // throws the C++ error (the tests' way to reach each row)
  PyObject* type = nullptr;
};

template <class E>
void raise_as(const std::string& message) {
  throw E(message);
}

std::vector<ErrorKind>& kinds() {
  static std::vector<ErrorKind> table = {
      {"config error", "ConfigError", PyExc_ValueError, &raise_as<common::ConfigError>},
      {"data error", "DataError", PyExc_ValueError, &raise_as<common::DataError>},
      {"usage error", "UsageError", PyExc_ValueError, &raise_as<common::UsageError>},
      {"plan error", "PlanError", PyExc_RuntimeError, &raise_as<common::PlanError>},
      {"communication error", "CommError", PyExc_RuntimeError, &raise_as<common::CommError>},
      {"protocol error", "ProtocolError", PyExc_RuntimeError, &raise_as<common::ProtocolError>},
      {"plot error", "PlotError", PyExc_RuntimeError, &raise_as<common::PlotError>},
  };
  return table;
}

// orchestra.Error: the base of every class above, and the class of a kind not in the table.
PyObject* base_error = nullptr;

PyObject* new_class(const char* name, PyObject* bases, const char* doc) {
  const std::string qualified = std::string("orchestra.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (type == nullptr) throw py::error_already_set();
  return type;  // a new reference, kept for the life of the process (the module is never unloaded)
}

void set_python_error(const common::Error& e) {
  PyObject* type = base_error;
  for (const auto& k : kinds())
    if (std::string(e.kind()) == k.kind) type = k.type;
  // A message may quote a file's bytes (a JSON parser's "last read: '\xff'"): not UTF-8 text, so
  // decoded with U+FFFD for what is not, where a plain conversion would raise UnicodeDecodeError
  // in place of the error.
  const std::string what = e.what();
  PyObject* text = PyUnicode_DecodeUTF8(what.data(), static_cast<Py_ssize_t>(what.size()), "replace");
  if (text == nullptr) throw py::error_already_set();
  py::object error = py::reinterpret_borrow<py::object>(type)(py::reinterpret_steal<py::str>(text));
  error.attr("kind") = e.kind();
  error.attr("exit_code") = e.exit_code();
  PyErr_SetObject(type, error.ptr());
}

}  // namespace

void bind_errors(py::module_& m) {
  base_error = new_class("Error", PyExc_Exception,
                         "An error of the toolkit: `kind` says which (\"config error\"), `exit_code` what the "
                         "orchestra command exits with for it (2: bad input, 1: a failure at run time).");
  m.attr("Error") = py::handle(base_error);
  for (auto& k : kinds()) {
    const py::tuple bases = py::make_tuple(py::handle(base_error), py::handle(k.builtin));
    k.type = new_class(k.name, bases.ptr(), (std::string("common::") + k.name + " of the toolkit (" + k.kind + ").").c_str());
    m.attr(k.name) = py::handle(k.type);
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const common::Error& e) {
      set_python_error(e);
    }
  });
  // For the tests of the mapping: throws the C++ error of `kind` (one of the table's, or any other
  // string for an error of a kind the table does not know) with `message`.
  m.def(
      "_raise_error",
      [](const std::string& kind, const std::string& message) {
        for (const auto& k : kinds())
          if (kind == k.kind) k.raise(message);
        throw common::Error(common::ExitCode::Failure, "unknown error", message);
      },
      py::arg("kind"), py::arg("message"));
  m.attr("_error_kinds") = [] {
    py::dict out;
    for (const auto& k : kinds()) out[k.kind] = k.name;
    return out;
  }();
}

}  // namespace experiments::python
