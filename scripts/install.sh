#!/usr/bin/env bash
# The README's first command: installs the Debian packages, builds, and runs the quickstart
# experiment on Fashion-MNIST, ending with its comparison table.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build/orchestra run configs/quickstart.yaml --out results/quickstart
