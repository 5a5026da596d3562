#!/usr/bin/env python3
"""Does a barrier schedule tuned the way a static T is tuned beat that static T? The recipe: sweep
the static T on some seeds and take the best one, T_o (what `fixed-t-other-seeds` of `orchestra
evaluate` runs); then, only where one all-reduce costs at least THRESHOLD steps of the slowest
worker, run KA x T_o until FRACTION of T_o's time to the target on those seeds, then KB x T_o.
Elsewhere T_o itself. schedule_ceiling.py found that shape (2 T_o, halved at half the run) and the
split by all-reduce cost after the fact on one suite; this script judges both on other clusters.

usage (from the repository root, after scripts/install.sh):
  PYTHONPATH=build/python python3 experiments/python/examples/tuned_schedule.py EXPERIMENT.yaml [...] \
      [--seeds 1,2,3,4] [--shape 2,1,0.5] [--also 1,0.5,0.5;2,0.5,0.5] [--threshold 4] \
      [--epochs N] [--target ACCURACY] [--json]

For each EXPERIMENT (a cluster and workload, as configs/heldout_thirteenth/drawn-40001.yaml) and
each seed s judged: T_o is the static T = c x T* (schedule_ceiling.py's sweep) with the lowest mean
log time over the other seeds, t_o its geometric mean time over them; the schedule starts at
KA x T_o and moves x2 a round from the first decision at or after FRACTION x t_o until KB x T_o.
The ratio judged is the schedule's time on s over T_o's time on s. It prints, per cluster, the
all-reduce cost in slowest steps (all-reduce time over the slowest worker's batch time as probed
at the start, known before any round), whether the recipe schedules there, and each shape's
ratio (geometric mean over the seeds); then the geometric means over the clusters with their 95%
intervals, for the clusters at or above the threshold, those below it, and the recipe over all.
A miss on the seed judged is counted, not averaged: the schedule's (it missed, T_o did not) or T_o's;
where the schedule missed, the means are also given with its time taken at the budget's end.
--epochs and --target judge another workload on the same clusters: each experiment is run from a
copy whose training.epochs (the budget) and training.target_accuracy are replaced.
"""
import argparse
import json
import math
import os
import re
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from schedule_ceiling import best_index, log_or_inf, make_env, run_to_end, static_sweep  # noqa: E402

import orchestra  # noqa: E402

# Student's t, 0.975 quantile, by degrees of freedom (a 95% two-sided interval over few clusters).
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
         11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
         20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048,
         29: 2.045, 30: 2.042}


def t_975(df):
    """Student's t 0.975 quantile: the table up to 30 degrees of freedom, beyond it the normal
    quantile with its first two corrections in 1/df (Abramowitz & Stegun 26.7.5; 2.018 at 42)."""
    if df in T_975:
        return T_975[df]
    z = 1.959964
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


def parse_shape(text):
    """'KA,KB,FRACTION' with KA and KB powers of two (the schedule moves x2 a round)."""
    ka, kb, fraction = (float(x) for x in text.split(","))
    for k in (ka, kb):
        if k <= 0 or abs(math.log2(k) - round(math.log2(k))) > 1e-9:
            raise ValueError(f"shape {text!r}: {k:g} is not a power of two")
    if fraction < 0:
        raise ValueError(f"shape {text!r}: the switch fraction must be >= 0")
    return ka, kb, fraction


def shape_label(shape):
    return "{:g},{:g},{:g}".format(*shape)


def with_workload(experiment, directory, epochs=None, target=None):
    """A copy of the experiment file in `directory` with training.epochs and/or
    training.target_accuracy replaced (block or flow style; comments left alone); the path of the
    copy. Each key replaced must appear exactly once outside comments, or ValueError names the file."""
    with open(experiment) as f:
        lines = f.read().split("\n")
    for key, value in (("epochs", epochs), ("target_accuracy", target)):
        if value is None:
            continue
        pattern = re.compile(r"(?<![\w-])" + key + r":\s*[0-9.eE+-]+")
        found = 0
        for i, line in enumerate(lines):
            code, hash_, comment = line.partition("#")
            code, n = pattern.subn(f"{key}: {value!r}", code)  # repr: every digit of the value
            found += n
            lines[i] = code + hash_ + comment
        if found != 1:
            raise ValueError(f"{experiment}: training.{key} appears {found} times, expected once")
    path = os.path.join(directory, os.path.basename(experiment))
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def comm_in_slowest_steps(env, seed):
    """The all-reduce time over the slowest worker's batch time, as the controller probes them at
    the start of a run (info["cluster"] of the first observation)."""
    _, info = env.reset(seed=seed)
    cluster = info["cluster"]
    return cluster["comm_ms"] / max(w["batch_ms"] for w in cluster["workers"])


