"""The examples of experiments/python/examples/ run as a user runs them: the random agent, and
REINFORCE in PyTorch, which must end with a better held-out return than random actions on the
same episodes."""
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


if __name__ == "__main__":
    t.main()
