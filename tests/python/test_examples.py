"""The examples of experiments/python/examples/ run as a user runs them: the random agent,
REINFORCE in PyTorch, which must end with a better held-out return than random actions on the
same episodes, and the climb-then-hold schedules of climb_ceiling.py."""
import json
import os
import subprocess
import sys
import unittest

import orchestra_testing as t

t.require()

EXAMPLES = os.path.join(t.SOURCE_DIR, "experiments", "python", "examples")


def example(name, *args):
    run = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args, "--json"], capture_output=True, text=True,
                         timeout=600)
    if run.returncode != 0:
        raise AssertionError(f"{name} failed:\n{run.stdout}\n{run.stderr}")
    print(run.stdout.strip().splitlines()[-2])
    return json.loads(run.stdout.strip().splitlines()[-1])


class Examples(unittest.TestCase):
    def test_the_random_agent(self):
        out = example("random_agent.py", "--episodes", "3", "--seed", "4")
        self.assertEqual(len(out["returns"]), 3)
        self.assertTrue(all(r < 0 for r in out["returns"]))  # the time reward: minus the time taken

    def test_reinforce_learns_to_beat_random_actions(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            self.skipTest("reinforce.py needs PyTorch (python3-torch)")
        out = example("reinforce.py", "--seed", "1", "--quiet")
        trained, random = sum(out["trained"]) / len(out["trained"]), sum(out["random"]) / len(out["random"])
        self.assertGreater(trained, random)

    def test_climb_ceiling_runs_the_climb_and_the_static_barrier_it_is_judged_against(self):
        task = os.path.join(t.SOURCE_DIR, "configs", "python_task.yaml")
        out = example("climb_ceiling.py", task, "--caps", "0.5,1,2,8", "--seeds", "1")
        rows = {r["cap"]: r for r in out["rows"]}
        self.assertEqual(sorted(rows), [0.5, 1.0, 2.0, 8.0])
        start = rows[1.0]["static_T_ms"]
        # cap 1: both hold T*; caps 2 and 0.5: the first decision comes before round 0, so one move
        # is the static 2 T* or T* / 2 from the first round, the same episode to the last bit
        for cap in (0.5, 1.0, 2.0):
            self.assertEqual(rows[cap]["climb_s"], rows[cap]["static_s"])
            self.assertAlmostEqual(rows[cap]["climb_T_ms"], cap * start, delta=1e-6 * start)
        self.assertAlmostEqual(rows[8.0]["static_T_ms"], 8 * start, delta=1e-6 * start)  # T_x_lcm: 8
        self.assertLessEqual(rows[8.0]["climb_T_ms"], 8 * start * (1 + 1e-9))  # one move a round, never past the cap
        self.assertEqual(len(out["ratios"]), 1)


if __name__ == "__main__":
    t.main()
