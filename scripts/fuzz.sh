#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/: the YAML config loader and the `balance` JSON reader) with
# clang, AddressSanitizer and UndefinedBehaviorSanitizer into build-fuzz/, then runs each for a
# bounded time. A crash stops the script with the fuzzer's report and the input that caused it
# (build-fuzz/artifacts/); replay one with `build-fuzz/fuzz/fuzz_config FILE`.
#
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60; env FUZZ_SECONDS works too)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-${FUZZ_SECONDS:-60}}"
jobs="${JOBS:-2}"  # CI machines have 2 cores

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found; run scripts/install-deps.sh (Debian's clang and libclang-rt-14-dev)" >&2
  exit 1
fi

start=$(date +%s)
# -O1 -g1: libFuzzer's usual trade between speed and readable reports (-g1: function names and line
# tables, all a report reads, without the full debug information of the libtorch headers that the
# config loader's libraries include). fuzzer-no-link instruments the libraries under test for
# coverage; only the fuzz targets link libFuzzer's main.
# -fno-sanitize-recover: undefined behaviour stops the run like a crash instead of scrolling by.
flags="-O1 -g1 -fno-omit-frame-pointer -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all"
if [ ! -f build-fuzz/build.ninja ]; then
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS_DEBUG="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DORCHESTRA_BUILD_TESTS=OFF -DORCHESTRA_BUILD_BENCH=OFF -DORCHESTRA_BUILD_FUZZ=ON -DORCHESTRA_BUILD_PYTHON=OFF
fi
cmake --build build-fuzz --parallel "$jobs" --target fuzz_config fuzz_balance
built=$(date +%s)
echo "fuzz.sh: built in $((built - start)) s"

mkdir -p build-fuzz/corpus/config build-fuzz/corpus/balance build-fuzz/artifacts
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
run() {
  local target="$1"; shift
  echo "fuzz.sh: $target for ${seconds} s"
  # The first corpus folder (in build-fuzz/) gathers what the fuzzer finds; the others are seeds:
  # the shipped configs, and fuzz/corpus/ with every input that once crashed (regressions).
  # -rss_limit_mb / -timeout: an input that eats 2 GB or 10 s is a finding, not a hang of CI.
  # -seed=1: the same inputs in the same order on every run, so CI does not fail on a lucky draw.
  "build-fuzz/fuzz/$target" -seed=1 -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/artifacts/$target-" "$@"
}
run fuzz_config -dict=fuzz/yaml.dict build-fuzz/corpus/config configs fuzz/corpus/config
run fuzz_balance build-fuzz/corpus/balance fuzz/corpus/balance
echo "fuzz.sh: no crash; $(( $(date +%s) - start )) s in all"
