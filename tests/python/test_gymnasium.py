"""Both ways orchestra.BarrierEnv can be: a gymnasium.Env registered as "orchestra/Barrier-v0" when
gymnasium imports, and the same duck type when it does not. Each way runs in a fresh interpreter,
so that what is importable is decided there: the gymnasium way with the real gymnasium if it is
installed (then also through gymnasium's own env checker), else with the minimal stand-in in
tests/python/fake_gymnasium/ (said in the output); the duck way with gymnasium hidden."""
import os
import subprocess
import sys
import unittest

import orchestra_testing as t

t.require()

FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_gymnasium")

# Run in the child: the API through gymnasium.make, spaces of gymnasium's own classes, seeding.
GYMNASIUM_WAY = """
import numpy as np, gymnasium, orchestra
assert orchestra.GYMNASIUM
assert issubclass(orchestra.BarrierEnv, gymnasium.Env)
env = gymnasium.make("orchestra/Barrier-v0", config=CONFIG, reward="time")
base = env.unwrapped
assert isinstance(base, orchestra.BarrierEnv) and isinstance(base, gymnasium.Env)
assert isinstance(base.observation_space, gymnasium.spaces.Box), type(base.observation_space)
assert isinstance(base.action_space, gymnasium.spaces.Discrete)
assert base.spec is not None and base.spec.id == "orchestra/Barrier-v0"
a, _ = env.reset(seed=4)
b, info = env.reset(seed=4)
assert np.array_equal(a, b) and a.dtype == np.float32 and info["seed"] == 4
assert base.np_random is not None
obs, reward, terminated, truncated, info = env.step(base.action_space.sample())
assert base.observation_space.contains(obs)
if hasattr(gymnasium, "utils") and hasattr(gymnasium.utils, "env_checker"):
    from gymnasium.utils.env_checker import check_env
    check_env(orchestra.BarrierEnv(CONFIG), skip_render_check=True)
    print("gymnasium's check_env passed")
orchestra._env._register()  # registering again is harmless
print("gymnasium way:", gymnasium.__version__)
"""

# Run in the child with gymnasium made unimportable: the duck type with orchestra.spaces.
DUCK_WAY = """
import sys, importlib.abc
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "gymnasium" or name.startswith("gymnasium."):
            raise ImportError("hidden by the test")
sys.meta_path.insert(0, Hide())
import numpy as np, orchestra
assert not orchestra.GYMNASIUM
assert orchestra.BarrierEnv.__bases__ == (object,)
env = orchestra.BarrierEnv(CONFIG)
assert isinstance(env.observation_space, orchestra.spaces.Box)
assert isinstance(env.action_space, orchestra.spaces.Discrete) and env.action_space.n == 3
assert env.unwrapped is env and env.metadata == {"render_modes": []} and env.render_mode is None
env.action_space.seed(1)
obs, info = env.reset(seed=2)
assert obs.dtype == np.float32 and obs.shape == env.observation_space.shape
assert env.observation_space.contains(obs)
assert env.observation_space.contains(env.observation_space.sample())
done = False
while not done:
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs)
    done = terminated or truncated
rng = env.np_random.integers(1000)
env.reset(seed=2)
assert env.np_random.integers(1000) == rng
print("duck way: no gymnasium")
"""


def child(code, extra_path=None):
    env = dict(os.environ)
    if extra_path:
        env["PYTHONPATH"] = extra_path + os.pathsep + env.get("PYTHONPATH", "")
    code = f"CONFIG = {t.TRAIN_SMALL!r}\n" + code
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


class BothWays(unittest.TestCase):
    def test_a_gymnasium_env_when_gymnasium_imports(self):
        real = subprocess.run([sys.executable, "-c", "import gymnasium"], capture_output=True).returncode == 0
        if not real:
            print("gymnasium is not installed here: checking against the stand-in in tests/python/fake_gymnasium/")
        run = child(GYMNASIUM_WAY, None if real else FAKE)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("gymnasium way", run.stdout)
        print(run.stdout.strip())

    def test_the_same_duck_type_without_it(self):
        run = child(DUCK_WAY, FAKE)  # the stand-in on the path too: hidden all the same
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("duck way", run.stdout)


if __name__ == "__main__":
    t.main()
