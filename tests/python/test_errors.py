"""Bad input raises a Python exception, never a crash: a bad config names its file, line and key
(a bad keyword names the keyword), every kind of the toolkit's errors maps to its class (a
ValueError for the user's input), and bad values of the module's own arguments are ValueError or
TypeError."""
import os
import subprocess
import sys
import tempfile
import unittest

import orchestra_testing as t

t.require()

import numpy as np  # noqa: E402

import orchestra  # noqa: E402


class ConfigErrors(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def config(self, text, name="train.yaml"):
        return t.write(os.path.join(self.dir, name), text)

    def test_a_bad_value_in_the_file_names_file_line_and_key(self):
        path = self.config(f"name: bad\nexperiments: [{t.TASK_SMALL}]\n\nreward: fastest\n")
        with self.assertRaises(orchestra.ConfigError) as e:
            orchestra.BarrierEnv(path)
        self.assertIsInstance(e.exception, ValueError)
        self.assertIsInstance(e.exception, orchestra.Error)
        self.assertIn(f"{path}:4: reward:", str(e.exception))
        self.assertIn("fastest", str(e.exception))
        self.assertEqual(e.exception.kind, "config error")
        self.assertEqual(e.exception.exit_code, 2)

    def test_an_unknown_key_and_a_bad_nested_key(self):
        path = self.config(f"experiments: [{t.TASK_SMALL}]\nrewards: time\n")
        with self.assertRaisesRegex(orchestra.ConfigError, f"{path}:2: rewards"):
            orchestra.BarrierEnv(path)
        path = self.config(f"experiments: [{t.TASK_SMALL}]\ncontroller:\n  move: sideways\n")
        with self.assertRaisesRegex(orchestra.ConfigError, f"{path}:3: controller.move"):
            orchestra.BarrierEnv(path)

    def test_planned_t_is_planned_in_python(self):
        # The module installs the planner of planned-t (the registry alone cannot run the sweep): its
        # entry reaches the surrogate's check, here a mismatch (the pretrained surrogate was fitted on
        # Fashion-MNIST, this task is synthetic), and not "this program does not include" it.
        path = self.config(t.read(t.TASK_SMALL).replace("  - orchestra-lcm", "  - planned-t"), "planned.yaml")
        with self.assertRaises(orchestra.ConfigError) as e:
            orchestra.run(path, out=os.path.join(self.dir, "out"), quiet=True)
        self.assertIn("policies[0].surrogate:", str(e.exception))
        self.assertIn("the surrogate was fitted on data set fashion-mnist", str(e.exception))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "out")))

    def test_an_error_in_an_experiment_names_that_file(self):
        task = self.config(t.read(t.TASK_SMALL).replace("global_batch: 32", "global_batch: -32"), "task.yaml")
        path = self.config("experiments: [task.yaml]\n")
        with self.assertRaisesRegex(orchestra.ConfigError, f"{task}:\\d+: training.global_batch"):
            orchestra.BarrierEnv(path)

    def test_a_bad_keyword_names_the_keyword(self):
        with self.assertRaises(orchestra.ConfigError) as e:
            orchestra.BarrierEnv(t.TRAIN_SMALL, reward="fastest")
        self.assertTrue(str(e.exception).startswith("BarrierEnv(reward=...): reward:"), str(e.exception))
        with self.assertRaisesRegex(orchestra.ConfigError, r"^BarrierEnv\(controller=\.\.\.\): controller\.factor"):
            orchestra.BarrierEnv(t.TRAIN_SMALL, controller={"factor": 0.5})
        with self.assertRaisesRegex(orchestra.ConfigError, r"^BarrierEnv\(rewards=\.\.\.\): rewards"):
            orchestra.BarrierEnv(t.TRAIN_SMALL, rewards="time")
        with self.assertRaisesRegex(orchestra.ConfigError, r"^BarrierEnv\(environment=\.\.\.\): environment"):
            orchestra.BarrierEnv(t.TRAIN_SMALL, environment="surrogate-of-tomorrow")
        with self.assertRaisesRegex(orchestra.ConfigError, "no such file"):
            orchestra.BarrierEnv(t.TRAIN_SMALL, experiments=["no_such_task.yaml"])
        # ... while the file's own lines keep their numbers beside a keyword.
        path = self.config(f"experiments: [{t.TASK_SMALL}]\nreward: fastest\n")
        with self.assertRaisesRegex(orchestra.ConfigError, f"{path}:2: reward"):
            orchestra.BarrierEnv(path, controller={"factor": 4, "move": "multiplicative"})

    def test_a_keyword_keeps_the_files_checks_and_lines(self):
        # A repeated key in the file is still the reader's error beside a keyword of another key,
        # and so is one inside a mapping a keyword merges into.
        path = self.config(f"experiments: [{t.TASK_SMALL}]\nreward: time\nreward: eq1\n")
        with self.assertRaisesRegex(orchestra.ConfigError, f"{path}:3: reward: duplicate key"):
            orchestra.BarrierEnv(path, controller={"factor": 4})
        path = self.config(f"experiments: [{t.TASK_SMALL}]\ncontroller:\n  factor: 2\n  factor: 3\n")
        with self.assertRaisesRegex(orchestra.ConfigError, f"{path}:4: controller.factor: duplicate key"):
            orchestra.BarrierEnv(path, controller={"move": "multiplicative"})
        # A keyword replaces the file's value of that key, keeping the file's other keys.
        env = orchestra.BarrierEnv(t.TRAIN_SMALL, controller={"factor": 4})
        env.reset(seed=1)
        start = env.cluster["start_barrier_ms"]
        self.assertAlmostEqual(env.step(2)[4]["barrier_ms"], 4 * start)

    def test_another_move_or_interval_replaces_the_files_keys_of_the_old_one(self):
        # The file moves T x2 every 2 rounds (factor: 2, interval_rounds: 2): an additive move per
        # epoch, as a policy's controller may say, drops both instead of clashing with them.
        env = orchestra.BarrierEnv(t.TRAIN_SMALL, controller={"move": "additive", "unit_ms": 5, "interval": "epoch"})
        _, info = env.reset(seed=1)
        self.assertAlmostEqual(env.step(2)[4]["barrier_ms"], info["barrier_ms"] + 5)
        orchestra.BarrierEnv(t.TRAIN_SMALL, controller={"move": "additive"})
        # ... but a key given again with the other move is still refused, and the file's own
        # `factor` stays with a multiplicative move.
        with self.assertRaisesRegex(orchestra.ConfigError, "controller.factor: only a multiplicative move has a factor"):
            orchestra.BarrierEnv(t.TRAIN_SMALL, controller={"move": "additive", "factor": 2})
        env = orchestra.BarrierEnv(t.TRAIN_SMALL, controller={"move": "multiplicative"})
        _, info = env.reset(seed=1)
        self.assertAlmostEqual(env.step(2)[4]["barrier_ms"], 2 * info["barrier_ms"])

    def test_numpy_scalars_and_paths_are_the_values_they_stand_for(self):
        import pathlib
        for factor in (np.float32(4), np.int64(4), np.float64(4)):
            env = orchestra.BarrierEnv(t.TRAIN_SMALL, controller={"factor": factor, "interval_rounds": np.int64(3)})
            _, info = env.reset(seed=1)
            self.assertAlmostEqual(env.step(2)[4]["barrier_ms"], 4 * info["barrier_ms"])
        orchestra.BarrierEnv(experiments=[pathlib.Path(t.TASK_SMALL)], reward="time")
        orchestra.BarrierEnv(t.TRAIN_SMALL, controller={"state": "progress", "interval_rounds": np.int32(2)})
        with self.assertRaisesRegex(ValueError, "finite"):
            orchestra.BarrierEnv(t.TRAIN_SMALL, controller={"factor": np.float32("nan")})
        with self.assertRaisesRegex(TypeError, "expected None, a bool"):
            orchestra.BarrierEnv(t.TRAIN_SMALL, controller={"factor": np.array([4.0, 2.0])})

    def test_keywords_without_a_file_and_values_yaml_cannot_hold(self):
        env = orchestra.BarrierEnv(experiments=[t.TASK_SMALL], reward="time")
        self.assertEqual(env.reset(seed=1)[0].shape, (22,))
        with self.assertRaisesRegex(orchestra.ConfigError, r"^BarrierEnv\(experiments=\.\.\.\): experiments"):
            orchestra.BarrierEnv(experiments=[])
        with self.assertRaisesRegex(TypeError, "BarrierEnv.controller.factor"):
            orchestra.BarrierEnv(t.TRAIN_SMALL, controller={"factor": object()})
        with self.assertRaisesRegex(ValueError, "finite"):
            orchestra.BarrierEnv(t.TRAIN_SMALL, time_reward_rounds=float("nan"))
        with self.assertRaisesRegex(TypeError, "keys must be strings"):
            orchestra.BarrierEnv(t.TRAIN_SMALL, controller={1: 2})
        # A dict or list that holds itself: it recursed until the stack overflowed (a crash).
        itself = {}
        itself["factor"] = itself
        deep = []
        for _ in range(20000):
            deep = [deep]
        for value in (itself, {"factor": deep}):
            with self.assertRaisesRegex(ValueError, r"BarrierEnv\.controller\.factor.*: nested more than 64 levels deep"):
                orchestra.BarrierEnv(t.TRAIN_SMALL, controller=value)

    def test_a_keywords_file_is_relative_to_the_current_directory(self):
        # a3c.init_policy as experiments and surrogate: where Python's open() would look.
        here = os.getcwd()
        os.chdir(self.dir)
        try:
            with self.assertRaisesRegex(orchestra.ConfigError, f"a3c.init_policy: {self.dir}/missing.pt: "):
                orchestra.BarrierEnv(t.TRAIN_SMALL, a3c={"init_policy": "missing.pt"})
        finally:
            os.chdir(here)

    def test_a_closed_environment_still_says_its_shape(self):
        for config in (t.TRAIN_SMALL, None):
            env = orchestra.BarrierEnv(config, environment="toy") if config is None else orchestra.BarrierEnv(config)
            size, bounds = env._env.observation_size, env._env.bounds
            env.close()
            self.assertEqual(env._env.observation_size, size)  # not a crash on the closed environment
            self.assertEqual(env._env.bounds, bounds)

    def test_missing_and_malformed_files(self):
        with self.assertRaisesRegex(orchestra.ConfigError, "no such config file"):
            orchestra.BarrierEnv(os.path.join(self.dir, "none.yaml"))
        path = self.config("experiments: [unclosed\n")
        with self.assertRaisesRegex(orchestra.ConfigError, f"{path}:\\d+: not valid YAML"):
            orchestra.BarrierEnv(path)
        with self.assertRaisesRegex(orchestra.ConfigError, f"^{self.dir}: is a directory, not a config file$"):
            orchestra.BarrierEnv(self.dir)  # not libstdc++'s "basic_filebuf::underflow"
        with self.assertRaisesRegex(ValueError, "index must be >= 0"):
            orchestra.BarrierEnv(t.TRAIN_SMALL, index=-1)
        # Beyond C++'s int: one readable line, not pybind11's list of overloads.
        for call, says in ((lambda: orchestra.BarrierEnv(t.TRAIN_SMALL, index=2**63), "BarrierEnv: index must be below 2\\*\\*31"),
                           (lambda: orchestra.BarrierEnv(t.TRAIN_SMALL, threads=2**40), "BarrierEnv: threads must be below 257"),
                           (lambda: orchestra.load_policy(orchestra.PRETRAINED_POLICY, seed=2**63), "load_policy: seed must be below 2\\*\\*63"),
                           (lambda: orchestra.run(t.TASK_SMALL, seed=2**63), "run: seed must be below 2\\*\\*63"),
                           (lambda: orchestra.run(t.TASK_SMALL, threads=2**40), "run: threads must be below 257")):
            with self.assertRaisesRegex(ValueError, f"^{says}, got \\d+$"):
                call()
        with self.assertRaisesRegex(TypeError, "load_policy: seed must be an int"):
            orchestra.load_policy(orchestra.PRETRAINED_POLICY, seed=1.5)
        with self.assertRaisesRegex(ValueError, "threads"):
            orchestra.BarrierEnv(t.TRAIN_SMALL, threads=0)

    def test_run_and_read_results(self):
        bad = self.config(t.read(t.TASK_SMALL).replace("epochs: 3", "epochs: three"), "task.yaml")
        out = os.path.join(self.dir, "out")
        with self.assertRaisesRegex(orchestra.ConfigError, f"{bad}:\\d+: training.epochs"):
            orchestra.run(bad, out=out, quiet=True)
        self.assertFalse(os.path.exists(out))  # nothing written
        with self.assertRaisesRegex(orchestra.DataError, "no such directory"):
            orchestra.read_results(os.path.join(self.dir, "nowhere"))
        with self.assertRaisesRegex(ValueError, "seed or seeds"):
            orchestra.run(t.TASK_SMALL, out=out, seed=1, seeds=[1, 2])
        # As --seeds: a seed counted twice would narrow the interval the summary reports.
        with self.assertRaisesRegex(ValueError, "seed 1 is listed twice"):
            orchestra.run(t.TASK_SMALL, out=out, seeds=[1, 2, 1], quiet=True)
        self.assertFalse(os.path.exists(out))
        # A NUL byte ended the path where the system read it: out="a\0b" wrote into a.
        for call in (lambda: orchestra.run(t.TASK_SMALL, out=out + "\0elsewhere", quiet=True),
                     lambda: orchestra.run(t.TASK_SMALL + "\0.yaml", out=out, quiet=True),
                     lambda: orchestra.read_results(self.dir + "\0x"),
                     lambda: orchestra.load_policy(orchestra.PRETRAINED_POLICY + "\0x"),
                     lambda: orchestra.BarrierEnv(t.TRAIN_SMALL + "\0x")):
            with self.assertRaisesRegex(ValueError, "embedded null byte"):
                call()
        self.assertFalse(os.path.exists(out))


