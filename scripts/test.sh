#!/usr/bin/env bash
# The README's second command: builds everything (installing the Debian packages first if any is
# missing; after scripts/install.sh, the test suites are what is left to build) and runs the whole
# test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build
ctest --output-on-failure --parallel "$(nproc)" "$@"
