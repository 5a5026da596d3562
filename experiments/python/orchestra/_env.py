"""orchestra.BarrierEnv: the barrier-tuning environment of `orchestra train`, Gymnasium-style.

The C++ environment does the work (experiments/python/barrier_env_binding.cpp): this class gives
it Gymnasium's shape. With gymnasium importable it is a gymnasium.Env, registered as
"orchestra/Barrier-v0" (gymnasium.make("orchestra/Barrier-v0", config=...)); without, it has the
same attributes and methods (a duck type), its spaces those of orchestra.spaces.
"""
import os

import numpy as np

from . import _core
from ._checks import checked_int
from . import spaces as _own_spaces

try:
    import gymnasium as _gymnasium
except ImportError:  # the duck type, and orchestra.spaces
    _gymnasium = None

# True when BarrierEnv is a gymnasium.Env (gymnasium was importable when orchestra was imported).
GYMNASIUM = _gymnasium is not None
ENV_ID = "orchestra/Barrier-v0"

_Base = _gymnasium.Env if GYMNASIUM else object
_spaces = _gymnasium.spaces if GYMNASIUM else _own_spaces


class BarrierEnv(_Base):
    """The environment `orchestra train` trains on: one step is one decision window of local-SGD
    training on a simulated heterogeneous cluster (an epoch, or K rounds), the action moves the
    synchronization barrier T, the reward is the training config's.

    BarrierEnv(config=None, *, index=0, threads=1, **overrides)

    config     a training config of `orchestra train` (configs/a3c_train.yaml): its `environment`,
               `experiments` or `clusters`, `controller` and `reward` keys make the environment.
    overrides  any of its top-level keys, read after the file: reward="time",
               controller={"factor": 4} (a dict merges into the file's mapping, anything else
               replaces the value), experiments=["configs/x.yaml"] (relative to the current
               directory). A later key of the config (environment="surrogate") is a keyword here
               too. Without a config, the keywords are the whole config.
    index      which of the config's experiments: experiments[index mod n], as agent `index` of
               `orchestra train` gets.
    threads    libtorch's and OpenBLAS's threads for this process, 1 as in `orchestra train` (where
               the agents are the parallelism); Debian's python3-torch shares them. None: unchanged.

    Spaces: observation_space is a Box of float32 (22 entries of orchestra/rl_state.hpp within
    their bounds, 25 with controller={"state": "progress"} or "lead"; the toy environment's 8, unbounded);
    action_space is Discrete(3): 0 decreases T,
    1 keeps it, 2 increases it (by the controller's unit or factor), the order of a policy's
    outputs (ACTION_MOVES gives the moves: -1, 0, +1). With controller={"max_move": m} it is
    Discrete(2m + 1), index i moving T by i - m units or powers of the factor; action_moves gives
    the environment's own moves (ACTION_MOVES when m = 1).

    reset(seed=None, options=None) -> (observation, info): seed s runs the C++ environment's
    reset(s) and starts a stream; later resets without a seed continue it (info["seed"] is the
    episode's seed); the first reset without any seed draws one at random.
    step(action) -> (observation, reward, terminated, truncated, info): terminated when the test
    accuracy reached the target, truncated at the epoch or time budget; stepping an ended episode
    raises ValueError (reset first). info: epoch, rounds, barrier_ms (T), step_ms, clock_ms (the
    simulated clock), accuracy, loss, evaluated, reached_target, seed, episode, and cluster (the
    episode's workers, servers, network and T's start and bounds; None for the toy environment).

    reset and step release the GIL: environments in several threads step at once (one thread per
    environment).
    """

    metadata = {"render_modes": []}
    render_mode = None
    spec = None

    def __init__(self, config=None, *, index=0, threads=1, **overrides):
        if config is not None:
            config = os.fspath(config)
        index = checked_int(index, "BarrierEnv: index", 0, 2**31)
        if threads is not None:  # None leaves the process's threads as they are (the docstring's promise)
            threads = checked_int(threads, "BarrierEnv: threads", 1, 257)
        self._env = _core.BarrierEnv(config, overrides, index, threads)
        low, high = self._env.bounds
        self.observation_space = _spaces.Box(low=np.asarray(low, dtype=np.float32),
                                             high=np.asarray(high, dtype=np.float32), dtype=np.float32)
        self.action_moves = tuple(self._env.action_moves)
        self.action_space = _spaces.Discrete(len(self.action_moves))
        self.cluster = None  # the current episode's, as in info["cluster"]
        if not GYMNASIUM:
            self.np_random = np.random.default_rng()

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            seed = _checked_seed(seed)
        if options:
            raise ValueError(f"BarrierEnv.reset: options are not used by this environment, got {options!r}")
        observation, info = self._env.reset(seed)
        if GYMNASIUM:
            super().reset(seed=seed)
        else:
            self.np_random = np.random.default_rng(info["seed"])
        self.cluster = info["cluster"]
        return observation, info

    def step(self, action):
        return self._env.step(action)

    def render(self):
        return None

    def close(self):
        self._env.close()

    @property
    def closed(self):
        return self._env.closed

    @property
    def unwrapped(self):
        return self

    @property
    def environment(self):
        """The training config's environment: "local-sgd" or "toy"."""
        return self._env.environment

    @property
    def experiment(self):
        """The experiment config this environment trains on ("" for the toy environment)."""
        return self._env.experiment

    @property
    def training_info(self):
        """What `orchestra train` records of the config in a policy file (config, reward, ...)."""
        return dict(self._env.training_info)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        where = self._env.experiment or self._env.environment
        return f"<orchestra.BarrierEnv {self._env.name}: {where}>"


def _checked_seed(seed):
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"BarrierEnv.reset: seed must be an int, got {seed!r}")
    seed = int(seed)
    if not 0 <= seed < 2**64:  # a continued episode's info["seed"] may use all 64 bits
        raise ValueError(f"BarrierEnv.reset: seed must be in [0, 2**64), got {seed}")
    return seed


def _register():
    if not GYMNASIUM:
        return
    registry = getattr(_gymnasium, "registry", None)  # gymnasium >= 0.26 exports it at the top
    if registry is None:
        registry = _gymnasium.envs.registration.registry
    if ENV_ID not in registry:
        _gymnasium.register(id=ENV_ID, entry_point="orchestra:BarrierEnv")


_register()
