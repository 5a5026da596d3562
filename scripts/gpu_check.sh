#!/usr/bin/env bash
# Everything the CUDA, NCCL and Gloo paths need checked on a machine with a GPU, in one command of
# at most 9 minutes (README "With a GPU"). The machine needs a CUDA PyTorch (python3 -c 'import
# torch'), CMake, ninja and a C++ compiler; the other dependencies come as Debian packages unpacked
# into PREFIX (scripts/gpu_deps.sh fetch here, scripts/gpu_deps.sh unpack there).
#
#   scripts/gpu_check.sh PREFIX [BUILD_DIR]                 on the GPU machine (BUILD_DIR: build-gpu)
#   scripts/gpu_check.sh --cpu-dry-run [PREFIX] [BUILD_DIR] anywhere: every step that runs without a
#                                                           GPU, against the default libtorch (and
#                                                           PREFIX's packages if given); the GPU
#                                                           steps are reported SKIP (BUILD_DIR:
#                                                           build-gpu-dry)
#
# Steps, in order of value, each with its own time limit inside one budget (BUDGET_S, 540 s), each
# PASS, FAIL or SKIP with the reason; logs in BUILD_DIR/gpu_check/, written as each step runs:
#   configure   against the machine's PyTorch: its TorchConfig.cmake when nvcc is there, else its
#               folder read directly (-DORCHESTRA_TORCH_ROOT); Gloo headers from PREFIX if the
#               PyTorch has none (checked by configure, cmake/GlooHeaders.cmake)
#   build       every target and bench_device
#   cuda-suite  the tests that run on the GPU or check what it needs: device placement, TF32 and
#               determinism settings, GPU replicas against the CPU's (runtime.tf32 off and on), every
#               real-run test (ranks on CUDA over Gloo and NCCL), vectorized environments, the
#               link-order and Gloo-header checks, the Python policy test
#   accuracy    a simulated experiment (MLP and CNN, four policies) on cuda and on cpu: final
#               accuracies within ACCURACY_TOLERANCE (0.01), policy by policy
#   determinism the cuda runs again: the same files (wall_clock aside), and once more in PyTorch's
#               strict deterministic mode (ORCHESTRA_CUDA_STRICT_DETERMINISM=1), the ResNet too
#   nccl-launch orchestra launch --nproc 1 --backend nccl (device: cuda): every results file
#   gloo-launch orchestra launch --nproc 2 --backend gloo, device: cuda (two ranks on one GPU,
#               collectives staged through host memory): every results file
#   bench       bench_device: MLP and CNN GPU/CPU steps/s at 4-256 workers, and the RL environment
#               on the GPU against the CPU (bench_device.md, for BENCHMARKS.md)
#   suite       the rest of the test suite
# The summary ends the output; BUILD_DIR/gpu_check/summary.json has it for scripts. Exit 0 when no
# step failed.
# Environment: PYTHON (python3), ACCURACY_TOLERANCE (0.01), TORCH_MODE (auto | config | root),
# BUDGET_S (540), STEPS (a comma list of the steps above to run; default all), JOBS (nproc),
# LIMIT_SCALE (1: each step's own limit is multiplied by it, for a slower machine).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

