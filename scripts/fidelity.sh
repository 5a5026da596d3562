#!/usr/bin/env bash
# The simulator's fidelity experiment (BENCHMARKS.md "Simulator fidelity"), in one command:
# for each config in configs/fidelity/, REPEATS real runs on this machine (orchestra launch, one
# process per worker), the calibration of the first (orchestra calibrate), the calibrated
# simulation (orchestra run) and three comparisons:
#   fidelity.md              the simulation against the real run it was calibrated on;
#   heldout-K/fidelity.md    the simulation against real run K, which the calibration never saw;
#   repeat-K/run_to_run.md   real run 1 against real run K: how far two runs of this machine are
#                            apart, the floor below which no simulation can match one real run;
#   mean/fidelity.md         the simulation against the mean of all REPEATS real runs, rankings
#                            judged on the pairs of policies that every real run orders alike.
# The load average before and after each real run is kept, since real timings depend on what else
# the machine is doing.
#
#   scripts/fidelity.sh [OUT_DIR] [CONFIG...]     (default: results/fidelity, configs/fidelity/*.yaml)
#   REPEATS=1 scripts/fidelity.sh                 (one real run per config, no held-out comparison)
#
# Prints each comparison table and, at the end, one summary line per comparison. Each real run
# takes tens of seconds (the whole script ~3 min with REPEATS=3); run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/fidelity}
shift || true
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(configs/fidelity/*.yaml)
repeats=${REPEATS:-3}
bin=build/orchestra
[ -x "$bin" ] || scripts/build.sh

load() { cut -d' ' -f1-3 /proc/loadavg; }
# One summary line from a comparison's table: its error line and its two ranking verdicts.
line() { echo "$(grep '^epoch time:' "$1") | $(grep '^ranking by epoch time:' "$1" | cut -d'(' -f1)| $(grep '^ranking by time to target:' "$1" | cut -d'(' -f1)"; }
summary=""
for cfg in "${configs[@]}"; do
  name=$(basename "$cfg" .yaml)
  dir="$out/$name"
  rm -rf "$dir"
  mkdir -p "$dir"
  # One process per worker: the `- {name: ...}` lines of the config's `  workers:` list.
  nproc=$(awk '/^  workers:/ {on = 1; next} on && /^    - / {n++; next} on {on = 0} END {print n}' "$cfg")
  for k in $(seq 1 "$repeats"); do
    real="$dir/real"; [ "$k" = 1 ] || real="$dir/real-$k"
    before=$(load)
    "$bin" launch --nproc "$nproc" "$cfg" --out "$real" --quiet
    echo "== $name, real run $k: $nproc processes; load average (1, 5, 15 min) before: $before; after: $(load)" | tee -a "$dir/load.txt"
  done
  "$bin" calibrate "$dir/real" --out "$dir/calibrated.yaml" | tee "$dir/calibration.txt"
  "$bin" run "$dir/calibrated.yaml" --out "$dir/sim" --quiet
  "$bin" compare "$dir/real" --sim "$dir/sim" --out "$dir"
  summary+="$name, sim vs the real run it was calibrated on: $(line "$dir/fidelity.md")"$'\n'
  for k in $(seq 2 "$repeats"); do
    "$bin" compare "$dir/real-$k" --sim "$dir/sim" --out "$dir/heldout-$k"
    "$bin" compare "$dir/real" --repeat "$dir/real-$k" --out "$dir/repeat-$k"
    summary+="$name, sim vs held-out real run $k: $(line "$dir/heldout-$k/fidelity.md")"$'\n'
    summary+="$name, real run 1 vs real run $k: $(line "$dir/repeat-$k/run_to_run.md")"$'\n'
  done
  if [ "$repeats" -gt 1 ]; then
    reals=("$dir/real")
    for k in $(seq 2 "$repeats"); do reals+=("$dir/real-$k"); done
    "$bin" compare "${reals[@]}" --sim "$dir/sim" --out "$dir/mean"
    summary+="$name, sim vs the mean of the $repeats real runs: $(line "$dir/mean/fidelity.md")"$'\n'
  fi
done
echo
echo "== summary"
printf '%s' "$summary"
