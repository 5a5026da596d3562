#!/usr/bin/env bash
# The simulator's fidelity experiment (BENCHMARKS.md "Simulator fidelity"), in one command:
# for each config in configs/fidelity/, a real run on this machine (orchestra launch, one process
# per worker), its calibration (orchestra calibrate), the calibrated simulation (orchestra run) and
# the comparison (orchestra compare REAL --sim SIM), with the load average before and after each
# real run, since real timings depend on what else the machine is doing.
#
#   scripts/fidelity.sh [OUT_DIR] [CONFIG...]     (default: results/fidelity, configs/fidelity/*.yaml)
#
# Prints each comparison table and, at the end, the mean absolute epoch-time error over every
# configuration. Each real run takes tens of seconds; run it on a quiet machine for the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/fidelity}
shift || true
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(configs/fidelity/*.yaml)
bin=build/orchestra
[ -x "$bin" ] || scripts/build.sh

load() { cut -d' ' -f1-3 /proc/loadavg; }
summary=""
for cfg in "${configs[@]}"; do
  name=$(basename "$cfg" .yaml)
  dir="$out/$name"
  rm -rf "$dir"
  mkdir -p "$dir"
  # One process per worker: the `- {name: ...}` lines of the config's `  workers:` list.
  nproc=$(awk '/^  workers:/ {on = 1; next} on && /^    - / {n++; next} on {on = 0} END {print n}' "$cfg")
  before=$(load)
  "$bin" launch --nproc "$nproc" "$cfg" --out "$dir/real" --quiet
  after=$(load)
  echo "== $name: $nproc processes; load average (1, 5, 15 min) before the real run: $before; after: $after" | tee "$dir/load.txt"
  "$bin" calibrate "$dir/real" --out "$dir/calibrated.yaml" | tee "$dir/calibration.txt"
  "$bin" run "$dir/calibrated.yaml" --out "$dir/sim" --quiet
  "$bin" compare "$dir/real" --sim "$dir/sim" --out "$dir"
  summary+="$name: $(grep '^epoch time:' "$dir/fidelity.md") | $(grep '^ranking by epoch time:' "$dir/fidelity.md" | cut -d'(' -f1)| $(grep '^ranking by time to target:' "$dir/fidelity.md" | cut -d'(' -f1)| load $before -> $after"$'\n'
done
echo
echo "== summary"
printf '%s' "$summary"