usage() {
  sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

DRY=0
if [ "${1:-}" = --cpu-dry-run ]; then
  DRY=1
  shift
  PREFIX=""
  if [ $# -ge 1 ] && [ -d "$1" ] && [ -d "$1/usr" ]; then PREFIX="$(realpath "$1")"; shift; fi
  BUILD="${1:-build-gpu-dry}"
else
  [ $# -ge 1 ] || usage
  [ -d "$1" ] || { echo "gpu_check: $1: no such folder (scripts/gpu_deps.sh unpack DIR PREFIX makes it)"; exit 2; }
  PREFIX="$(realpath "$1")"
  BUILD="${2:-build-gpu}"
fi
PYTHON="${PYTHON:-python3}"
TOLERANCE="${ACCURACY_TOLERANCE:-0.01}"
TORCH_MODE="${TORCH_MODE:-auto}"
BUDGET_S="${BUDGET_S:-540}"
STEPS="${STEPS:-configure,build,cuda-suite,accuracy,determinism,nccl-launch,gloo-launch,bench,suite}"
JOBS="${JOBS:-$(nproc)}"
LIMIT_SCALE="${LIMIT_SCALE:-1}"
LOGS="$BUILD/gpu_check"
mkdir -p "$LOGS"
LOGS="$(realpath "$LOGS")"
START=$SECONDS
ARCH_LIB=""
if [ -n "$PREFIX" ]; then
  ARCH_LIB="$PREFIX/usr/lib/x86_64-linux-gnu"
  export LD_LIBRARY_PATH="$ARCH_LIB:$PREFIX/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# --- the summary: one line per step, and summary.json ------------------------------------------
declare -a NAMES=() STATUSES=() DETAILS=() TIMES=()
FAILED=0
record() {  # record NAME STATUS SECONDS DETAIL
  NAMES+=("$1"); STATUSES+=("$2"); TIMES+=("$3"); DETAILS+=("$4")
  [ "$2" = FAIL ] && FAILED=1
  printf '== %-4s %-12s %4ss  %s\n' "$2" "$1" "$3" "$4" | tee -a "$LOGS/progress.log"
}
write_summary() {
  {
    printf '{\n  "dry_run": %s,\n  "machine": "%s",\n  "seconds": %d,\n  "steps": [\n' \
      "$([ $DRY = 1 ] && echo true || echo false)" "$(head -1 "$LOGS/torch.txt" 2> /dev/null | sed 's/"/\\"/g')" $((SECONDS - START))
    local i n=${#NAMES[@]}
    for ((i = 0; i < n; i++)); do
      printf '    {"step": "%s", "status": "%s", "seconds": %s, "detail": "%s"}%s\n' "${NAMES[$i]}" "${STATUSES[$i]}" \
        "${TIMES[$i]}" "$(printf '%s' "${DETAILS[$i]}" | sed 's/\\/\\\\/g; s/"/\\"/g')" "$([ $((i + 1)) -lt $n ] && echo ,)"
    done
    printf '  ]\n}\n'
  } > "$LOGS/summary.json.tmp" && mv "$LOGS/summary.json.tmp" "$LOGS/summary.json"
}
finish() {
  write_summary
  echo
  echo "gpu_check summary ($(head -1 "$LOGS/torch.txt" 2> /dev/null); $((SECONDS - START)) s; logs in $LOGS):"
  local i
  for ((i = 0; i < ${#NAMES[@]}; i++)); do printf '  %-4s %-12s %4ss  %s\n' "${STATUSES[$i]}" "${NAMES[$i]}" "${TIMES[$i]}" "${DETAILS[$i]}"; done
  echo "  (machine-readable: $LOGS/summary.json)"
  exit $FAILED
}
wanted() { [[ ",$STEPS," == *",$1,"* ]]; }
# step NAME LIMIT_S FUNCTION: runs FUNCTION under min(LIMIT_S, what is left of the budget), its
# output in LOGS/NAME.log. FUNCTION prints its one-line result last; exit 0 PASS, 77 SKIP, else FAIL.
step() {
  local name="$1" limit="$2" fn="$3"
  if ! wanted "$name"; then return 0; fi
  limit=$((limit * LIMIT_SCALE))
  local left=$((BUDGET_S - (SECONDS - START)))
  if [ "$left" -lt 15 ]; then record "$name" SKIP 0 "out of time (budget ${BUDGET_S} s; rerun with STEPS=$name)"; return 0; fi
  [ "$limit" -gt "$left" ] && limit=$left
  local log="$LOGS/$name.log" t0=$SECONDS status
  echo "== $name (at most ${limit} s; log: $log)"
  STEP_LIMIT=$limit "$fn" > "$log" 2>&1 &
  local pid=$!
  # The step's own limit: its whole process group ends when time is up.
  ( sleep "$limit" && kill -TERM -- -"$pid" 2> /dev/null && sleep 5 && kill -KILL -- -"$pid" 2> /dev/null ) &
  local watchdog=$!
  wait "$pid"
  status=$?
  kill -- -"$watchdog" 2> /dev/null
  wait "$watchdog" 2> /dev/null
  local took=$((SECONDS - t0)) last
  last="$(grep -v '^\s*$' "$log" | tail -1 | cut -c1-300)"
  if [ "$took" -ge "$limit" ] && [ "$status" -ne 0 ]; then
    record "$name" FAIL "$took" "timed out after ${limit} s (log: $log)"
  elif [ "$status" -eq 0 ]; then
    record "$name" PASS "$took" "$last"
  elif [ "$status" -eq 77 ]; then
    record "$name" SKIP "$took" "$last"
  else
    record "$name" FAIL "$took" "exit $status: $last (log: $log)"
    tail -15 "$log" | sed 's/^/   | /'
  fi
}
set -m  # each background step in its own process group, so that its limit ends all it started

# --- what this machine has ----------------------------------------------------------------------
"$PYTHON" - > "$LOGS/torch.txt" 2>&1 <<'EOF'
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available(),
      "gpus", torch.cuda.device_count(), "cxx11_abi", torch.compiled_with_cxx11_abi())
print("prefix", torch.utils.cmake_prefix_path)
import os; print("root", os.path.dirname(torch.__file__))
for i in range(torch.cuda.device_count()): print("gpu", i, torch.cuda.get_device_name(i))
EOF
if ! grep -q "^torch " "$LOGS/torch.txt"; then
  echo "gpu_check: $PYTHON cannot import torch: $(tail -1 "$LOGS/torch.txt")"
  printf 'no PyTorch in %s\n' "$PYTHON" > "$LOGS/torch.txt"
fi
cat "$LOGS/torch.txt"
GPU=0
grep -q "available True" "$LOGS/torch.txt" && GPU=1
if [ $DRY = 0 ]; then
  if [ $GPU = 0 ]; then echo "gpu_check: this PyTorch has no usable GPU (see above; scripts/gpu_check.sh --cpu-dry-run runs the rest)"; exit 1; fi
  if ! grep -q "cxx11_abi True" "$LOGS/torch.txt"; then
    echo "gpu_check: this PyTorch uses the old C++ ABI and cannot link with Debian's libraries; use PyTorch 2.7 or later"
    exit 1
  fi
  [ -d "$PREFIX/usr/include/yaml-cpp" ] || { echo "gpu_check: $PREFIX has no unpacked packages (scripts/gpu_deps.sh unpack DIR $PREFIX)"; exit 2; }
  # Debian 12's libraries need glibc 2.34 and GCC 12's libstdc++ (Ubuntu 22.04 or later has both).
  unloadable="$(ldd "$ARCH_LIB/libzmq.so.5" "$ARCH_LIB/libyaml-cpp.so.0.7" 2>&1 | grep 'not found' || true)"
  [ -z "$unloadable" ] || echo "gpu_check: warning: the unpacked libraries do not all load here (they need glibc >= 2.34 and GCC 12's libstdc++): $unloadable"
  command -v nvidia-smi > /dev/null && nvidia-smi -L | tee -a "$LOGS/torch.txt"
else
  echo "gpu_check: CPU dry run: the steps that need a GPU are reported SKIP"
fi
TORCH_PREFIX="$(sed -n 's/^prefix //p' "$LOGS/torch.txt")"
TORCH_ROOT="$(sed -n 's/^root //p' "$LOGS/torch.txt")"
GPUS="$(sed -n 's/.* gpus \([0-9]*\) .*/\1/p' "$LOGS/torch.txt")"
# The Python tests' interpreter: this one if it has torch, else configure looks for one itself.
PYTHON_PATH=""
"$PYTHON" -c "import torch" > /dev/null 2>&1 && PYTHON_PATH="$(command -v "$PYTHON")"
# pybind11 for the Python module: a pip one (its CMake files inside the package) where configure
# would find none (a GPU machine's PyTorch image has pip's, not Debian's pybind11-dev).
PYBIND11_DIR="$("$PYTHON" -m pybind11 --cmakedir 2> /dev/null || true)"

# The data: Debian's package where it is installed, else the copy unpacked into PREFIX; passed to
# the tests (ORCHESTRA_TEST_FASHION_MNIST) and to every run below, so nothing needs root.
DATA=/usr/share/datasets/fashion-mnist
if [ ! -e "$DATA/train-images-idx3-ubyte.gz" ] && [ -n "$PREFIX" ] && [ -e "$PREFIX$DATA" ]; then DATA="$PREFIX$DATA"; fi
echo "data: $DATA"
ORCHESTRA="$(realpath -m "$BUILD/orchestra")"
no_gpu() { echo "no GPU: ${1:-a CPU dry run}"; exit 77; }

# --- configure and build --------------------------------------------------------------------------
do_configure() {
  local mode="$TORCH_MODE" deps=() torch_args=()
  if [ -n "$PREFIX" ]; then
    deps=(-Dyaml-cpp_DIR="$ARCH_LIB/cmake/yaml-cpp" -Dnlohmann_json_DIR="$PREFIX/usr/share/cmake/nlohmann_json"
          -Dcppzmq_DIR="$PREFIX/usr/share/cmake/cppzmq" -DZeroMQ_INCLUDE_DIR="$PREFIX/usr/include" -DZeroMQ_LIBRARY="$ARCH_LIB/libzmq.so"
          -Ddoctest_DIR="$PREFIX/usr/lib/cmake/doctest" -DZLIB_INCLUDE_DIR="$PREFIX/usr/include" -DZLIB_LIBRARY="$ARCH_LIB/libz.so")
  fi
  if [ $DRY = 1 ]; then
    mode=default  # the default libtorch (Debian's here)
    # Gloo's headers from the prefix, as a pip PyTorch without its own would use them: configure
    # then checks them against this libtorch (cmake/GlooHeaders.cmake), as it does on the GPU machine.
    [ -n "$PREFIX" ] && [ -d "$PREFIX/usr/include/gloo" ] && deps+=(-DORCHESTRA_GLOO_INCLUDE_DIR="$PREFIX/usr/include")
  elif [ "$mode" = auto ]; then
    if command -v nvcc > /dev/null || [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then mode=config; else mode=root; fi
  fi
  case "$mode" in
    config) torch_args=(-DCMAKE_PREFIX_PATH="$TORCH_PREFIX${PREFIX:+;$PREFIX/usr}") ;;
    root) torch_args=(-DORCHESTRA_TORCH_ROOT="$TORCH_ROOT" ${PREFIX:+-DCMAKE_PREFIX_PATH="$PREFIX/usr"}) ;;
    default) torch_args=(${PREFIX:+-DCMAKE_PREFIX_PATH="$PREFIX/usr"}) ;;
  esac
  local launcher=()
  command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  echo "libtorch via: $mode"
  rm -f "$BUILD/CMakeCache.txt"
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "${torch_args[@]}" "${deps[@]}" \
    -DORCHESTRA_TEST_FASHION_MNIST="$DATA" ${PYTHON_PATH:+-DORCHESTRA_PYTHON="$PYTHON_PATH"} ${PYBIND11_DIR:+-Dpybind11_DIR="$PYBIND11_DIR"} || {
    if [ "$TORCH_MODE" = auto ] && [ "$mode" = config ]; then
      echo "configure through TorchConfig.cmake failed; trying -DORCHESTRA_TORCH_ROOT"
      rm -f "$BUILD/CMakeCache.txt"
      cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" -DORCHESTRA_TORCH_ROOT="$TORCH_ROOT" \
        ${PREFIX:+-DCMAKE_PREFIX_PATH="$PREFIX/usr"} "${deps[@]}" -DORCHESTRA_TEST_FASHION_MNIST="$DATA" \
        ${PYTHON_PATH:+-DORCHESTRA_PYTHON="$PYTHON_PATH"} ${PYBIND11_DIR:+-Dpybind11_DIR="$PYBIND11_DIR"} || return 1
    else
      return 1
    fi
  }
  echo "$(grep -o 'libtorch: .*' "$LOGS/configure.log" | tail -1)"
}
do_build() {
  cmake --build "$BUILD" --parallel "$JOBS" || return 1
  cmake --build "$BUILD" --parallel "$JOBS" --target bench_device || return 1
  echo "built every target and bench_device with $JOBS jobs"
}

# --- the tests ----------------------------------------------------------------------------------
# The tests that exercise the GPU, the c10d backends (all of test_env_real), TF32, vectorized
# environments and the build's portability checks.
CUDA_SUITE='cuda|GPU|nccl|NCCL|Gloo|gloo|device|tf32|test_env_real|vectorized|together|link_order|gloo_headers|python\.'
run_ctest() {  # run_ctest ARGS...: ctest in BUILD; ends with the counts, the skips' reasons above them
  (cd "$BUILD" && ctest --output-on-failure --parallel "$JOBS" --timeout "$STEP_LIMIT" "$@") | tee "$LOGS/ctest-output.txt"
  local status=${PIPESTATUS[0]}
  echo "-- skipped tests, by reason (each prints it: orchestra-test-skipped):"
  grep -h "orchestra-test-skipped: " "$BUILD/Testing/Temporary/LastTest.log" 2> /dev/null | sed 's/.*orchestra-test-skipped: //' | sort | uniq -c
  local total failed skipped
  # ctest ends with "N% tests passed, F tests failed out of T", or "100% tests passed out of T".
  total="$(grep -oE 'tests (failed|passed) out of [0-9]+' "$LOGS/ctest-output.txt" | grep -oE '[0-9]+$' | tail -1)"
  failed="$(grep -oE '[0-9]+ tests failed out of' "$LOGS/ctest-output.txt" | grep -oE '^[0-9]+' | tail -1)"
  grep -qE '100% tests passed out of' "$LOGS/ctest-output.txt" && failed=0
  skipped="$(grep -c '\*\*\*Skipped' "$LOGS/ctest-output.txt")"
  echo "${total:-?} tests: $((${total:-0} - ${failed:-0} - skipped)) passed, ${failed:-?} failed, $skipped skipped (reasons above)"
  return "$status"
}
do_cuda_suite() { run_ctest -R "$CUDA_SUITE"; }
do_suite() { run_ctest -E "$CUDA_SUITE"; }

# --- simulated: cuda against cpu, determinism -----------------------------------------------------
SIM="$LOGS/sim"
sim_config() {  # sim_config MODEL DEVICE > file
  cat << EOF
name: gpu_check_$1_$2
seed: 5
data: {dataset: fashion-mnist, path: $DATA, train_limit: 20000, test_limit: 5000}
model: {arch: $1, hidden: [256, 128]}
training: {global_batch: 512, lr: 0.05, momentum: 0.9, weight_decay: 0.0005, epochs: 3, target_accuracy: 0.85}
cluster:
  servers:
    - name: s1
      workers:
        - {name: fast, count: 4, time_model: {coefficients: [12, 0.25]}, max_batch: 512, noise: 0.03}
    - name: s2
      workers:
        - {name: slow, count: 4, time_model: {coefficients: [20, 0.525]}, max_batch: 512, noise: 0.03}
network: {bandwidth_gbps: 10, intra_bandwidth_gbps: 96}
runtime: {device: $2, replicas: batched, threads: $JOBS}
policies:
  - dsgd
  - {name: local-sgd, H: 8}
  - lbb
  - orchestra-lcm
EOF
}
# summary.json's final accuracies of two runs, policy by policy, within the tolerance.
compare_accuracy() {  # compare_accuracy CPU_DIR GPU_DIR MODEL
  "$PYTHON" - "$1" "$2" "$TOLERANCE" "$3" << 'EOF'
import json, pathlib, sys
cpu, gpu, tol, model = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
worst, rows = 0.0, []
for s in sorted(cpu.glob("*/summary.json")):
    a = json.loads(s.read_text())["final_accuracy"]
    b = json.loads((gpu / s.parent.name / "summary.json").read_text())["final_accuracy"]
    worst = max(worst, abs(a - b))
    rows.append(f"  {model} {s.parent.name}: cpu {a:.4f}  cuda {b:.4f}  |diff| {abs(a - b):.4f}")
print("\n".join(rows))
print(f"{model}: largest |cuda - cpu| final accuracy {worst:.4f} over {len(rows)} policies (tolerance {tol})")
sys.exit(0 if rows and worst <= tol else 1)
EOF
}
# Two runs' folders hold the same files with the same bytes, summary.json's wall_clock aside.
same_files() {  # same_files DIR_A DIR_B
  "$PYTHON" - "$1" "$2" << 'EOF'
import json, pathlib, sys
a, b = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
names = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
if names != sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()): sys.exit(f"{a} and {b}: different files")
for n in names:
    x, y = (a / n).read_bytes(), (b / n).read_bytes()
    if n.name == "summary.json":
        x, y = [json.loads(t) for t in (x, y)]
        for d in (x, y): d.pop("wall_clock", None)
    if x != y: sys.exit(f"{n} differs between {a} and {b}")
print(f"{a.name} = {b.name}: {len(names)} files identical")
EOF
}
do_accuracy() {
  [ $GPU = 1 ] && [ $DRY = 0 ] || no_gpu
  rm -rf "$SIM"
  mkdir -p "$SIM"
  local model device verdicts=()
  for model in mlp cnn; do
    for device in cpu cuda; do
      sim_config "$model" "$device" > "$SIM/$model-$device.yaml"
      echo "-- $model on $device"
      "$ORCHESTRA" run "$SIM/$model-$device.yaml" --out "$SIM/$model-$device" --quiet || return 1
    done
    compare_accuracy "$SIM/$model-cpu" "$SIM/$model-cuda" "$model" | tee "$SIM/$model-compare.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || return 1
    verdicts+=("$(tail -1 "$SIM/$model-compare.txt" | sed 's/ over .*//');")
  done
  echo "${verdicts[*]} (tolerance $TOLERANCE)"
}
do_determinism() {
  [ $GPU = 1 ] && [ $DRY = 0 ] || no_gpu
  local model
  for model in mlp cnn; do
    [ -d "$SIM/$model-cuda" ] || { sim_config "$model" cuda > "$SIM/$model-cuda.yaml"; "$ORCHESTRA" run "$SIM/$model-cuda.yaml" --out "$SIM/$model-cuda" --quiet || return 1; }
    "$ORCHESTRA" run "$SIM/$model-cuda.yaml" --out "$SIM/$model-cuda2" --quiet || return 1
    same_files "$SIM/$model-cuda" "$SIM/$model-cuda2" || return 1
    echo "-- $model, strict deterministic mode"
    # Strict mode fails on any op without a deterministic kernel; it may pick other kernels than the
    # default, so its files are not compared with the run above.
    ORCHESTRA_CUDA_STRICT_DETERMINISM=1 "$ORCHESTRA" run "$SIM/$model-cuda.yaml" --out "$SIM/$model-strict" --quiet || return 1
  done
  # The ResNet (batch norm, sequential replicas) once, in strict mode: its ops have deterministic kernels.
  sim_config resnet cuda | sed 's/train_limit: 20000/train_limit: 4096/; s/epochs: 3/epochs: 1/' > "$SIM/resnet-cuda.yaml"
  ORCHESTRA_CUDA_STRICT_DETERMINISM=1 "$ORCHESTRA" run "$SIM/resnet-cuda.yaml" --out "$SIM/resnet-strict" --quiet || return 1
  echo "mlp and cnn on cuda: twice the same files; mlp, cnn and resnet ran in strict deterministic mode"
}

# --- real runs ----------------------------------------------------------------------------------
REAL="$LOGS/real"
real_config() {  # real_config WORKERS DEVICE > file
  echo "name: gpu_check_real"
  echo "seed: 7"
  echo "data: {dataset: fashion-mnist, path: $DATA, train_limit: 8192, test_limit: 2000}"
  echo "model: {arch: mlp, hidden: [256, 128]}"
  echo "training: {global_batch: 256, epochs: 2, target_accuracy: 0.8}"
  echo "cluster:"
  echo "  mode: real"
  echo "  workers:"
  for i in $(seq 0 $(($1 - 1))); do echo "    - {name: rank$i, max_batch: 512}"; done
  echo "runtime: {device: $2}"
  echo "policies: [dsgd, {name: local-sgd, H: 4}, lbb]"
}
results_complete() {  # results_complete DIR: every policy folder holds every results file
  local dir="$1" ok=0 policy f
  for policy in dsgd local-sgd lbb; do
    for f in rounds.csv iterations.csv epochs.csv evals.csv summary.json config.json; do
      [ -s "$dir/$policy/$f" ] || { echo "missing $dir/$policy/$f"; ok=1; }
    done
  done
  [ -s "$dir/comparison.md" ] || { echo "missing $dir/comparison.md"; ok=1; }
  [ "$ok" -eq 0 ] && cat "$dir/comparison.md"
  return "$ok"
}
launch() {  # launch NAME NPROC BACKEND DEVICE
  mkdir -p "$REAL"
  rm -rf "${REAL:?}/$1"
  real_config "$2" "$4" > "$REAL/$1.yaml"
  "$ORCHESTRA" launch --nproc "$2" --backend "$3" "$REAL/$1.yaml" --out "$REAL/$1" --timeout 60 --quiet || return 1
  results_complete "$REAL/$1" || return 1
  echo "$2 rank(s) on $3, device $4: every results file of dsgd, local-sgd and lbb, and comparison.md"
}
do_nccl_launch() {
  [ $GPU = 1 ] && [ $DRY = 0 ] || no_gpu
  launch nccl-1-rank 1 nccl cuda || return 1
  if [ "${GPUS:-1}" -ge 2 ]; then launch nccl-2-ranks 2 nccl cuda || return 1; fi
}
do_gloo_launch() {
  if [ $GPU = 1 ] && [ $DRY = 0 ]; then launch gloo-2-ranks-cuda 2 gloo cuda; else launch gloo-2-ranks-cpu 2 gloo cpu; fi
}

# --- the benchmark --------------------------------------------------------------------------------
do_bench() {
  local args=(--data "$DATA")
  [ $DRY = 1 ] && args+=(--seconds 0.3 --workers 4,16)
  "$BUILD/bench/bench_device" "${args[@]}" | tee "$LOGS/bench_device.md" || return 1
  echo "bench_device: $(grep -c '^| [0-9]' "$LOGS/bench_device.md") rows in $LOGS/bench_device.md$(grep -o 'goal.*' "$LOGS/bench_device.md" | tr '\n' ' ' | sed 's/^/; /')"
}

step configure 180 do_configure
if wanted build || wanted configure; then [ -f "$BUILD/build.ninja" ] || { record build SKIP 0 "not configured"; finish; }; fi
step build 300 do_build
[ -x "$ORCHESTRA" ] || { record tests SKIP 0 "no $ORCHESTRA: the build failed or was not run"; finish; }
step cuda-suite 200 do_cuda_suite
step accuracy 150 do_accuracy
step determinism 100 do_determinism
step nccl-launch 60 do_nccl_launch
step gloo-launch 60 do_gloo_launch
step bench 150 do_bench
step suite 300 do_suite
finish
