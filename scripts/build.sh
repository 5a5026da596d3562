#!/usr/bin/env bash
# Configures build/ (once) and builds the targets given, or everything (the binary, the test suites,
# the probe the Python test runs) when none is: `scripts/build.sh orchestra` builds only what the
# quickstart needs (scripts/install.sh), `scripts/build.sh` the rest as well (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# Unity builds make a clean build much shorter (BENCHMARKS.md, "Build time"); a developer's own
# build dir, configured without them, recompiles only the file edited.
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DORCHESTRA_UNITY_BUILD=ON
fi
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build build --parallel "$(nproc)" "${targets[@]}"
