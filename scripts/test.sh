#!/usr/bin/env bash
# The README's second command: builds (installing the Debian packages first if any is missing)
# and runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build
ctest --output-on-failure --parallel "$(nproc)" "$@"
