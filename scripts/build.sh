#!/usr/bin/env bash
# Configures build/ (once) and builds the targets given, or everything (the binary, the test suites,
# the probe the Python test runs) when none is: `scripts/build.sh orchestra` builds only what the
# quickstart needs (scripts/install.sh), `scripts/build.sh` the rest as well (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# Not unity builds (-DORCHESTRA_UNITY_BUILD=ON): sources written since they were tried give names of
# their own to helpers in anonymous namespaces, which clash in a batch; the option stays for
# whoever makes every library batch-clean, with a CI build that keeps it so.
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build build --parallel "$(nproc)" "${targets[@]}"
