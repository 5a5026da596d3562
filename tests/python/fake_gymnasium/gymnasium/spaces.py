"""gymnasium.spaces.Box and Discrete, as far as the stand-in needs them."""
import numpy as np


class Space:
    def __init__(self, shape, dtype, seed=None):
        self.shape, self.dtype = shape, np.dtype(dtype)
        self.np_random = np.random.default_rng(seed)

    def seed(self, seed=None):
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def __contains__(self, x):
        return self.contains(x)


class Box(Space):
    def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
        low, high = np.asarray(low, dtype=dtype), np.asarray(high, dtype=dtype)
        super().__init__(low.shape, dtype, seed)
        self.low, self.high = low, high

    def sample(self):
        low = np.where(np.isfinite(self.low), self.low, -1.0)
        high = np.where(np.isfinite(self.high), self.high, 1.0)
        return self.np_random.uniform(low, high).astype(self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))


class Discrete(Space):
    def __init__(self, n, seed=None, start=0):
        super().__init__((), np.int64, seed)
        self.n, self.start = int(n), int(start)

    def sample(self):
        return np.int64(self.start + self.np_random.integers(self.n))

    def contains(self, x):
        return isinstance(x, (int, np.integer)) and self.start <= int(x) < self.start + self.n
