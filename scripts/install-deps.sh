#!/usr/bin/env bash
# Installs every dependency from Debian's packages (nothing is downloaded from anywhere else).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev libgloo-dev            # libtorch 1.13 (CPU) with c10d Gloo
  libopenblas0-pthread                # optimized BLAS: Debian's libtorch otherwise uses the reference one (~25x slower)
  libzmq3-dev cppzmq-dev              # ZeroMQ for the A3C agents
  libyaml-cpp-dev nlohmann-json3-dev  # configs and results
  zlib1g-dev                          # gzip-compressed IDX files
  doctest-dev                         # tests
  dataset-fashion-mnist               # the default data, in /usr/share/datasets/fashion-mnist
  gnuplot-nox                         # plots
  python3-torch python3-pandas        # the tests read policy files and CSVs the way a Python user would
  python3-dev python3-numpy pybind11-dev python3-pybind11   # the `orchestra` Python module (experiments/python/)
  clang libclang-rt-14-dev            # libFuzzer and its sanitizer runtimes (scripts/fuzz.sh)
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
