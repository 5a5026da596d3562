"""The two spaces BarrierEnv declares, for when gymnasium is not installed: the same attributes and
methods a learner reads from gymnasium.spaces.Box and gymnasium.spaces.Discrete (shape, dtype,
low, high, n, sample, contains, seed). With gymnasium importable, BarrierEnv uses gymnasium's own.
"""
import numpy as np


class Box:
    """A box in R^n: `low <= x <= high` elementwise (bounds may be infinite)."""

    def __init__(self, low, high, dtype=np.float32, seed=None):
        self.dtype = np.dtype(dtype)
        self.low = np.asarray(low, dtype=self.dtype)
        self.high = np.asarray(high, dtype=self.dtype)
        if self.low.shape != self.high.shape:
            raise ValueError(f"Box: low has shape {self.low.shape}, high {self.high.shape}")
        if np.any(self.low > self.high):
            raise ValueError("Box: low must not exceed high")
        self.shape = self.low.shape
        self.np_random = np.random.default_rng(seed)

    def seed(self, seed=None):
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def is_bounded(self, manner="both"):
        below, above = bool(np.all(np.isfinite(self.low))), bool(np.all(np.isfinite(self.high)))
        return {"both": below and above, "below": below, "above": above}[manner]

    def sample(self):
        """Uniform inside finite bounds; normal, or shifted exponential, along unbounded sides."""
        low, high = self.low.astype(np.float64), self.high.astype(np.float64)
        out = np.empty(self.shape)
        bounded = np.isfinite(low) & np.isfinite(high)
        only_low = np.isfinite(low) & ~np.isfinite(high)
        only_high = ~np.isfinite(low) & np.isfinite(high)
        free = ~np.isfinite(low) & ~np.isfinite(high)
        out[bounded] = self.np_random.uniform(low[bounded], high[bounded])
        out[only_low] = low[only_low] + self.np_random.exponential(size=only_low.sum())
        out[only_high] = high[only_high] - self.np_random.exponential(size=only_high.sum())
        out[free] = self.np_random.normal(size=free.sum())
        return out.astype(self.dtype)

    def contains(self, x):
        # gymnasium's rule: an array must cast safely to the box's dtype (a float64 array is not in
        # a float32 box); anything else is first made an array of that dtype.
        if not isinstance(x, np.ndarray):
            try:
                x = np.asarray(x, dtype=self.dtype)
            except (ValueError, TypeError):
                return False
        if x.shape != self.shape or not np.can_cast(x.dtype, self.dtype):
            return False
        return bool(np.all(x >= self.low) and np.all(x <= self.high))

    __contains__ = contains

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"

    def __eq__(self, other):
        return (isinstance(other, Box) and self.shape == other.shape and self.dtype == other.dtype
                and np.array_equal(self.low, other.low) and np.array_equal(self.high, other.high))


class Discrete:
    """The integers start, ..., start + n - 1."""

    def __init__(self, n, seed=None, start=0):
        if int(n) < 1:
            raise ValueError(f"Discrete: n must be >= 1, got {n}")
        self.n = int(n)
        self.start = int(start)
        self.shape = ()
        self.dtype = np.dtype(np.int64)
        self.np_random = np.random.default_rng(seed)

    def seed(self, seed=None):
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def sample(self):
        return np.int64(self.start + self.np_random.integers(self.n))

    def contains(self, x):
        if isinstance(x, (int, np.integer)) or (isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu"):
            return self.start <= int(x) < self.start + self.n
        return False

    __contains__ = contains

    def __repr__(self):
        return f"Discrete({self.n})" if self.start == 0 else f"Discrete({self.n}, start={self.start})"

    def __eq__(self, other):
        return isinstance(other, Discrete) and self.n == other.n and self.start == other.start
