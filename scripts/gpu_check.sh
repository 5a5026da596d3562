#!/usr/bin/env bash
# Everything the CUDA and NCCL paths need checked on a machine with a GPU, in one command
# (README "With a GPU"). The machine needs a CUDA PyTorch (python3 -c 'import torch'), CMake,
# ninja and a C++ compiler; the other dependencies come as Debian packages unpacked into PREFIX
# (scripts/gpu_deps.sh fetch here, scripts/gpu_deps.sh unpack there).
#
#   scripts/gpu_check.sh PREFIX [BUILD_DIR]      (BUILD_DIR default build-gpu)
#
# Steps, each PASS or FAIL in the summary at the end (logs in BUILD_DIR/gpu_check/):
#   1. configure against the machine's PyTorch: its TorchConfig.cmake when the CUDA toolkit is
#      there (nvcc), else its folder read directly (-DORCHESTRA_TORCH_ROOT); build everything
#   2. the whole test suite (ctest), which on a GPU also checks the device errors it can reach
#   3. a simulated experiment (MLP and CNN, four policies) with runtime.device: cuda and cpu: final
#      accuracies within ACCURACY_TOLERANCE (0.01) of each other, policy by policy; the cuda run
#      twice gives the same files (wall_clock aside); once more with PyTorch's strict
#      deterministic mode (ORCHESTRA_CUDA_STRICT_DETERMINISM=1), which fails on any op without a
#      deterministic kernel (and a short ResNet run in that mode too)
#   4. orchestra launch: one rank on NCCL, two ranks on Gloo sharing the GPU (device: cuda), two
#      ranks on NCCL when there are two GPUs; each writes every results file
#   5. bench_device: training steps/s on the GPU and the CPU, 4-256 workers, MLP and CNN, and the
#      A3C environment's steps/s (BUILD_DIR/gpu_check/bench_device.md, for BENCHMARKS.md)
# Environment: PYTHON (python3), ACCURACY_TOLERANCE (0.01), TORCH_MODE (auto | config | root).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

if [ $# -lt 1 ]; then
  sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
PREFIX="$(realpath "$1")"
BUILD="${2:-build-gpu}"
PYTHON="${PYTHON:-python3}"
TOLERANCE="${ACCURACY_TOLERANCE:-0.01}"
TORCH_MODE="${TORCH_MODE:-auto}"
LOGS="$BUILD/gpu_check"
mkdir -p "$LOGS"
LOGS="$(realpath "$LOGS")"
ARCH_LIB="$PREFIX/usr/lib/x86_64-linux-gnu"
export LD_LIBRARY_PATH="$ARCH_LIB:$PREFIX/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

declare -a RESULTS=()
FAILED=0
record() {  # record NAME STATUS DETAIL
  RESULTS+=("$2  $1${3:+: $3}")
  [ "$2" = PASS ] || FAILED=1
  echo "== $2  $1${3:+: $3}"
}
# run NAME LOG COMMAND...: runs it with its output in LOG, records PASS or FAIL.
run() {
  local name="$1" log="$2"
  shift 2
  echo "== $name (log: $log)"
  if "$@" > "$log" 2>&1; then record "$name" PASS; else record "$name" FAIL "exit $?, see $log"; tail -20 "$log"; fi
}

# --- 0. what this machine has -----------------------------------------------------------------
"$PYTHON" - > "$LOGS/torch.txt" 2>&1 <<'EOF'
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available(),
      "gpus", torch.cuda.device_count(), "cxx11_abi", torch.compiled_with_cxx11_abi())
print("prefix", torch.utils.cmake_prefix_path)
import os; print("root", os.path.dirname(torch.__file__))
for i in range(torch.cuda.device_count()): print("gpu", i, torch.cuda.get_device_name(i))
EOF
cat "$LOGS/torch.txt"
grep -q "available True" "$LOGS/torch.txt" || { echo "gpu_check: this PyTorch has no usable GPU (see above)"; exit 1; }
if ! grep -q "cxx11_abi True" "$LOGS/torch.txt"; then
  echo "gpu_check: this PyTorch uses the old C++ ABI and cannot link with Debian's libraries; use PyTorch 2.7 or later"
  exit 1
fi
TORCH_PREFIX="$(sed -n 's/^prefix //p' "$LOGS/torch.txt")"
TORCH_ROOT="$(sed -n 's/^root //p' "$LOGS/torch.txt")"
GPUS="$(sed -n 's/.* gpus \([0-9]*\) .*/\1/p' "$LOGS/torch.txt")"
command -v nvidia-smi > /dev/null && nvidia-smi -L | tee -a "$LOGS/torch.txt"
[ -d "$PREFIX/usr/include/yaml-cpp" ] || { echo "gpu_check: $PREFIX has no unpacked packages (scripts/gpu_deps.sh unpack DIR $PREFIX)"; exit 2; }
# Debian 12's libraries need glibc 2.34 and GCC 12's libstdc++ (Ubuntu 22.04 or later has both).
unloadable="$(ldd "$ARCH_LIB/libzmq.so.5" "$ARCH_LIB/libyaml-cpp.so.0.7" 2>&1 | grep 'not found' || true)"
if [ -n "$unloadable" ]; then
  echo "gpu_check: warning: the unpacked libraries do not all load here (they need glibc >= 2.34 and GCC 12's libstdc++):"
  echo "$unloadable"