def mean_interval(logs):
    """Geometric mean of exp(logs) and its 95% interval (Student's t over the entries)."""
    logs = np.asarray(logs, dtype=float)
    m = float(logs.mean())
    if len(logs) < 2:
        return math.exp(m), math.nan, math.nan
    h = t_975(len(logs) - 1) * float(logs.std(ddof=1)) / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - h), math.exp(m + h)


def run_cluster(experiment, seeds, shapes, threshold, verbose=True):
    grid, envs, static, centre = static_sweep(experiment, seeds, span=1)
    name = os.path.splitext(os.path.basename(experiment))[0]
    steps = comm_in_slowest_steps(envs[1.0], seeds[0])
    out = {"cluster": name, "comm_steps": steps, "scheduled": steps >= threshold,
           "static": [{"c": c, "times": static[c]} for c in grid], "seeds": []}
    starts = {}  # envs by start multiple of T*, made once
    for s in seeds:
        rest = [x for x in seeds if x != s]
        o = best_index([static[c] for c in grid], rest)
        row = {"seed": s, "T_o": None, "static_s": None, "shapes": {}, "budget_s": {}}
        if o is None:  # every static T missed the other seeds: nothing to anchor on
            out["seeds"].append(row)
            continue
        c_o = grid[o]
        t_o = math.exp(np.mean([math.log(static[c_o][x]) for x in rest]))
        row.update({"T_o": c_o, "t_o": t_o, "static_s": static[c_o][s]})
        for shape in shapes:
            ka, kb, fraction = shape
            start = c_o * ka
            if start not in starts:
                starts[start] = envs[start] if start in envs else make_env(experiment, start)
            moves = int(round(math.log2(kb / ka)))
            end = run_to_end(starts[start], s, moves_after=moves, switch_s=fraction * t_o)
            label = shape_label(shape)
            row["shapes"][label] = end["clock_ms"] / 1000.0 if end["reached_target"] else None
            if not end["reached_target"]:
                row["budget_s"][label] = end["clock_ms"] / 1000.0  # where the budget ran out
        out["seeds"].append(row)
    out["ratios"] = {shape_label(sh): ratio_over_seeds(out["seeds"], shape_label(sh)) for sh in shapes}
    if verbose:
        ratios = ", ".join(f"{k}: {v['ratio']:.3f}x" for k, v in out["ratios"].items())
        print(f"{name}: all-reduce {steps:.1f} slowest steps ({'scheduled' if out['scheduled'] else 'static'}); "
              f"over T_o: {ratios}", flush=True)
    return out


def ratio_over_seeds(rows, label):
    """Geometric mean over the seeds of the shape's time over T_o's, with the misses counted; and
    `bounded`: the same with each schedule miss taken at the budget's end (a time it would have
    needed at least, so a bound in the schedule's favour)."""
    logs, bounded, schedule_misses, static_misses = [], [], 0, 0
    for row in rows:
        if row["T_o"] is None:
            continue
        t_schedule, t_static = row["shapes"][label], row["static_s"]
        if t_static is None and t_schedule is None:
            continue
        if t_static is None:
            static_misses += 1
        elif t_schedule is None:
            schedule_misses += 1
            bounded.append(math.log(row["budget_s"][label] / t_static))
        else:
            logs.append(log_or_inf(t_schedule) - log_or_inf(t_static))
            bounded.append(logs[-1])
    ratio = math.exp(np.mean(logs)) if logs else math.nan
    return {"ratio": ratio, "bounded": math.exp(np.mean(bounded)) if bounded else math.nan,
            "schedule_misses": schedule_misses, "static_misses": static_misses}


