#!/usr/bin/env python3
"""A Python step's overhead against a C++ step (issue 43), for BENCHMARKS.md.

The same episodes (training config, seeds, actions cycling through +1, 0, -1, 0) run through the
C++ environment in C++ (build/bench_env_step: only step() timed) and through orchestra.BarrierEnv
in Python (only env.step(...) timed, so the numpy observation, the info dict, the GIL release and
pybind11's call are what is added). The two alternate, REPEAT times each; the medians are
printed, per step and as a ratio, for the toy environment (microseconds of work per step: the
overhead on its own) and for the real local-SGD environment of configs/python_env.yaml.

usage (from the repository root, after `cmake --build build --target bench_env_step orchestra_python`):
  PYTHONPATH=build/python python3 bench/python/bench_env_step.py [REPEAT]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import orchestra

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BENCH = os.path.join(ROOT, "build", "bench", "bench_env_step")
ACTIONS = [2, 1, 0, 1]  # moves +1, 0, -1, 0


def python_run(config, episodes, seed):
    env = orchestra.BarrierEnv(config)
    step_s, steps = 0.0, 0
    for e in range(episodes):
        env.reset(seed=seed + e)
        k = 0
        while True:
            start = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(ACTIONS[k % 4])
            step_s += time.perf_counter() - start
            k += 1
            steps += 1
            if terminated or truncated:
                break
    return {"steps": steps, "step_s": step_s}


def cpp_run(config, episodes, seed):
    run = subprocess.run([BENCH, config, str(episodes), str(seed)], capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


def main():
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as tmp:
        toy = os.path.join(tmp, "toy.yaml")
        with open(toy, "w") as f:
            f.write("environment: toy\n")
        cases = [("toy (no work per step)", toy, 200),
                 ("local-sgd, configs/python_env.yaml", os.path.join(ROOT, "configs", "python_env.yaml"), 100)]
        print("| environment | steps | C++ step (us) | Python step (us) | overhead (us) | Python / C++ |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, config, episodes in cases:
            cpp, py = [], []
            steps = None
            for _ in range(repeat):
                c = cpp_run(config, episodes, 1)
                p = python_run(config, episodes, 1)
                if c["steps"] != p["steps"]:
                    raise SystemExit(f"{name}: C++ ran {c['steps']} steps, Python {p['steps']}: not the same episodes")
                steps = c["steps"]
                cpp.append(c["step_s"] / steps * 1e6)
                py.append(p["step_s"] / steps * 1e6)
            c, p = statistics.median(cpp), statistics.median(py)
            print(f"| {name} | {steps} | {c:.2f} | {p:.2f} | {p - c:.2f} | {p / c:.3f} |")


if __name__ == "__main__":
    main()
