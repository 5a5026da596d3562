"""orchestra.run writes the files `orchestra run` writes (the same bytes, wall_clock aside), and
orchestra.read_results gives them back as pandas DataFrames and dicts, for one seed and several."""
import filecmp
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest

import orchestra_testing as t

t.require("pandas")

import pandas  # noqa: E402

import orchestra  # noqa: E402

EXPERIMENT = """name: python_run
seed: 5
data:
  dataset: synthetic
  synthetic: {train: 256, test: 128, side: 6}
model: {arch: mlp, hidden: [16]}
training: {global_batch: 32, epochs: 2, target_accuracy: 0.6, eval_every_rounds: 4}
cluster:
  workers:
    - {name: fast, time_model: {coefficients: [1, 0.1]}, max_batch: 64, noise: 0.05}
    - {name: slow, time_model: {coefficients: [3, 0.4]}, max_batch: 64, noise: 0.05}
policies:
  - dsgd
  - {name: local-sgd, label: local-sgd-h4, H: 4}
  - orchestra-lcm
"""


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def files_under(root):
    out = []
    for folder, _, names in os.walk(root):
        out += [os.path.relpath(os.path.join(folder, n), root) for n in names]
    return sorted(out)


class Run(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.config = t.write(os.path.join(cls.tmp.name, "python_run.yaml"), EXPERIMENT)
        cls.python_out = os.path.join(cls.tmp.name, "from_python")
        cls.results = orchestra.run(cls.config, out=cls.python_out, seed=3, quiet=True)
        cls.cli_out = os.path.join(cls.tmp.name, "from_cli")
        run = subprocess.run([t.BINARY, "run", cls.config, "--out", cls.cli_out, "--seed", "3", "--quiet"],
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_same_files_as_orchestra_run(self):
        names = files_under(self.python_out)
        self.assertEqual(names, files_under(self.cli_out))
        self.assertIn("comparison.md", names)
        self.assertIn("orchestra-lcm/rounds.csv", names)
        for name in names:
            a, b = os.path.join(self.python_out, name), os.path.join(self.cli_out, name)
            if name.endswith("summary.json"):
                ja, jb = read_json(a), read_json(b)
                ja.pop("wall_clock", None), jb.pop("wall_clock", None)
                self.assertEqual(ja, jb, name)
            elif name.endswith("config.json"):
                self.assertEqual(read_json(a), read_json(b), name)
            else:
                self.assertTrue(filecmp.cmp(a, b, shallow=False), name)

    def test_read_results_gives_dataframes_and_dicts(self):
        r = self.results
        self.assertEqual(r.dir, self.python_out)
        self.assertEqual(r.runs, ["from_python"])
        self.assertEqual(r.policies, ["dsgd", "local-sgd-h4", "orchestra-lcm"])
        self.assertIsInstance(r.epochs, pandas.DataFrame)
        for table, name in ((r.epochs, "epochs.csv"), (r.evals, "evals.csv"), (r.rounds, "rounds.csv"),
                            (r.iterations, "iterations.csv")):
            self.assertEqual(list(table.columns[:1]), ["policy"])
            for label in r.policies:
                expected = pandas.read_csv(os.path.join(self.python_out, label, name))
                got = table[table.policy == label].drop(columns="policy").reset_index(drop=True)
                # The same numbers; a column of whole numbers in one policy's file and fractions in
                # another's is float64 once concatenated.
                pandas.testing.assert_frame_equal(got, expected, check_dtype=False, check_exact=True)
        self.assertEqual(len(r.epochs[r.epochs.policy == "dsgd"]), 2)
        for label in r.policies:
            self.assertEqual(r.summaries[label], read_json(os.path.join(self.python_out, label, "summary.json")))
            self.assertEqual(r.configs[label], read_json(os.path.join(self.python_out, label, "config.json")))
        # summary's policy column is the label, as the other tables' (summary.json's own policy,
        # the registry name, stays in summaries)
        self.assertEqual(list(r.summary.policy), r.policies)
        self.assertEqual(r.summaries["local-sgd-h4"]["policy"], "local-sgd")
        self.assertEqual(list(r.summary.final_accuracy), [r.summaries[p]["final_accuracy"] for p in r.policies])
        self.assertEqual(r.comparison, t.read(os.path.join(self.python_out, "comparison.md")))
        self.assertIsNone(r.train)
        # One policy's folder reads alone.
        one = orchestra.read_results(os.path.join(self.python_out, "local-sgd-h4"))
        self.assertEqual(one.policies, ["local-sgd-h4"])

    def test_a_damaged_file_is_a_data_error_naming_it(self):
        cases = [("config.json", "{not json", "config.json:1: not valid JSON"),
                 ("config.json", b"{\"a\": \"\xff\"}", "config.json: not UTF-8"),
                 ("summary.json", b"\xff\xfe{}", "summary.json: not valid JSON .*\ufffd"),  # the C++ reader's, its byte replaced
                 ("iterations.csv", "", "iterations.csv: empty"),
                 ("rounds.csv", "round,epoch\n1,2,3,4\n", "rounds.csv:2: 4 cells, the header has 2"),
                 ("epochs.csv", None, "epochs.csv")]
        for name, content, message in cases:
            with self.subTest(name), tempfile.TemporaryDirectory() as tmp:
                folder = shutil.copytree(os.path.join(self.python_out, "dsgd"), os.path.join(tmp, "dsgd"))
                path = os.path.join(folder, name)
                if content is None:  # a row cut short in a file the C++ reader lets pass
                    content = t.read(path).rstrip("\n") + "\n7\n"
                with open(path, "wb") as f:
                    f.write(content if isinstance(content, bytes) else content.encode())
                with self.assertRaisesRegex(orchestra.DataError, message):
                    r = orchestra.read_results(folder)
                    r.rounds, r.iterations

    def test_run_does_not_change_what_torch_draws_next(self):
        t.check_torch_draws_unchanged(self, lambda: orchestra.run(self.config, out=os.path.join(self.tmp.name, "torch"), seed=2,
                                                                 quiet=True))

    def test_several_seeds_as_run_seeds(self):
        out = os.path.join(self.tmp.name, "seeds")
        r = orchestra.run(self.config, out=out, seeds=[1, 2], quiet=True)
        self.assertEqual(r.runs, ["seed-1", "seed-2"])
        self.assertEqual(list(r.epochs.columns[:2]), ["run", "policy"])
        self.assertEqual(sorted(set(r.epochs.run)), ["seed-1", "seed-2"])
        self.assertIn("seed-2/orchestra-lcm", r.summaries)
        self.assertTrue(os.path.isfile(os.path.join(out, "comparison.csv")))
        self.assertIsNotNone(r.comparison)
        # seed 1 of several is the single run with seed 1.
        single = orchestra.run(self.config, out=os.path.join(self.tmp.name, "one"), seed=1, quiet=True)
        pandas.testing.assert_frame_equal(
            r.epochs[r.epochs.run == "seed-1"].drop(columns="run").reset_index(drop=True), single.epochs)

    def test_a_folder_of_other_results_is_refused_before_anything_runs_and_overwrite_replaces_them(self):
        out = os.path.join(self.tmp.name, "claimed")
        orchestra.run(self.config, out=out, seed=3, quiet=True)
        dsgd = read_json(os.path.join(out, "dsgd", "summary.json"))
        other = t.write(os.path.join(self.tmp.name, "other.yaml"), EXPERIMENT.replace("name: python_run", "name: other")
                        .replace("  - {name: local-sgd, label: local-sgd-h4, H: 4}\n", ""))
        # Another experiment into it: refused as `orchestra run` refuses it, its results kept as they were
        # (they were read back as the other experiment's before).
        with self.assertRaisesRegex(orchestra.Error, "holds other results: .*dsgd.*add --overwrite") as caught:
            orchestra.run(other, out=out, seed=4, quiet=True)
        self.assertEqual(caught.exception.kind, "results folder")
        self.assertEqual(read_json(os.path.join(out, "dsgd", "summary.json")), dsgd)
        replaced = orchestra.run(other, out=out, seed=4, quiet=True, overwrite=True)
        self.assertEqual(replaced.policies, ["dsgd", "orchestra-lcm"])
        self.assertFalse(os.path.exists(os.path.join(out, "local-sgd-h4")))
        # Fewer seeds than a multi-seed run left: refused too, then replaced.
        seeds = os.path.join(self.tmp.name, "claimed-seeds")
        orchestra.run(self.config, out=seeds, seeds=[1, 2], quiet=True)
        with self.assertRaisesRegex(orchestra.Error, "seed-2: a seed of a multi-seed run"):
            orchestra.run(self.config, out=seeds, seeds=[1], quiet=True)
        self.assertEqual(orchestra.run(self.config, out=seeds, seeds=[1], quiet=True, overwrite=True).runs, ["seed-1"])

    def test_a_second_run_in_another_thread_is_refused_at_once(self):
        # Both would seed libtorch's one default generator: their results were not the command line's.
        long_run = t.write(os.path.join(self.tmp.name, "long.yaml"), EXPERIMENT.replace("epochs: 2", "epochs: 400")
                           .replace("name: python_run", "name: long_run"))
        first = threading.Thread(target=lambda: orchestra.run(long_run, out=os.path.join(self.tmp.name, "long"), seed=1, quiet=True))
        first.start()
        try:
            time.sleep(0.5)
            self.assertTrue(first.is_alive())
            with self.assertRaisesRegex(RuntimeError, "another orchestra.run is running in this process"):
                orchestra.run(self.config, out=os.path.join(self.tmp.name, "second"), seed=1, quiet=True)
        finally:
            first.join(timeout=600)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "second")))

    def test_ctrl_c_stops_a_run_and_the_next_run_is_whole(self):
        # The run held the GIL released for its whole length: Ctrl-C waited for its end (hours).
        long_run = t.write(os.path.join(self.tmp.name, "interrupted.yaml"), EXPERIMENT.replace("epochs: 2", "epochs: 50000")
                           .replace("name: python_run", "name: interrupted"))
        out = os.path.join(self.tmp.name, "interrupted")
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        started = time.monotonic()
        timer.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                orchestra.run(long_run, out=out, seed=1, quiet=True)
        finally:
            timer.cancel()
        self.assertLess(time.monotonic() - started, 30)
        # The policy it stopped in left no folder (each appears whole or not at all), nor a lock held.
        self.assertFalse(os.path.exists(os.path.join(out, "dsgd")))
        again = orchestra.run(self.config, out=os.path.join(self.tmp.name, "after_interrupt"), seed=3, quiet=True)
        pandas.testing.assert_frame_equal(again.epochs, self.results.epochs)

    def test_a_run_leaves_torch_threads_as_they_were(self):
        try:
            import torch
        except ImportError as e:
            self.skipTest(f"torch does not import: {e}")
        before = torch.get_num_threads()
        orchestra.run(self.config, out=os.path.join(self.tmp.name, "threads"), seed=3, threads=before + 1, quiet=True)
        self.assertEqual(torch.get_num_threads(), before)


if __name__ == "__main__":
    t.main()