def summarize(results, shapes):
    """Per shape, the geometric mean over clusters (and 95% interval) at or above the threshold,
    below it, and the recipe (the first shape where scheduled, T_o elsewhere) over every cluster;
    each also with the schedule's misses taken at the budget's end (`bounded`)."""

    def over(ratios):
        logs = [math.log(x) for x in ratios if math.isfinite(x)]
        return dict(zip(("ratio", "low", "high"), mean_interval(logs) if logs else (math.nan,) * 3)), len(logs)

    summary = {}
    for sh in shapes:
        label = shape_label(sh)
        for group, members in (("scheduled", [r for r in results if r["scheduled"]]),
                               ("static", [r for r in results if not r["scheduled"]])):
            plain, n = over([r["ratios"][label]["ratio"] for r in members])
            bounded, _ = over([r["ratios"][label]["bounded"] for r in members])
            summary[f"{label} {group}"] = {"clusters": n, "schedule_misses": sum(r["ratios"][label]["schedule_misses"] for r in members),
                                           **plain, "bounded": bounded}
    label = shape_label(shapes[0])
    plain, n = over([r["ratios"][label]["ratio"] if r["scheduled"] else 1.0 for r in results])
    bounded, _ = over([r["ratios"][label]["bounded"] if r["scheduled"] else 1.0 for r in results])
    misses = sum(r["ratios"][label]["schedule_misses"] for r in results if r["scheduled"])
    summary["recipe"] = {"clusters": n, "schedule_misses": misses, **plain, "bounded": bounded}
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiments", nargs="+")
    parser.add_argument("--seeds", default="1,2,3,4")
    parser.add_argument("--shape", default="2,1,0.5", help="KA,KB,FRACTION of the recipe (KA, KB powers of two)")
    parser.add_argument("--also", default="", help="more shapes, reported only: KA,KB,FRACTION;...")
    parser.add_argument("--threshold", type=float, default=4.0, help="schedule where the all-reduce costs this many slowest steps")
    parser.add_argument("--epochs", type=int, help="replace each experiment's training.epochs (its budget)")
    parser.add_argument("--target", type=float, help="replace each experiment's training.target_accuracy")
    parser.add_argument("--json", action="store_true", help="end with a line of JSON (the tests read it)")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    if len(seeds) < 2:
        parser.error("--seeds: at least two (T_o is tuned on the seeds not judged)")
    if args.epochs is not None and args.epochs < 1:
        parser.error("--epochs: at least 1")
    if args.target is not None and not 0 < args.target <= 1:
        parser.error("--target: an accuracy in (0, 1]")
    try:
        shapes = [parse_shape(args.shape)] + [parse_shape(x) for x in args.also.split(";") if x.strip()]
    except ValueError as e:
        parser.error(str(e))
    orchestra.set_threads(1)
    with tempfile.TemporaryDirectory(prefix="tuned_schedule-") as directory:
        try:  # a folder per copy: experiments of one name from two suites stay apart
            experiments = [os.path.abspath(e) if args.epochs is None and args.target is None
                           else with_workload(os.path.abspath(e), tempfile.mkdtemp(dir=directory), args.epochs, args.target)
                           for e in args.experiments]
        except (OSError, ValueError) as e:
            parser.error(str(e))
        results = [run_cluster(e, seeds, shapes, args.threshold) for e in experiments]
    summary = summarize(results, shapes)
    for key, v in summary.items():
        misses = v.get("schedule_misses", 0)
        print(f"{key}: over T_o, geometric mean over {v['clusters']} clusters {v['ratio']:.3f}x "
              f"(95% interval {v['low']:.3f}-{v['high']:.3f}x)" +
              (f"; schedule misses {misses}, taken at the budget's end {v['bounded']['ratio']:.3f}x "
               f"({v['bounded']['low']:.3f}-{v['bounded']['high']:.3f}x)" if misses else ""))
    if args.json:
        print(json.dumps({"results": results, "summary": summary,
                          "workload": {"epochs": args.epochs, "target_accuracy": args.target}}))


if __name__ == "__main__":
    main()
