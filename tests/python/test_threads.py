"""reset and step release the GIL: while one thread is inside a step, another thread's environment
steps; environments in two threads give the episodes they give alone; a second thread in the same
environment is told so instead of racing it."""
import threading
import unittest

import orchestra_testing as t

t.require()

import numpy as np  # noqa: E402

import orchestra  # noqa: E402

SLOW_STEP_MS = 4000  # the toy environment sleeps this long inside C++ on every step


def run_episode(env, seed, moves):
    obs, info = env.reset(seed=seed)
    trace = [obs]
    k = 0
    while True:
        obs, reward, terminated, truncated, info = env.step(moves[k % len(moves)])
        k += 1
        trace += [obs, reward, info["clock_ms"]]
        if terminated or truncated:
            return trace


class GilReleased(unittest.TestCase):
    def test_another_thread_steps_while_one_is_inside_a_step(self):
        slow = orchestra.BarrierEnv(t.TRAIN_SMALL, environment="toy", toy_step_ms=SLOW_STEP_MS)
        fast = orchestra.BarrierEnv(t.TRAIN_SMALL)
        slow.reset(seed=1)
        fast.reset(seed=1)
        entered, done = threading.Event(), threading.Event()
        errors = []

        def slow_step():
            try:
                entered.set()
                slow.step(1)
            except Exception as e:  # reported by the main thread
                errors.append(e)
            finally:
                done.set()

        thread = threading.Thread(target=slow_step)
        thread.start()
        self.assertTrue(entered.wait(60))
        # time.sleep releases the GIL: the other thread reaches its step well within this. Were
        # the GIL held during the step, the main thread would get it back only after 4 s.
        threading.Event().wait(0.2)
        steps = 0
        for _ in range(5):
            _, _, terminated, truncated, _ = fast.step(1)
            steps += 1
            if terminated or truncated:
                break
        self.assertFalse(done.is_set(), "the slow step ended before the other environment's steps: the GIL was held")
        self.assertGreaterEqual(steps, 1)
        self.assertTrue(done.wait(120))
        thread.join()
        self.assertEqual(errors, [])

    def test_two_environments_in_two_threads_give_their_episodes_alone(self):
        moves = [2, 0, 1, 1, 0, 2]
        alone = [run_episode(orchestra.BarrierEnv(t.TRAIN_SMALL), seed, moves) for seed in (3, 4)]
        results = [None, None]

        def worker(j):
            env = orchestra.BarrierEnv(t.TRAIN_SMALL)
            results[j] = [run_episode(env, seed, moves) for seed in (3, 4) for _ in range(2)]

        threads = [threading.Thread(target=worker, args=(j,)) for j in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        for j in range(2):
            self.assertIsNotNone(results[j])
            for got, expected in zip(results[j], [alone[0], alone[0], alone[1], alone[1]]):
                self.assertEqual(len(got), len(expected))
                for a, b in zip(got, expected):
                    if isinstance(a, np.ndarray):
                        np.testing.assert_array_equal(a, b)
                    else:
                        self.assertEqual(a, b)

    def test_a_second_thread_in_the_same_environment_is_refused(self):
        slow = orchestra.BarrierEnv(t.TRAIN_SMALL, environment="toy", toy_step_ms=1500)
        slow.reset(seed=2)
        entered = threading.Event()
        thread = threading.Thread(target=lambda: (entered.set(), slow.step(1)))
        thread.start()
        entered.wait(60)
        threading.Event().wait(0.3)
        with self.assertRaisesRegex(RuntimeError, "another thread is inside this environment"):
            slow.step(1)
        thread.join(120)
        slow.step(1)  # free again


if __name__ == "__main__":
    t.main()
