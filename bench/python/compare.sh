#!/usr/bin/env bash
# Whole-process timings of the same local-SGD experiment: PyTorch Python (local_sgd.py, one module
# per worker) against `orchestra run` with sequential and with batched replicas. The three runs of
# a case alternate; the median of N (default 3) is printed. Needs Debian's python3-torch.
# usage: bench/python/compare.sh [N]   (from the repository root, after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
repeat=${1:-3}
python=${PYTHON:-/usr/bin/python3}  # Debian's, which has python3-torch
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
seconds() { local s; s=$(date +%s.%N); "$@" > /dev/null 2>&1; echo "$(date +%s.%N) - $s" | bc; }
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
echo "| case | python s | sequential s | batched s | batched vs python | batched vs sequential |"
echo "|---|---:|---:|---:|---:|---:|"
for case in "mlp32 mlp 32 32 3" "mlp256 mlp 256 128 3" "lenet cnn 0 128 1"; do
  set -- $case
  config=bench/python/$1.yaml
  { cat "$config"; echo "runtime: {replicas: sequential}"; } > "$tmp/sequential.yaml"
  py=(); seq=(); bat=()
  for _ in $(seq "$repeat"); do
    py+=("$(seconds "$python" bench/python/local_sgd.py --arch "$2" --hidden "$3" --batch "$4" --epochs "$5")")
    seq+=("$(seconds build/orchestra run "$tmp/sequential.yaml" --out "$tmp/s" --quiet)")
    bat+=("$(seconds build/orchestra run "$config" --out "$tmp/b" --quiet)")
  done
  p=$(median "${py[@]}"); s=$(median "${seq[@]}"); b=$(median "${bat[@]}")
  printf '| %s | %.2f | %.2f | %.2f | %.2fx | %.2fx |\n' "$1" "$p" "$s" "$b" "$(echo "$p / $b" | bc -l)" "$(echo "$s / $b" | bc -l)"
done
