"""orchestra.BarrierEnv keeps the Gymnasium contract: spaces and dtypes, reset(seed) and its
stream of episode seeds, the 5-tuple, termination and truncation, what a step after the end, a
bad action or a closed environment do, and that a reset leaves the user's torch draws alone."""
import unittest

import orchestra_testing as t

t.require()

import numpy as np  # noqa: E402

import orchestra  # noqa: E402

STATE_SIZE = 22
SIGNED = {6, 8, 13, 14, 15, 16, 21}  # rl_state.hpp: changes, trends, log2 ratios, the last action


def episode(env, seed, actions):
    """(observations, rewards, flags, infos) of one episode: reset(seed), then `actions` in turn
    (repeated) until it ends."""
    obs, info = env.reset(seed=seed)
    observations, rewards, flags, infos = [obs], [], [], [info]
    k = 0
    while True:
        obs, reward, terminated, truncated, info = env.step(actions[k % len(actions)])
        k += 1
        observations.append(obs)
        rewards.append(reward)
        flags.append((terminated, truncated))
        infos.append(info)
        if terminated or truncated:
            return observations, rewards, flags, infos


class Spaces(unittest.TestCase):
    def test_the_state_box_and_three_actions(self):
        env = orchestra.BarrierEnv(t.TRAIN_SMALL)
        box = env.observation_space
        self.assertEqual(box.shape, (STATE_SIZE,))
        self.assertEqual(box.dtype, np.float32)
        self.assertEqual(box.low.dtype, np.float32)
        for i in range(STATE_SIZE):
            self.assertEqual(box.low[i], -1.0 if i in SIGNED else 0.0, i)
            self.assertEqual(box.high[i], 1.0, i)
        self.assertEqual(env.action_space.n, 3)
        self.assertEqual(orchestra.ACTION_MOVES, (-1, 0, 1))
        self.assertEqual(env.environment, "local-sgd")
        self.assertTrue(env.experiment.endswith("task_small.yaml"))

    def test_the_stand_in_box_contains_what_gymnasium_s_box_contains(self):
        box = orchestra.spaces.Box(low=[0.0, -1.0], high=[1.0, 1.0])
        self.assertTrue(box.contains(np.array([0.5, -0.5], dtype=np.float32)))
        self.assertTrue(box.contains([0.5, -0.5]))  # a list: made a float32 array first
        self.assertTrue(box.contains(np.array([1, 0], dtype=np.int8)))  # casts safely
        self.assertFalse(box.contains(np.array([0.5, -0.5])))  # float64 does not cast safely to float32
        self.assertFalse(box.contains(np.array([2.0, 0.0], dtype=np.float32)))
        self.assertFalse(box.contains(np.zeros(3, dtype=np.float32)))
        self.assertFalse(box.contains(["a", "b"]))
        self.assertFalse(box.contains([[0.5], [0.5, 1.0]]))

    def test_moves_of_two_sizes_give_five_actions(self):
        # controller: {max_move: 2}: index i moves T by factor ** (i - 2), here x4, x2, none, /2, /4.
        env = orchestra.BarrierEnv(t.TRAIN_SMALL, controller={"move": "multiplicative", "factor": 2, "max_move": 2})
        self.assertEqual(env.action_space.n, 5)
        self.assertEqual(env.action_moves, (-2, -1, 0, 1, 2))
        env.reset(seed=1)
        start = env.cluster["start_barrier_ms"]
        _, _, _, _, info = env.step(4)
        self.assertAlmostEqual(info["barrier_ms"], 4 * start)
        _, _, _, _, info = env.step(1)
        self.assertAlmostEqual(info["barrier_ms"], 2 * start)
        with self.assertRaisesRegex(ValueError, "must be in 0 ... 4"):
            env.step(5)
        self.assertEqual(orchestra.BarrierEnv(t.TRAIN_SMALL).action_moves, orchestra.ACTION_MOVES)

    def test_the_progress_state_adds_three_bounded_entries(self):
        # controller: {state: progress} (rl_state.hpp): the fall of the loss at this T against the
        # T before, the last change of T (both signed) and the rounds at T.
        env = orchestra.BarrierEnv(t.TRAIN_SMALL, controller={"state": "progress"})
        box = env.observation_space
        self.assertEqual(box.shape, (STATE_SIZE + 3,))
        self.assertEqual(list(box.low[STATE_SIZE:]), [-1.0, -1.0, 0.0])
        obs, _ = env.reset(seed=1)
        seen_rounds_at_t = False
        for action in (2, 1, 1, 0, 1, 1):
            self.assertTrue(box.contains(obs), obs)
            obs, _, terminated, truncated, _ = env.step(action)
            seen_rounds_at_t = seen_rounds_at_t or obs[STATE_SIZE + 2] > 0
            if terminated or truncated:
                break
        self.assertTrue(seen_rounds_at_t)

    def test_the_toy_environment_has_its_own_unbounded_observation(self):
        env = orchestra.BarrierEnv(t.TRAIN_SMALL, environment="toy")
        self.assertEqual(env.observation_space.shape, (8,))
        self.assertTrue(np.all(np.isinf(env.observation_space.low)))
        obs, info = env.reset(seed=1)
        self.assertEqual(obs.shape, (8,))
        self.assertIsNone(info["cluster"])


