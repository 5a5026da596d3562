#!/usr/bin/env bash
# The README's first command: installs the Debian packages, builds the `orchestra` binary (only
# it: the test suites are scripts/test.sh's), and runs the quickstart experiment on Fashion-MNIST
# (configs/quickstart.yaml: five barrier policies on a cluster with a straggler and a slow
# network, under a minute on 2 cores). It ends with the comparison table, two
# lines that say who wins and why, and the figures it drew: the accuracy-vs-time plot and the
# timeline of where each worker's time goes (results/quickstart/plots/*.png).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh orchestra  # BENCHMARKS.md, "Build time"
build/orchestra run configs/quickstart.yaml --out results/quickstart --plot
