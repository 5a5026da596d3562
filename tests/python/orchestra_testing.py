"""Shared by the Python module's tests (tests/python/test_*.py), which ctest runs with the
interpreter the module was built for (tests/CMakeLists.txt):

- require(): the module and numpy (and any other module named) must import, or the test prints
  "SKIP: <why>" and exits 77, which ctest reports as skipped;
- the paths ctest passes: the source tree, the build tree, the binary, env_probe;
- the small configs under tests/python/data/ and a C++ episode from env_probe.
"""
import json
import os
import subprocess
import sys
import unittest

SKIP_CODE = 77
SOURCE_DIR = os.environ.get("ORCHESTRA_SOURCE_DIR", "")
BINARY = os.environ.get("ORCHESTRA_BINARY", "")
ENV_PROBE = os.environ.get("ORCHESTRA_ENV_PROBE", "")
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
TRAIN_SMALL = os.path.join(DATA, "train_small.yaml")
TASK_SMALL = os.path.join(DATA, "task_small.yaml")


def skip(reason):
    print(f"SKIP: {reason}")
    sys.stdout.flush()
    sys.exit(SKIP_CODE)


def require(*modules):
    """Imports numpy, orchestra and `modules`, or skips the whole test file saying which is missing."""
    for name in ("numpy", "orchestra") + modules:
        try:
            __import__(name)
        except ImportError as e:
            hint = {"numpy": "apt-get install python3-numpy", "pandas": "apt-get install python3-pandas",
                    "torch": "apt-get install python3-torch",
                    "orchestra": "the module is built into build/python/ (experiments/python/)"}.get(name, "")
            skip(f"{name} does not import with {sys.executable}: {e} ({hint})")


def main():
    unittest.main(verbosity=2)


def cpp_episode(config, seed, moves, index=0):
    """The C++ environment's episode (env_probe): reset(seed), then `moves` (-1, 0, +1) until it ends."""
    run = subprocess.run([ENV_PROBE, "episode", config, str(index), str(seed), ",".join(str(m) for m in moves)],
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        raise AssertionError(f"env_probe failed: {run.stderr.strip()}")
    return json.loads(run.stdout)


def cpp_greedy(policy, count, seed):
    """Random observations within the state's bounds and the C++ controller's move in each."""
    run = subprocess.run([ENV_PROBE, "greedy", policy, str(count), str(seed)], capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        raise AssertionError(f"env_probe failed: {run.stderr.strip()}")
    return json.loads(run.stdout)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def check_torch_draws_unchanged(case, call):
    """call() leaves torch's default generator as it found it: the user's next torch.rand is what
    it would have been (the module seeds the generator it shares with Debian's python3-torch)."""
    try:
        import torch
    except ImportError:
        case.skipTest("no torch")
    torch.manual_seed(1)
    expected = torch.rand(3)
    torch.manual_seed(1)
    call()
    case.assertTrue(torch.equal(torch.rand(3), expected))
