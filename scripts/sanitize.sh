#!/usr/bin/env bash
# Sanitizer builds of the test suites, each in its own folder, then ctest on them:
#   scripts/sanitize.sh asan [CTEST_REGEX]  AddressSanitizer + UndefinedBehaviorSanitizer, every
#                                           suite (or those whose test names match the regex),
#                                           into build-asan/
#   scripts/sanitize.sh tsan [CTEST_REGEX]  ThreadSanitizer, the suites whose threads are ours
#                                           (test_agents: the ZeroMQ transport and the parameter
#                                           server), into build-tsan/; skipped with a message if
#                                           that suite does not exist yet
# Suppressions live in sanitizers/, each with the reason it is there.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
regex="${2:-}"
jobs="${JOBS:-2}"  # CI machines have 2 cores
supp="$PWD/sanitizers"

case "$mode" in
  asan)
    dir=build-asan
    # -O1: ASan's documented trade (still fast, readable stacks). -fno-sanitize-recover: undefined
    # behaviour fails its test instead of printing and going on.
    flags="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
    targets=(all)
    export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
    export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
    ;;
  tsan)
    dir=build-tsan
    if ! grep -q 'orchestra_test_suite(test_agents' tests/CMakeLists.txt; then
      echo "sanitize.sh tsan: no test_agents suite in tests/CMakeLists.txt yet; nothing to check (skipped)"
      exit 0
    fi
    flags="-O1 -g -fno-omit-frame-pointer -fsanitize=thread"
    targets=(test_agents)
    [ -n "$regex" ] || regex='^test_agents\.'
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
    ;;
  *)
    echo "usage: scripts/sanitize.sh asan|tsan [CTEST_REGEX]" >&2
    exit 2
    ;;
esac

start=$(date +%s)
if [ ! -f "$dir/build.ninja" ]; then
  # Debug with our own flags: no -DNDEBUG, so assertions are checked too. Benchmarks are left out.
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="${flags#-O1 -g }" -DORCHESTRA_BUILD_BENCH=OFF
fi
cmake --build "$dir" --parallel "$jobs" --target "${targets[@]}"
built=$(date +%s)
echo "sanitize.sh $mode: built in $((built - start)) s"
cd "$dir"
args=(--output-on-failure --parallel "$jobs")
[ -z "$regex" ] || args+=(-R "$regex")
ctest "${args[@]}"
echo "sanitize.sh $mode: tests passed in $(( $(date +%s) - built )) s ($(( $(date +%s) - start )) s in all)"
