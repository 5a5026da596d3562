"""The Python environment is the C++ one: the same training config, seed and actions give the
same episode as the environment `orchestra train` makes in C++ (env_probe), step for step: every
observation bit for bit, every reward, flag and info field."""
import os
import random
import tempfile
import unittest

import orchestra_testing as t

t.require()

import numpy as np  # noqa: E402

import orchestra  # noqa: E402

INFO_FIELDS = ("epoch", "rounds", "barrier_ms", "step_ms", "clock_ms", "accuracy", "loss", "evaluated", "reached_target")


class SameEpisodeAsCpp(unittest.TestCase):
    def compare(self, config, seed, moves, index=0, **overrides):
        cpp = t.cpp_episode(config, seed, moves, index)
        env = orchestra.BarrierEnv(config, index=index, **overrides)
        obs, info = env.reset(seed=seed)
        np.testing.assert_array_equal(obs, np.asarray(cpp["reset"]["observation"], dtype=np.float32))
        for field in INFO_FIELDS:
            self.assertEqual(info[field], cpp["reset"]["info"][field], field)
        self.assertGreater(len(cpp["steps"]), 1)
        for k, expected in enumerate(cpp["steps"]):
            obs, reward, terminated, truncated, info = env.step(orchestra.ACTION_MOVES.index(moves[k]))
            with self.subTest(step=k):
                np.testing.assert_array_equal(obs, np.asarray(expected["observation"], dtype=np.float32))
                self.assertEqual(reward, expected["reward"])
                self.assertEqual((terminated, truncated), (expected["terminated"], expected["truncated"]))
                for field in INFO_FIELDS:
                    self.assertEqual(info[field], expected["info"][field], field)
        self.assertTrue(terminated or truncated or len(cpp["steps"]) == len(moves))
        return cpp

    def test_random_moves_on_two_seeds(self):
        rng = random.Random(43)
        for seed in (1, 77):
            moves = [rng.choice((-1, 0, 1)) for _ in range(60)]
            self.compare(t.TRAIN_SMALL, seed, moves)

    def test_another_experiment_of_the_config_by_index(self):
        # experiments[index mod n]: a second experiment with another cluster, as agent 1 gets it.
        with tempfile.TemporaryDirectory() as tmp:
            task = t.read(t.TASK_SMALL).replace("count: 2", "count: 3")
            t.write(os.path.join(tmp, "task_four.yaml"), task)
            config = t.write(os.path.join(tmp, "train.yaml"), t.read(t.TRAIN_SMALL).replace(
                "experiments: [task_small.yaml]", f"experiments: [{t.TASK_SMALL}, task_four.yaml]"))
            self.compare(config, 5, [1, -1, 0, 1, 1, -1] * 10, index=1)
            env = orchestra.BarrierEnv(config, index=1)
            self.assertTrue(env.experiment.endswith("task_four.yaml"))
            self.assertEqual(len(env.reset(seed=5)[1]["cluster"]["workers"]), 4)
            self.assertEqual(len(orchestra.BarrierEnv(config, index=2).reset(seed=5)[1]["cluster"]["workers"]), 3)

if __name__ == "__main__":
    t.main()
