#!/usr/bin/env bash
# The README's first command: installs the Debian packages, builds the `orchestra` binary and the
# Python module (only them: the test suites are scripts/test.sh's), and runs the quickstart
# experiment on Fashion-MNIST
# (configs/quickstart.yaml: five barrier policies on a cluster with a straggler and a slow
# network, under a minute on 2 cores). It ends with the comparison table, two
# lines that say who wins and why, and the figures it drew: the accuracy-vs-time plot and the
# timeline of where each worker's time goes (results/quickstart/plots/*.png).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh orchestra  # BENCHMARKS.md, "Build time"
# The Python module (README "From Python": PYTHONPATH=build/python python3 -c "import orchestra"),
# where configure found pybind11 and a Python with its headers; it says so otherwise.
if grep -q '^build orchestra_python:' build/build.ninja; then
  cmake --build build --parallel "$(nproc)" --target orchestra_python
else
  echo "install.sh: the Python module is not built here: $(grep -m1 '^ORCHESTRA_PYTHON_SKIP_REASON' build/CMakeCache.txt | cut -d= -f2-)"
fi
build/orchestra run configs/quickstart.yaml --out results/quickstart --plot
