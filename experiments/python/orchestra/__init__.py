"""The Orchestra toolkit from Python: its barrier-tuning environment, its trained policies and its
experiments, for researchers whose reinforcement learning is written in Python.

    import orchestra
    env = orchestra.BarrierEnv("configs/a3c_train.yaml")       # what `orchestra train` trains on
    obs, info = env.reset(seed=1)                               # numpy float32, shape (22,)
    obs, reward, terminated, truncated, info = env.step(2)      # 0, 1, 2: halve, keep, double T
    policy = orchestra.load_policy(orchestra.PRETRAINED_POLICY)
    action = policy.predict(obs)                                # the C++ controller's choice
    results = orchestra.run("configs/quickstart.yaml", out="results/quickstart", seed=1)
    results.epochs                                              # a pandas DataFrame

- BarrierEnv: the environment of `orchestra train` (a training config, keyword overrides of its
  keys) with the Gymnasium API; a gymnasium.Env registered as "orchestra/Barrier-v0" when
  gymnasium is importable, the same duck type otherwise (orchestra.GYMNASIUM says which).
- load_policy: a policy file of `orchestra train` (agents/policy_file.hpp), its network and options,
  and predict(obs) equal to the action the C++ controller takes.
- run, read_results: `orchestra run` and its results as pandas DataFrames and dicts.
- Errors: orchestra.ConfigError (a ValueError) and the other kinds of orchestra.Error, with the
  message the command line prints (file:line: key for a config).

Built by CMake into build/python/orchestra/ (README, "From Python"): PYTHONPATH=build/python.
"""
from ._core import (
    ACTION_MOVES,
    PRETRAINED_POLICY,
    CommError,
    ConfigError,
    DataError,
    Error,
    PlanError,
    PlotError,
    ProtocolError,
    UsageError,
    __version__,
    set_threads,
)
from . import spaces
from ._env import GYMNASIUM, BarrierEnv
from ._policy import Policy, load_policy
from ._results import Results, read_results, run

__all__ = [
    "ACTION_MOVES",
    "BarrierEnv",
    "CommError",
    "ConfigError",
    "DataError",
    "Error",
    "GYMNASIUM",
    "PRETRAINED_POLICY",
    "PlanError",
    "PlotError",
    "Policy",
    "ProtocolError",
    "Results",
    "UsageError",
    "__version__",
    "load_policy",
    "read_results",
    "run",
    "set_threads",
    "spaces",
]