class ResetAndStep(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.env = orchestra.BarrierEnv(t.TRAIN_SMALL)

    def test_reset_returns_a_float32_observation_in_the_space_and_the_info(self):
        obs, info = self.env.reset(seed=3)
        self.assertIsInstance(obs, np.ndarray)
        self.assertEqual(obs.dtype, np.float32)
        self.assertEqual(obs.shape, (STATE_SIZE,))
        self.assertTrue(self.env.observation_space.contains(obs))
        for key in ("epoch", "rounds", "barrier_ms", "step_ms", "clock_ms", "accuracy", "loss", "evaluated",
                    "reached_target", "seed", "episode", "cluster"):
            self.assertIn(key, info)
        self.assertEqual(info["seed"], 3)
        self.assertEqual(info["epoch"], 0)
        cluster = info["cluster"]
        self.assertEqual([w["name"] for w in cluster["workers"]], ["fast", "slow-0", "slow-1"])
        self.assertEqual(cluster["servers"], ["s0", "s1"])
        self.assertAlmostEqual(cluster["network"]["bandwidth_gbps"], 1.0)
        self.assertEqual(info["barrier_ms"], cluster["start_barrier_ms"])  # T starts at LCM's T*
        self.assertGreater(cluster["workers"][1]["batch_ms"], cluster["workers"][0]["batch_ms"])
        self.assertIs(self.env.cluster, cluster)

    def test_step_returns_the_five_tuple_and_episodes_end_by_the_budget(self):
        observations, rewards, flags, infos = episode(self.env, 4, [1, 0, 2])
        for obs in observations:
            self.assertEqual(obs.dtype, np.float32)
            self.assertTrue(self.env.observation_space.contains(obs), obs)
        for reward, (terminated, truncated) in zip(rewards, flags):
            self.assertIs(type(reward), float)
            self.assertIs(type(terminated), bool)
            self.assertIs(type(truncated), bool)
            self.assertLess(reward, 0)  # the time reward: minus the window's time
        self.assertTrue(all(not a and not b for a, b in flags[:-1]))
        terminated, truncated = flags[-1]
        self.assertTrue(terminated != truncated)
        last = infos[-1]
        if terminated:
            self.assertTrue(last["reached_target"])
            self.assertGreaterEqual(last["accuracy"], 0.9)
        else:
            self.assertEqual(last["epoch"], 3)  # the experiment's budget
        clocks = [i["clock_ms"] for i in infos]
        self.assertEqual(clocks, sorted(clocks))
        # An ended episode takes no step until reset.
        with self.assertRaisesRegex(ValueError, "after the episode ended"):
            self.env.step(1)

    def test_truncated_at_an_unreachable_target_and_terminated_at_a_reachable_one(self):
        unreachable = orchestra.BarrierEnv(t.TRAIN_SMALL, max_reference_epochs=1)
        _, _, flags, infos = episode(unreachable, 1, [1])
        self.assertEqual(flags[-1], (False, True))
        # A keyword's dict merges into the file's mapping (which has interval_rounds: 2), so a
        # controller of another interval is given whole, without the file.
        reachable = orchestra.BarrierEnv(experiments=[t.TASK_SMALL], reward="time",
                                         controller={"move": "multiplicative", "factor": 2, "interval": "epoch"})
        _, _, flags, infos = episode(reachable, 1, [1])
        reached = [i for i in infos if i["reached_target"]]
        if flags[-1][0]:
            self.assertEqual(len(reached), 1)
            self.assertTrue(infos[-1]["evaluated"])
        else:
            self.assertEqual(reached, [])

    def test_the_same_seed_gives_the_same_episode_another_seed_another(self):
        a = episode(self.env, 11, [0, 2, 1])
        b = episode(self.env, 11, [0, 2, 1])
        c = episode(self.env, 12, [0, 2, 1])
        for x, y in zip(a[0], b[0]):
            np.testing.assert_array_equal(x, y)
        self.assertEqual(a[1], b[1])
        self.assertEqual(a[2], b[2])
        self.assertEqual([i["clock_ms"] for i in a[3]], [i["clock_ms"] for i in b[3]])
        self.assertNotEqual([i["clock_ms"] for i in a[3]], [i["clock_ms"] for i in c[3]])

    def test_unseeded_resets_continue_the_seeded_stream(self):
        other = orchestra.BarrierEnv(t.TRAIN_SMALL)
        seeds = []
        for env in (self.env, other):
            _, info = env.reset(seed=21)
            stream = [info["seed"]] + [env.reset()[1]["seed"] for _ in range(3)]
            seeds.append(stream)
            self.assertEqual([env.reset(seed=21)[1]["seed"]], [21])
        self.assertEqual(seeds[0], seeds[1])
        self.assertEqual(seeds[0][0], 21)
        self.assertEqual(len(set(seeds[0])), 4)

    def test_any_continued_episode_runs_again_from_its_info_seed(self):
        # continued episodes' seeds use all 64 bits: find one at or above 2**63 and replay it
        self.env.reset(seed=1)
        for _ in range(64):
            observation, info = self.env.reset()
            if info["seed"] >= 2**63:
                break
        self.assertGreaterEqual(info["seed"], 2**63)
        replay = orchestra.BarrierEnv(t.TRAIN_SMALL)
        again, replayed = replay.reset(seed=info["seed"])
        np.testing.assert_array_equal(again, observation)
        self.assertEqual((replayed["seed"], replayed["cluster"]), (info["seed"], info["cluster"]))
        with self.assertRaises(ValueError):
            self.env.reset(seed=2**64)

    def test_the_first_reset_without_a_seed_draws_one_and_reports_it(self):
        first = orchestra.BarrierEnv(t.TRAIN_SMALL).reset()[1]["seed"]
        second = orchestra.BarrierEnv(t.TRAIN_SMALL).reset()[1]["seed"]
        self.assertNotEqual(first, second)
        # ... which runs that episode again when given.
        replay = orchestra.BarrierEnv(t.TRAIN_SMALL)
        self.assertEqual(replay.reset(seed=first)[1]["seed"], first)

    def test_bad_seeds_and_options(self):
        with self.assertRaises(ValueError):
            self.env.reset(seed=-1)
        with self.assertRaises(TypeError):
            self.env.reset(seed=1.5)
        with self.assertRaises(ValueError):
            self.env.reset(seed=1, options={"x": 1})


class Actions(unittest.TestCase):
    def test_integer_actions_of_any_kind_and_clear_errors_for_the_rest(self):
        env = orchestra.BarrierEnv(t.TRAIN_SMALL)
        with self.assertRaisesRegex(RuntimeError, "call reset"):
            env.step(1)
        env.reset(seed=1)
        start = env.cluster["start_barrier_ms"]
        _, _, _, _, info = env.step(np.int64(2))  # what action_space.sample() gives
        self.assertAlmostEqual(info["barrier_ms"], 2 * start)
        _, _, _, _, info = env.step(np.array(0))
        self.assertAlmostEqual(info["barrier_ms"], start)
        for bad in (3, -1, 7):
            with self.assertRaisesRegex(ValueError, "must be 0, 1 or 2"):
                env.step(bad)
        for bad in (1.0, "1", None, [1], True, False):  # a flag is an integer to Python: step(True) was action 1
            with self.assertRaisesRegex(TypeError, "must be an integer"):
                env.step(bad)
        env.step(1)  # still usable

    def test_close_is_final_and_idempotent(self):
        with orchestra.BarrierEnv(t.TRAIN_SMALL) as env:
            env.reset(seed=2)
        self.assertTrue(env.closed)
        env.close()
        with self.assertRaisesRegex(RuntimeError, "closed"):
            env.step(1)
        with self.assertRaisesRegex(RuntimeError, "closed"):
            env.reset(seed=1)


class TorchGenerator(unittest.TestCase):
    def test_a_reset_does_not_change_what_torch_draws_next(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch")
        env = orchestra.BarrierEnv(t.TRAIN_SMALL)
        torch.manual_seed(0)
        expected = torch.rand(4)
        torch.manual_seed(0)
        env.reset(seed=9)  # builds replicas, seeding libtorch's generator inside
        self.assertTrue(torch.equal(torch.rand(4), expected))


if __name__ == "__main__":
    t.main()