fi

# The data: tests and configs read /usr/share/datasets/fashion-mnist.
DATA=/usr/share/datasets/fashion-mnist
if [ ! -e "$DATA" ]; then
  mkdir -p /usr/share/datasets 2> /dev/null && ln -s "$PREFIX$DATA" "$DATA" 2> /dev/null ||
    echo "gpu_check: cannot link $DATA to $PREFIX$DATA (not root?): tests that read Fashion-MNIST will be skipped or fail"
fi

# --- 1. configure and build -------------------------------------------------------------------
configure() {  # configure MODE
  local torch_args=()
  if [ "$1" = config ]; then
    torch_args=(-DCMAKE_PREFIX_PATH="$TORCH_PREFIX;$PREFIX/usr")
  else
    torch_args=(-DORCHESTRA_TORCH_ROOT="$TORCH_ROOT" -DCMAKE_PREFIX_PATH="$PREFIX/usr")
  fi
  rm -f "$BUILD/CMakeCache.txt"
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${torch_args[@]}" \
    -Dyaml-cpp_DIR="$ARCH_LIB/cmake/yaml-cpp" \
    -Dnlohmann_json_DIR="$PREFIX/usr/share/cmake/nlohmann_json" \
    -Dcppzmq_DIR="$PREFIX/usr/share/cmake/cppzmq" \
    -DZeroMQ_INCLUDE_DIR="$PREFIX/usr/include" -DZeroMQ_LIBRARY="$ARCH_LIB/libzmq.so" \
    -Ddoctest_DIR="$PREFIX/usr/lib/cmake/doctest" \
    -DZLIB_INCLUDE_DIR="$PREFIX/usr/include" -DZLIB_LIBRARY="$ARCH_LIB/libz.so"
}
mode="$TORCH_MODE"
if [ "$mode" = auto ]; then
  if command -v nvcc > /dev/null || [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then mode=config; else mode=root; fi
fi
if configure "$mode" > "$LOGS/configure.log" 2>&1; then
  record "configure ($mode)" PASS
elif [ "$TORCH_MODE" = auto ] && [ "$mode" = config ]; then
  record "configure (config)" FAIL "see $LOGS/configure.log; trying -DORCHESTRA_TORCH_ROOT"
  mode=root
  if configure root > "$LOGS/configure-root.log" 2>&1; then record "configure (root)" PASS; else record "configure (root)" FAIL "see $LOGS/configure-root.log"; fi
else
  record "configure ($mode)" FAIL "see $LOGS/configure.log"
fi
grep -h "libtorch:" "$LOGS"/configure*.log | tail -1
[ -f "$BUILD/build.ninja" ] || { printf '%s\n' "${RESULTS[@]}"; exit 1; }
run "build" "$LOGS/build.log" cmake --build "$BUILD" --parallel "$(nproc)"
run "build bench_device" "$LOGS/build-bench.log" cmake --build "$BUILD" --target bench_device
ORCHESTRA="$(realpath "$BUILD/orchestra")"
[ -x "$ORCHESTRA" ] || { printf '%s\n' "${RESULTS[@]}"; exit 1; }

# --- 2. the test suite ------------------------------------------------------------------------
run "test suite" "$LOGS/ctest.log" bash -c "cd '$BUILD' && ctest --output-on-failure --parallel $(nproc)"

# --- 3. simulated: cuda against cpu, determinism ------------------------------------------------
SIM="$LOGS/sim"
rm -rf "$SIM"
mkdir -p "$SIM"
sim_config() {  # sim_config MODEL DEVICE > file
  cat <<EOF
name: gpu_check_$1_$2
seed: 5
data: {dataset: fashion-mnist, path: $DATA, train_limit: 30000}
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
runtime: {device: $2, replicas: batched, threads: $(nproc)}
policies:
  - dsgd
  - {name: local-sgd, H: 8}
  - lbb
  - orchestra-lcm
EOF
}
# summary.json's final accuracies of two runs, policy by policy, within the tolerance.
compare_accuracy() {  # compare_accuracy CPU_DIR GPU_DIR
  "$PYTHON" - "$1" "$2" "$TOLERANCE" <<'EOF'
import json, pathlib, sys
cpu, gpu, tol = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), float(sys.argv[3])
worst, rows = 0.0, []
for s in sorted(cpu.glob("*/summary.json")):
    a = json.loads(s.read_text())["final_accuracy"]
    b = json.loads((gpu / s.parent.name / "summary.json").read_text())["final_accuracy"]
    worst = max(worst, abs(a - b))
    rows.append(f"  {s.parent.name}: cpu {a:.4f}  cuda {b:.4f}  |diff| {abs(a - b):.4f}")
print("\n".join(rows))
print(f"  largest difference {worst:.4f} (tolerance {tol})")
sys.exit(0 if rows and worst <= tol else 1)
EOF
}
# Two runs' folders hold the same files with the same bytes, summary.json's wall_clock aside.
same_files() {  # same_files DIR_A DIR_B
  "$PYTHON" - "$1" "$2" <<'EOF'
import json, pathlib, sys
a, b = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
names = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
if names != sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()): sys.exit("different files")
for n in names:
    x, y = (a / n).read_bytes(), (b / n).read_bytes()
    if n.name == "summary.json":
        x, y = [json.loads(t) for t in (x, y)]
        for d in (x, y): d.pop("wall_clock", None)
    if x != y: sys.exit(f"{n} differs")
