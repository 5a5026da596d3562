"""The examples of experiments/python/examples/ run as a user runs them: the random agent,
REINFORCE in PyTorch, which must end with a better held-out return than random actions on the
same episodes, the climb-then-hold schedules of climb_ceiling.py, the two-phase schedules of schedule_ceiling.py,
the tuned schedule of tuned_schedule.py and the static T tuned on k seeds of static_t_selection.py."""
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

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

    def test_schedule_ceiling_switches_T_when_told_and_judges_with_the_seeds_left_out(self):
        spec = importlib.util.spec_from_file_location("schedule_ceiling", os.path.join(EXAMPLES, "schedule_ceiling.py"))
        sc = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sc)
        task = os.path.join(t.SOURCE_DIR, "configs", "python_task.yaml")
        at_1, at_2, at_4 = sc.make_env(task, 1.0), sc.make_env(task, 2.0), sc.make_env(task, 4.0)
        held, start = sc.episode(at_1, 1, final_barrier=True)
        self.assertIsNotNone(held)
        # no switch before the end: the static T; a switch at 0 s: the first decision comes before
        # round 0, so one move up is the static 2 T*, and two moves (one a round) end at 4 T*
        self.assertEqual(sc.episode(at_1, 1, moves_after=2, switch_s=math.inf, final_barrier=True), (held, start))
        self.assertEqual(sc.episode(at_1, 1, moves_after=1, switch_s=0.0), sc.episode(at_2, 1))
        self.assertEqual(sc.episode(at_2, 1, moves_after=-1, switch_s=0.0), held)
        self.assertAlmostEqual(sc.episode(at_1, 1, moves_after=2, switch_s=0.0, final_barrier=True)[1], 4 * start,
                               delta=1e-9 * start)
        self.assertAlmostEqual(sc.episode(at_4, 1, moves_after=-2, switch_s=0.0, final_barrier=True)[1], start,
                               delta=1e-9 * start)
        # a switch halfway: T* up to the switch, twice T* from it on
        late, end = sc.episode(at_1, 1, moves_after=1, switch_s=0.5 * held, final_barrier=True)
        self.assertAlmostEqual(end, 2 * start, delta=1e-9 * start)
        self.assertNotEqual(late, sc.episode(at_2, 1))

        # the three ratios on a made-up cluster: two static T and one schedule, seeds 1-3
        made_up = {"static": [{"c": 1.0, "times": {1: 10.0, 2: 10.0, 3: 10.0}},
                              {"c": 2.0, "times": {1: 8.0, 2: 12.0, 3: None}}],
                   "schedules": [{"from": 1.0, "to": 2.0, "switch": 0.5, "times": {1: 9.0, 2: 9.0, 3: 11.0}}]}
        r = sc.compare(made_up, [1, 2, 3])
        # per seed: 8/8, 9/10, 10/10; per cluster (c = 2 misses seed 3): the schedule 9, 9, 11
        # against 10 every seed; left out: seeds 1 and 2 are judged by the schedule against c = 1
        # (9/10 each), seed 3 by the schedule against c = 2, which misses it: counted, not averaged
        self.assertAlmostEqual(r["per_seed"], (1.0 * 0.9 * 1.0) ** (1 / 3))
        self.assertAlmostEqual(r["per_cluster"], (0.9 * 0.9 * 1.1) ** (1 / 3))
        self.assertAlmostEqual(r["other_seeds"], 0.9)
        self.assertEqual((r["other_seeds_static_misses"], r["other_seeds_schedule_misses"]), (1, 0))
        self.assertEqual(r["best_schedule"], "1 -> 2 at 0.5")

        out = example("schedule_ceiling.py", task, "--seeds", "1,2", "--span", "1", "--switches", "0.5")
        [cluster] = out["results"]
        grid = [s["c"] for s in cluster["static"]]
        self.assertIn(cluster["centre"], grid)
        self.assertGreaterEqual(len(grid), 9)
        centre = grid.index(cluster["centre"])
        self.assertTrue(centre >= 1 and centre + 1 < len(grid))  # its neighbours swept (on past an end if need be)
        self.assertEqual(len(cluster["schedules"]), 6)  # T_a -> T_b among the centre and its neighbours, one switch
        self.assertLessEqual(cluster["per_seed"], 1.0)
        self.assertLessEqual(cluster["per_cluster"], 1.0)

    def test_tuned_schedule_anchors_on_the_static_T_of_the_other_seeds_and_schedules_past_the_threshold(self):
        spec = importlib.util.spec_from_file_location("tuned_schedule", os.path.join(EXAMPLES, "tuned_schedule.py"))
        ts = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ts)
        self.assertEqual(ts.parse_shape("2,0.5,0.25"), (2.0, 0.5, 0.25))
        with self.assertRaises(ValueError):
            ts.parse_shape("3,1,0.5")  # x2 moves reach powers of two only
        self.assertEqual(ts.t_975(2), 4.303)
        self.assertAlmostEqual(ts.t_975(42), 2.018, places=3)  # past the table: 43 clusters
        self.assertAlmostEqual(ts.t_975(120), 1.980, places=3)

        # made-up rows: the schedule 9 s against T_o's 10 s, a schedule miss, a T_o miss, both missing
        # (the schedule's miss ran out of budget at 16 s: 1.6x T_o's time, counted in `bounded` only)
        rows = [{"T_o": 1.0, "static_s": 10.0, "shapes": {"a": 9.0}},
                {"T_o": 1.0, "static_s": 10.0, "shapes": {"a": None}, "budget_s": {"a": 16.0}},
                {"T_o": 1.0, "static_s": None, "shapes": {"a": 8.0}}, {"T_o": 1.0, "static_s": None, "shapes": {"a": None}},
                {"T_o": None, "static_s": None, "shapes": {}}]
        r = ts.ratio_over_seeds(rows, "a")
        self.assertEqual((r["ratio"], r["schedule_misses"], r["static_misses"]), (0.9, 1, 1))
        self.assertAlmostEqual(r["bounded"], (0.9 * 1.6) ** 0.5)
        # the recipe: the shape where scheduled, T_o (ratio 1) elsewhere
        made_up = [{"scheduled": True, "ratios": {"2,1,0.5": {"ratio": 0.8, "bounded": 0.9, "schedule_misses": 1, "static_misses": 0}}},
                   {"scheduled": False, "ratios": {"2,1,0.5": {"ratio": 1.25, "bounded": 1.25, "schedule_misses": 0, "static_misses": 0}}}]
        summary = ts.summarize(made_up, [(2.0, 1.0, 0.5)])
        self.assertAlmostEqual(summary["2,1,0.5 scheduled"]["ratio"], 0.8)
        self.assertAlmostEqual(summary["2,1,0.5 scheduled"]["bounded"]["ratio"], 0.9)
        self.assertEqual(summary["2,1,0.5 scheduled"]["schedule_misses"], 1)
        self.assertAlmostEqual(summary["2,1,0.5 static"]["ratio"], 1.25)
        self.assertAlmostEqual(summary["recipe"]["ratio"], 0.8 ** 0.5)
        self.assertAlmostEqual(summary["recipe"]["bounded"]["ratio"], 0.9 ** 0.5)
        self.assertEqual(summary["recipe"]["schedule_misses"], 1)  # the scheduled cluster's only

        task = os.path.join(t.SOURCE_DIR, "configs", "python_task.yaml")
        seeds = [1, 2, 3]
        out = example("tuned_schedule.py", task, "--seeds", "1,2,3", "--shape", "2,1,0.5",
                      "--also", "1,1,0;2,2,0;2,1,0;2,1,1e9", "--threshold", "0.5")
        [cluster] = out["results"]
        self.assertTrue(cluster["scheduled"])  # the task's all-reduce costs about a step, above 0.5
        static = {s["c"]: {int(k): v for k, v in s["times"].items()} for s in cluster["static"]}
        for row in cluster["seeds"]:
            rest = [x for x in seeds if x != row["seed"]]
            best = min(static, key=lambda c: np.mean([math.log(static[c][x]) for x in rest]))
            self.assertEqual(row["T_o"], best)  # tuned without the seed judged
            self.assertEqual(row["static_s"], static[best][row["seed"]])
            shapes = row["shapes"]
            self.assertEqual(shapes["1,1,0"], row["static_s"])  # no move: T_o itself
            self.assertEqual(shapes["2,2,0"], static[2 * best][row["seed"]])  # the static 2 T_o
            self.assertEqual(shapes["2,1,0"], row["static_s"])  # halved before round 0: T_o
            self.assertEqual(shapes["2,1,1e+09"], static[2 * best][row["seed"]])  # never halved: 2 T_o
        self.assertEqual(cluster["ratios"]["1,1,0"]["ratio"], 1.0)
        self.assertAlmostEqual(out["summary"]["recipe"]["ratio"], cluster["ratios"]["2,1,0.5"]["ratio"])
        below = example("tuned_schedule.py", task, "--seeds", "1,2", "--threshold", "1e9")
        self.assertFalse(below["results"][0]["scheduled"])
        self.assertEqual(below["summary"]["recipe"]["ratio"], 1.0)

    def test_tuned_schedule_judges_another_workload_on_the_same_clusters(self):
        spec = importlib.util.spec_from_file_location("tuned_schedule", os.path.join(EXAMPLES, "tuned_schedule.py"))
        ts = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ts)
        task = os.path.join(t.SOURCE_DIR, "configs", "python_task.yaml")
        with tempfile.TemporaryDirectory() as directory:
            copy = ts.with_workload(task, directory, epochs=1, target=1.0)
            with open(task) as f, open(copy) as g:
                before, after = f.read(), g.read()
            self.assertIn("within 4 epochs", after)  # comments left alone
            self.assertIn("epochs: 1, target_accuracy: 1.0}", after)  # the flow-style mapping, edited in place
            self.assertEqual(before.replace("epochs: 4, target_accuracy: 0.9}", "epochs: 1, target_accuracy: 1.0}"), after)
            end = ts.run_to_end(ts.make_env(copy, 1.0), 1)
            self.assertEqual((end["epoch"], end["reached_target"]), (1, False))  # the copy's budget, its target out of reach
            bare = os.path.join(directory, "bare.yaml")
            with open(bare, "w") as f:
                f.write(before.replace("epochs: 4, ", ""))
            with self.assertRaises(ValueError):
                ts.with_workload(bare, directory, epochs=2)
            # a second experiment of the same name (another suite's): its copy must not replace the first's
            os.mkdir(os.path.join(directory, "other"))
            namesake = os.path.join(directory, "other", "python_task.yaml")
            with open(namesake, "w") as f:
                f.write(before.replace("bandwidth_gbps: 1,", "bandwidth_gbps: 0.25,"))
            # a lower target on the same seeds: every run is the same run until it stops earlier
            default = example("tuned_schedule.py", task, "--seeds", "1,2", "--threshold", "1e9")
            lower = example("tuned_schedule.py", task, namesake, "--seeds", "1,2", "--threshold", "1e9", "--target", "0.6")
        self.assertNotEqual(lower["results"][0]["static"], lower["results"][1]["static"])  # each ran its own copy
        self.assertEqual(lower["workload"], {"epochs": None, "target_accuracy": 0.6})
        times = lambda out: {(s["c"], k): v for s in out["results"][0]["static"] for k, v in s["times"].items()}  # noqa: E731
        at_default, at_lower = times(default), times(lower)
        for key, time in at_default.items():
            if time is not None and key in at_lower:
                self.assertIsNotNone(at_lower[key])
                self.assertLessEqual(at_lower[key], time)
        self.assertTrue(any(at_lower.get(k) is not None and at_lower[k] < v for k, v in at_default.items() if v is not None))

    def test_static_t_selection_tunes_on_k_seeds_as_evaluate_tunes_on_the_other_seeds(self):
        spec = importlib.util.spec_from_file_location("static_t_selection", os.path.join(EXAMPLES, "static_t_selection.py"))
        sts = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sts)
        # made-up sweep (T: seed: (time, reached)): T 1 is best on seeds 1 and 3, T 2 on seed 2; the
        # oracle is 10 s on every seed; ties go to the smaller T
        sweep = {1.0: {1: (10.0, True), 2: (20.0, True), 3: (10.0, True)},
                 2.0: {1: (20.0, True), 2: (10.0, True), 3: (20.0, True)}}
        oracle = sts.oracles(sweep)
        self.assertEqual(oracle, {1: 10.0, 2: 10.0, 3: 10.0})
        self.assertEqual(sts.choose(sweep, (2, 3)), 1.0)  # equal mean logs: the smaller T
        self.assertEqual(sts.choose(sweep, (2,)), 2.0)
        rng = __import__("random").Random(1)
        # k = 1: of the six (judged, tuning) pairs, four pick the T that is 2x the oracle on the seed judged
        self.assertAlmostEqual(math.exp(sts.tuned_log_ratio(sweep, oracle, 1, rng)[0]), 2 ** (4 / 6))
        self.assertAlmostEqual(math.exp(sts.tuned_log_ratio(sweep, oracle, 2, rng)[0]), 2 ** (1 / 3))  # seed 2 only
        self.assertAlmostEqual(math.exp(sts.hindsight_log_ratio(sweep, oracle)), 2 ** (1 / 3))
        # the fewest misses first: a miss that stopped sooner does not win
        self.assertEqual(sts.choose({1.0: {1: (5.0, False)}, 2.0: {1: (50.0, True)}}, (1,)), 2.0)
        self.assertEqual(len(sts.subsets(list(range(16)), 8, rng)), sts.MAX_SUBSETS)  # 12,870 subsets: 2,000 drawn
        self.assertEqual(len(sts.subsets(list(range(11)), 2, rng)), 55)
        self.assertAlmostEqual(sts.spread_at_hindsight_t(sweep, oracle), np.std(np.log([10.0, 20.0, 10.0]), ddof=1))

        # another judge of time to target, read off the evaluations: one lucky evaluation at 2 s
        # passes 0.8 alone, the mean of three around it does not; the run's level is only held from 4 s
        import pandas
        evals = pandas.DataFrame({"sim_time_s": [1.0, 2.0, 3.0, 4.0, 5.0], "accuracy": [0.7, 0.81, 0.7, 0.8, 0.85],
                                  "loss": [0.9, 0.5, 0.8, 0.6, 0.4]})
        self.assertEqual(sts.Judge("accuracy:0.8").time(evals, 6.0), (2.0, True, False))
        self.assertEqual(sts.Judge("accuracy:0.8", smooth=1).time(evals, 6.0), (5.0, True, False))  # (0.8 + 0.85) / 2
        self.assertEqual(sts.Judge("loss:0.55").time(evals, 6.0), (2.0, True, False))
        self.assertEqual(sts.Judge("loss:0.55", smooth=1).time(evals, 6.0), (5.0, True, False))  # (0.6 + 0.4) / 2
        # a level the raw evaluations reach but the smoothed ones do not within the run: a miss, cut short
        self.assertEqual(sts.Judge("accuracy:0.84", smooth=1).time(evals, 6.0), (6.0, False, True))
        self.assertEqual(sts.Judge("accuracy:0.9").time(evals, 6.0), (6.0, False, False))
        for bad in ("accuracy", "speed:0.8", "accuracy:"):
            with self.assertRaises(ValueError):
                sts.Judge(bad)
        with self.assertRaises(ValueError):
            sts.Judge("loss:0.5", smooth=-1)

        # an evaluation of two small clusters on four seeds: tuned on 3 seeds is evaluate's own
        # fixed-t-other-seeds, cluster by cluster and overall, and each controller's ratio is evaluate's
        with tempfile.TemporaryDirectory() as tmp:
            task = os.path.join(t.SOURCE_DIR, "configs", "python_task.yaml")
            with open(task) as f:
                text = f.read()
            other = os.path.join(tmp, "python_task_b.yaml")
            with open(other, "w") as f:
                f.write(text.replace("name: python_task", "name: python_task_b").replace("bandwidth_gbps: 1,", "bandwidth_gbps: 0.25,"))
            out_dir = os.path.join(tmp, "eval")
            run = subprocess.run([t.BINARY, "evaluate", os.path.join(t.SOURCE_DIR, "pretrained", "orchestra-a3c.pt"), task, other,
                                  "--seeds", "1-4", "--sweep-ms", "2,8,32", "--quiet", "--out", out_dir],
                                 capture_output=True, text=True, timeout=600)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            out = example("static_t_selection.py", out_dir, "--tuning", "1,2")
            # the runs' target read off their evals.csv is their own time to target
            judged = example("static_t_selection.py", out_dir, "--tuning", "1,2", "--judge", "accuracy:0.9")
            smoothed = example("static_t_selection.py", out_dir, "--tuning", "1,2", "--judge", "accuracy:0.9", "--smooth", "2")
            # one seed's folder: a clear line, not a traceback
            one = os.path.join(tmp, "one", "python_task")
            os.makedirs(one)
            shutil.copy(os.path.join(out_dir, "python_task", "evaluate.yaml"), one)
            shutil.copytree(os.path.join(out_dir, "python_task", "seed-1"), os.path.join(one, "seed-1"))
            single = subprocess.run([sys.executable, os.path.join(EXAMPLES, "static_t_selection.py"), os.path.dirname(one)],
                                    capture_output=True, text=True, timeout=120)
            rows = pandas.read_csv(os.path.join(out_dir, "evaluation.csv"))
            overall = pandas.read_csv(os.path.join(out_dir, "evaluation_overall.csv")).set_index("controller")
        self.assertNotEqual(single.returncode, 0)
        self.assertIn("one seed's runs", single.stderr)
        self.assertNotIn("Traceback", single.stderr)
        self.assertEqual((out["clusters"], out["seeds"], out["most_seeds"]), (2, 4, 3))
        self.assertEqual(sorted(out["tuned"]), ["1", "2", "3"])
        per_cluster = {r["cluster"]: r for r in out["per_cluster"]}
        for (cluster, controller), ratios in rows.groupby(["cluster", "controller"])["ratio"]:
            name = "tuned_on_3" if controller == "fixed-t-other-seeds" else controller
            self.assertAlmostEqual(per_cluster[cluster][name], math.exp(np.log(ratios).mean()), places=6)
        self.assertAlmostEqual(out["tuned"]["3"]["over_oracle"]["geomean"], overall.loc["fixed-t-other-seeds", "ratio"], places=6)
        self.assertAlmostEqual(out["controllers"]["orchestra-a3c"]["over_tuned_on_3"]["geomean"],
                               overall.loc["orchestra-a3c", "vs_fixed_t_other_seeds"], places=6)
        self.assertEqual(out["tuned"]["3"]["over_most_seeds"]["geomean"], 1.0)
        self.assertLess(out["tuned"]["1"]["over_oracle"]["low"], out["tuned"]["1"]["over_oracle"]["high"])  # two clusters: an interval
        self.assertEqual((judged["judge"], judged["cut_short"], judged["runs"]), ("accuracy:0.9, smooth 0", 0, out["runs"]))
        self.assertEqual(out["cut_short"], 0)
        # the same figures, up to evals.csv's nine significant digits
        def numbers(tree):
            if isinstance(tree, dict):
                return [x for key in sorted(tree) for x in numbers(tree[key])]
            if isinstance(tree, list):
                return [x for item in tree for x in numbers(item)]
            return [tree] if isinstance(tree, (int, float)) else [str(tree)]
        for key in ("tuned", "hindsight", "controllers", "per_cluster", "median_spread"):
            ours, theirs = numbers(judged[key]), numbers(out[key])
            self.assertEqual(len(ours), len(theirs), key)
            for a, b in zip(ours, theirs):
                if isinstance(a, str):
                    self.assertEqual(a, b, key)
                else:
                    self.assertAlmostEqual(a, b, places=6, msg=key)
        self.assertEqual(smoothed["judge"], "accuracy:0.9, smooth 2")
        self.assertNotEqual(smoothed["per_cluster"], out["per_cluster"])  # the mean of five evaluations moves some times


if __name__ == "__main__":
    t.main()
