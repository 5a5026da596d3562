#!/usr/bin/env bash
# Configures build/ (once) and builds the targets given, or everything (the binary, the test suites,
# the probe the Python test runs) when none is: `scripts/build.sh orchestra` builds only what the
# quickstart needs (scripts/install.sh), `scripts/build.sh` the rest as well (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# Unity builds, the default (cmake/ProjectOptions.cmake): about 40% of the compile time of a clean
# build. To iterate on one file: cmake -S . -B build -DORCHESTRA_UNITY_BUILD=OFF.
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build build --parallel "$(nproc)" "${targets[@]}"