print(f"{len(names)} files identical")
EOF
}
for model in mlp cnn; do
  for device in cpu cuda; do sim_config "$model" "$device" > "$SIM/$model-$device.yaml"; done
  run "simulated $model, cpu" "$SIM/$model-cpu.log" "$ORCHESTRA" run "$SIM/$model-cpu.yaml" --out "$SIM/$model-cpu" --quiet
  run "simulated $model, cuda" "$SIM/$model-cuda.log" "$ORCHESTRA" run "$SIM/$model-cuda.yaml" --out "$SIM/$model-cuda" --quiet
  run "simulated $model: cuda accuracy = cpu accuracy +- $TOLERANCE" "$SIM/$model-compare.log" compare_accuracy "$SIM/$model-cpu" "$SIM/$model-cuda"
  cat "$SIM/$model-compare.log"
  run "simulated $model, cuda again" "$SIM/$model-cuda2.log" "$ORCHESTRA" run "$SIM/$model-cuda.yaml" --out "$SIM/$model-cuda2" --quiet
  run "simulated $model: cuda twice, same files" "$SIM/$model-same.log" same_files "$SIM/$model-cuda" "$SIM/$model-cuda2"
  run "simulated $model, cuda, strict deterministic mode" "$SIM/$model-strict.log" \
    env ORCHESTRA_CUDA_STRICT_DETERMINISM=1 "$ORCHESTRA" run "$SIM/$model-cuda.yaml" --out "$SIM/$model-strict" --quiet
done

# The ResNet (batch norm, sequential replicas) once, in strict mode only: its ops have deterministic kernels.
sim_config resnet cuda | sed 's/train_limit: 30000/train_limit: 8192/; s/epochs: 3/epochs: 1/' > "$SIM/resnet-cuda.yaml"
run "simulated resnet, cuda, strict deterministic mode" "$SIM/resnet-strict.log" \
  env ORCHESTRA_CUDA_STRICT_DETERMINISM=1 "$ORCHESTRA" run "$SIM/resnet-cuda.yaml" --out "$SIM/resnet-strict" --quiet

# --- 4. real runs -----------------------------------------------------------------------------
REAL="$LOGS/real"
rm -rf "$REAL"
mkdir -p "$REAL"
real_config() {  # real_config WORKERS > file
  echo "name: gpu_check_real"
  echo "seed: 7"
  echo "data: {dataset: fashion-mnist, path: $DATA, train_limit: 8192, test_limit: 2000}"
  echo "model: {arch: mlp, hidden: [256, 128]}"
  echo "training: {global_batch: 256, epochs: 2, target_accuracy: 0.8}"
  echo "cluster:"
  echo "  mode: real"
  echo "  workers:"
  for i in $(seq 0 $(($1 - 1))); do echo "    - {name: rank$i, max_batch: 512}"; done
  echo "runtime: {device: cuda}"
  echo "policies: [dsgd, {name: local-sgd, H: 4}, lbb]"
}
results_complete() {  # results_complete DIR: every policy folder holds every results file
  local dir="$1" ok=0
  for policy in dsgd local-sgd lbb; do
    for f in rounds.csv iterations.csv epochs.csv evals.csv summary.json config.json; do
      [ -s "$dir/$policy/$f" ] || { echo "missing $dir/$policy/$f"; ok=1; }
    done
  done
  [ -s "$dir/comparison.md" ] || { echo "missing $dir/comparison.md"; ok=1; }
  [ "$ok" -eq 0 ] && cat "$dir/comparison.md"
  return "$ok"
}
launch() {  # launch NAME NPROC BACKEND
  real_config "$2" > "$REAL/$1.yaml"
  run "launch $1" "$REAL/$1.log" "$ORCHESTRA" launch --nproc "$2" --backend "$3" "$REAL/$1.yaml" --out "$REAL/$1" --timeout 120 --quiet
  run "launch $1: results files" "$REAL/$1-files.log" results_complete "$REAL/$1"
}
launch nccl-1-rank 1 nccl
launch gloo-2-ranks-cuda 2 gloo
if [ "${GPUS:-1}" -ge 2 ]; then launch nccl-2-ranks 2 nccl; else echo "== one GPU: no two-rank NCCL launch"; fi

# --- 5. the benchmark -------------------------------------------------------------------------
run "bench_device" "$LOGS/bench_device.md" "$BUILD/bench/bench_device"
cat "$LOGS/bench_device.md"

echo
echo "gpu_check summary ($(sed -n 1p "$LOGS/torch.txt"); libtorch via $mode):"
printf '  %s\n' "${RESULTS[@]}"
exit $FAILED
