// The compiled core of the `orchestra` Python package (`orchestra._core`): built by CMake into
// build/python/orchestra/ beside the package's Python files (experiments/python/orchestra/).
#include "experiments/python/bindings.hpp"
#include "experiments/surrogate/barrier_planner.hpp"

namespace experiments::python {

// The toolkit's version, as the HTML report states it (CMakeLists.txt's project()).
const char* version() { return ORCHESTRA_VERSION; }

}  // namespace experiments::python

PYBIND11_MODULE(_core, m) {
  m.doc() = "The compiled core of the orchestra package: use `import orchestra`.";
  m.attr("__version__") = experiments::python::version();
  experiments::use_surrogate_barrier_planner();  // configs may name planned-t
  experiments::python::bind_errors(m);
  experiments::python::bind_barrier_env(m);
  experiments::python::bind_policy(m);
  experiments::python::bind_experiments(m);
}
