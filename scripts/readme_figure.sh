#!/usr/bin/env bash
# Redraws the README's figure (docs/images/quickstart_accuracy.png) from a fresh quickstart run,
# after scripts/build.sh. Same config and seed give the same figure.
set -euo pipefail
cd "$(dirname "$0")/.."
build/orchestra run configs/quickstart.yaml --out results/quickstart --plot --quiet > /dev/null
mkdir -p docs/images
cp results/quickstart/plots/accuracy_vs_time.png docs/images/quickstart_accuracy.png
echo "docs/images/quickstart_accuracy.png"
