#!/usr/bin/env bash
# Configures and builds everything into build/ (the binary is build/orchestra).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build build --parallel "$(nproc)"
