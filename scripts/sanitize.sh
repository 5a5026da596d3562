#!/usr/bin/env bash
# Sanitizer builds of the test suites, each in its own folder, then ctest on them:
#   scripts/sanitize.sh asan [SUITE...]  AddressSanitizer + UndefinedBehaviorSanitizer, every test
#                                        suite (or the suites named: test_lbb test_orchestra ...)
#                                        but the checks of the papers' results, into build-asan/
#   scripts/sanitize.sh tsan [SUITE...]  ThreadSanitizer, the suites whose threads are ours
#                                        (default test_agents: the ZeroMQ transport and the
#                                        parameter server as threads of one process), into
#                                        build-tsan/; a suite that does not exist yet is skipped
#                                        with a message
# Suppressions live in sanitizers/, each with the reason it is there.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
shift || true
suites=("$@")
jobs="${JOBS:-2}"  # CI machines have 2 cores
supp="$PWD/sanitizers"

case "$mode" in
  asan)
    dir=build-asan
    # -O1: ASan's documented trade (still fast, readable stacks). -g1: line tables and function
    # names, all a stack trace reads, without the libtorch headers' full debug information (the
    # build 943 s instead of 1122 s on 2 cores, BENCHMARKS "Build time"). -fno-sanitize-recover:
    # undefined behaviour fails its test instead of printing and going on.
    flags="-O1 -g1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
    # allocator_may_return_null=1: a failed allocation returns null, as glibc's malloc does, instead
    # of aborting. c10 turns the null into the exception LBB's profiler relies on (Alg. 1 lines 10-12);
    # test_e2e (the LBB testbed) asks for an 8 PB batch on purpose to check it.
    export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:allocator_may_return_null=1"
    export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
    # The checks of the papers' results (Orchestra's clusters A-C, LBB's testbed accuracy) train
    # several seeds on real data: 337 of ASan's 1123 test-seconds, through code the other tests
    # already run. They run in the main build (scripts/test.sh); here they are left out, and so is
    # the quickstart's story (51-67 s under ASan: three policies' full runs, whose code the runner's
    # other tests run with shorter configs; its wording is checked in the main build).
    exclude='^(test_e2e\.(cluster [ABC]:|LBB testbed accuracy)|test_runner\.the quickstart tells its story)'
    ;;
  tsan)
    dir=build-tsan
    # -g1 as for ASan: a race's two stacks need function names and lines, not the libtorch headers'
    # full debug information the agents library would otherwise carry (BENCHMARKS "Build time").
    flags="-O1 -g1 -fno-omit-frame-pointer -fsanitize=thread"
    [ "${#suites[@]}" -gt 0 ] || suites=(test_agents)
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
    ;;
  *)
    echo "usage: scripts/sanitize.sh asan|tsan [SUITE...]" >&2
    exit 2
    ;;
esac

# Suites named but not (yet) in tests/CMakeLists.txt are skipped, so CI does not depend on when
# another part of the toolkit lands.
present=()
for s in "${suites[@]}"; do
  if grep -qE "orchestra_(test|torch)_suite\($s( |$)" tests/CMakeLists.txt; then present+=("$s"); else echo "sanitize.sh $mode: no suite $s yet (skipped)"; fi
done
if [ "${#suites[@]}" -gt 0 ] && [ "${#present[@]}" -eq 0 ]; then
  echo "sanitize.sh $mode: nothing to check"
  exit 0
fi
targets=(all)
regex=""
if [ "${#present[@]}" -gt 0 ]; then
  targets=("${present[@]}")
  regex="^($(IFS='|'; echo "${present[*]}"))\\."
fi

start=$(date +%s)
if [ ! -f "$dir/build.ninja" ]; then
  # Debug with our own flags: no -DNDEBUG, so assertions are checked too. Benchmarks are left out,
  # and so is the Python module (an uninstrumented interpreter cannot load an instrumented one; its
  # tests then skip, saying so).
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="${flags#-O1 -g* }" -DORCHESTRA_BUILD_BENCH=OFF -DORCHESTRA_BUILD_PYTHON=OFF
fi
cmake --build "$dir" --parallel "$jobs" --target "${targets[@]}"
built=$(date +%s)
echo "sanitize.sh $mode: built in $((built - start)) s"
cd "$dir"
args=(--output-on-failure --parallel "$jobs")
[ -z "$regex" ] || args+=(-R "$regex")
[ -z "${exclude:-}" ] || args+=(-E "$exclude")
ctest "${args[@]}"
echo "sanitize.sh $mode: tests passed in $(( $(date +%s) - built )) s ($(( $(date +%s) - start )) s in all)"
