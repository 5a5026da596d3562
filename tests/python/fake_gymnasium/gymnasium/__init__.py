"""A minimal stand-in for gymnasium (not packaged by Debian), for tests/python/test_gymnasium.py
when the real one is not installed: the parts of gymnasium 0.29/1.0 that orchestra.BarrierEnv and
its registration touch, with the same names and behaviour (Env, spaces.Box, spaces.Discrete,
register, make, registry)."""
import importlib

import numpy as np

from . import spaces  # noqa: F401

__version__ = "0-stand-in"
registry = {}


class Env:
    """gymnasium.Env: reset(seed=...) seeds np_random; the rest is the subclass's."""

    metadata = {"render_modes": []}
    render_mode = None
    spec = None
    _np_random = None

    def reset(self, *, seed=None, options=None):
        if seed is not None or self._np_random is None:
            self._np_random = np.random.default_rng(seed)

    @property
    def np_random(self):
        if self._np_random is None:
            self._np_random = np.random.default_rng()
        return self._np_random

    @property
    def unwrapped(self):
        return self

    def close(self):
        pass


class EnvSpec:
    def __init__(self, id, entry_point, kwargs):
        self.id, self.entry_point, self.kwargs = id, entry_point, kwargs


def register(id, entry_point, **kwargs):
    if id in registry:
        raise ValueError(f"{id} is already registered")
    registry[id] = EnvSpec(id, entry_point, kwargs.get("kwargs", {}))


def make(id, **kwargs):
    spec = registry[id]
    module, name = spec.entry_point.split(":")
    env = getattr(importlib.import_module(module), name)(**{**spec.kwargs, **kwargs})
    env.unwrapped.spec = spec
    return env