class ErrorKinds(unittest.TestCase):
    def test_every_kind_has_its_class_with_the_builtin_a_user_catches(self):
        builtin = {"ConfigError": ValueError, "DataError": ValueError, "UsageError": ValueError,
                   "PlanError": RuntimeError, "CommError": RuntimeError, "ProtocolError": RuntimeError,
                   "PlotError": RuntimeError}
        kinds = orchestra._core._error_kinds
        self.assertEqual(set(kinds.values()), set(builtin))
        for kind, name in kinds.items():
            cls = getattr(orchestra, name)
            with self.assertRaises(cls) as e:
                orchestra._core._raise_error(kind, f"x.yaml:3: key: a {kind}")
            self.assertIsInstance(e.exception, builtin[name])
            self.assertIsInstance(e.exception, orchestra.Error)
            self.assertEqual(str(e.exception), f"x.yaml:3: key: a {kind}")
            self.assertEqual(e.exception.kind, kind)
            self.assertEqual(e.exception.exit_code, 2 if builtin[name] is ValueError else 1)
            self.assertEqual(cls.__module__, "orchestra")
        with self.assertRaises(orchestra.Error) as e:
            orchestra._core._raise_error("some later kind", "m")
        self.assertEqual(type(e.exception), orchestra.Error)
        self.assertEqual(e.exception.kind, "unknown error")


class NeverACrash(unittest.TestCase):
    def test_a_process_survives_every_bad_call(self):
        # In a child, so that a crash would show as a signal rather than end this test run.
        script = f"""
import orchestra, numpy as np
env = orchestra.BarrierEnv({t.TRAIN_SMALL!r})
caught = 0
try:
    env.step(1)  # before any reset
except Exception:
    caught += 1
calls = [lambda: env.reset(seed=-5), lambda: env.step("x"),
         lambda: orchestra.BarrierEnv("/nonexistent.yaml"), lambda: orchestra.load_policy("/nonexistent.pt"),
         lambda: orchestra.read_results("/nonexistent"), lambda: orchestra.run("/nonexistent.yaml")]
env.reset(seed=1)
calls += [lambda: env.step(5), lambda: orchestra.load_policy(orchestra.PRETRAINED_POLICY).predict(np.zeros(3))]
for call in calls:
    try:
        call()
    except Exception:
        caught += 1
print("caught", caught, "of", len(calls) + 1)
"""
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("caught 9 of 9", run.stdout)


if __name__ == "__main__":
    t.main()
