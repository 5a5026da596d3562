#!/usr/bin/env python3
"""How much of a static T's gap to the oracle is choosing it on too few seeds? Read an
`orchestra evaluate` folder run with many seeds (--seeds 1-12) and, for each number k of tuning
seeds, judge the static T tuned on k seeds on a seed it did not see: the reference of issue 41's
fourth goal (`fixed-t-other-seeds` of a 3-seed evaluation) is k = 2; k = n - 1 comes close to
knowing each cluster's best static T. Beside them, each controller the evaluation judged, paired
cluster by cluster with the static T tuned on 2 seeds and on n - 1.

usage (from the repository root, after scripts/install.sh):
  build/orchestra evaluate pretrained/orchestra-a3c.pt CONFIG... --seeds 1-12 --jobs 2 --out DIR
  PYTHONPATH=build/python python3 experiments/python/examples/static_t_selection.py DIR \
      [--tuning 1,2,3,5] [--json]

The rule is `orchestra evaluate`'s for fixed-t-other-seeds: on the tuning seeds, the sweep's T
with the fewest misses, then the smallest geometric mean time (a miss at its run time), then the
smaller T. On a judged seed s, the chosen T's time (a miss at its run time) over the oracle of s,
the best sweep time that reached the target on s; seeds without an oracle are left out, as
evaluate leaves them out. Per cluster and k: the mean log ratio over every judged seed and every
k-subset of the other seeds (all subsets, or 2,000 drawn with a fixed seed where there are more),
then the geometric mean over clusters with a 95% interval over clusters. Each k is an unbiased
reading of a T tuned on k seeds (the tuning seeds never include the one judged), but with k = n - 1
there is one subset per judged seed, so where two T values tie it is noisy: leaving out a seed
that favoured one of them tilts the choice to the other. Also the ceiling of any static T, in
hindsight: one T per cluster chosen and scored on all its seeds (what evaluate's table calls the
static T in hindsight), optimistic by the same selection, less so the more seeds there are.

--judge accuracy:LEVEL or loss:LEVEL reads the same runs with another time to target, from their
evals.csv: the first evaluation whose test accuracy is at least LEVEL (whose test loss is at most
LEVEL), with --smooth H on the mean of the 2H+1 evaluations around it (fewer at a run's ends), so
that one lucky evaluation does not decide. It asks whether the noise between seeds is the
evaluation's jitter or the training's own. evaluate stops a run at the end of the epoch that
reached its target, so a level the run reaches later may not be in its data: such a run counts as
a miss at its run time, and the count of them is printed ("cut short"); read a judge only where
that count is small.
"""
import argparse
import itertools
import json
import math
import os
import random
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tuned_schedule import t_975  # noqa: E402

import orchestra  # noqa: E402

SWEEP = re.compile(r"^fixed-t-T_ms=(.+)$")
MAX_SUBSETS = 2000


class Judge:
    """Another time to target read from a run's evaluations: accuracy >= level or loss <= level,
    on the mean of the 2 * smooth + 1 evaluations around each one (see the module's docstring)."""

    def __init__(self, text, smooth=0):
        kind, _, level = text.partition(":")
        if kind not in ("accuracy", "loss") or not level:
            raise ValueError(f"judge {text!r}: expected accuracy:LEVEL or loss:LEVEL")
        self.kind, self.level, self.smooth = kind, float(level), int(smooth)
        if self.smooth < 0:
            raise ValueError(f"smooth {smooth}: expected 0 or more evaluations each side")

    def time(self, evals, run_time):
        """(time, reached, cut short) of one run's evaluations (sim_time_s, accuracy, loss, in round order)."""
        values = evals[self.kind].to_numpy(dtype=float)
        h = self.smooth
        smoothed = np.array([values[max(0, i - h):i + h + 1].mean() for i in range(len(values))])
        passed = (lambda v: v >= self.level) if self.kind == "accuracy" else (lambda v: v <= self.level)
        hits = np.nonzero(passed(smoothed))[0]
        if len(hits):
            return float(evals["sim_time_s"].iloc[hits[0]]), True, False
        return float(run_time), False, bool(passed(values).any())


def read_cluster(folder, judge=None):
    """(sweep, controllers) of one cluster's folder: sweep[T_ms][seed] and controllers[label][seed]
    are (time, reached), the time to target or, for a miss, the run's time; with a Judge, its time
    to its level instead, and a third value, the number of runs it cut short."""
    results = orchestra.read_results(folder)
    if "run" not in results.summary.columns:  # read_results names runs only where there are several
        raise SystemExit(f"{folder}: one seed's runs: a T tuned on other seeds needs at least 2 (evaluate --seeds 1-12)")
    sweep, controllers, cut = {}, {}, 0
    evals = results.evals.groupby(["run", "policy"]) if judge else None
    for row in results.summary.itertuples():
        seed = int(row.run.split("-")[1])
        reached = bool(row.reached_target)
        time = float(row.time_to_target_s) if reached else float(row.sim_time_s)
        if judge:
            time, reached, short = judge.time(evals.get_group((row.run, row.label)).sort_values("round"), row.sim_time_s)
            cut += short
        m = SWEEP.match(row.label)
        if m:
            sweep.setdefault(float(m.group(1)), {})[seed] = (time, reached)
        else:
            controllers.setdefault(row.label, {})[seed] = (time, reached)
    return (sweep, controllers, cut) if judge else (sweep, controllers)


def choose(sweep, seeds):
    """The sweep's T evaluate's rule picks on `seeds`: fewest misses, smallest mean log time, smaller T."""
    def score(barrier):
        runs = [sweep[barrier][s] for s in seeds]
        return (sum(not reached for _, reached in runs), np.mean([math.log(t) for t, _ in runs]), barrier)
    return min((b for b in sweep if all(s in sweep[b] for s in seeds)), key=score)


def oracles(sweep):
    """Per seed, the best sweep time that reached the target (seeds where none did: absent)."""
    out = {}
    for runs in sweep.values():
        for seed, (time, reached) in runs.items():
            if reached and (seed not in out or time < out[seed]):
                out[seed] = time
    return out


def subsets(pool, k, rng):
    if math.comb(len(pool), k) <= MAX_SUBSETS:
        return list(itertools.combinations(pool, k))
    return [tuple(sorted(rng.sample(pool, k))) for _ in range(MAX_SUBSETS)]


def tuned_log_ratio(sweep, oracle, k, rng):
    """Mean over judged seeds with an oracle and k-subsets of the other seeds of log(time of the T
    chosen on the subset, on the judged seed / oracle); and the share of those choices that missed."""
    seeds = sorted({s for runs in sweep.values() for s in runs})
    logs, misses = [], 0
    for s in seeds:
        if s not in oracle:
            continue
        for tuning in subsets([x for x in seeds if x != s], k, rng):
            time, reached = sweep[choose(sweep, tuning)][s]
            logs.append(math.log(time / oracle[s]))
            misses += not reached
    return float(np.mean(logs)), misses / len(logs)


def hindsight_log_ratio(sweep, oracle):
    judged = sorted(oracle)
    time_of = sweep[choose(sweep, judged)]
    return float(np.mean([math.log(time_of[s][0] / oracle[s]) for s in judged]))


def spread_at_hindsight_t(sweep, oracle):
    """How much time to target moves from seed to seed at the cluster's static T in hindsight: the
    standard deviation of its log over the judged seeds (0.1 is about 10%)."""
    judged = sorted(oracle)
    time_of = sweep[choose(sweep, judged)]
    return float(np.std([math.log(time_of[s][0]) for s in judged], ddof=1)) if len(judged) > 1 else 0.0


def interval(logs):
    logs = np.asarray(logs, dtype=float)
    mean = logs.mean()
    half = t_975(len(logs) - 1) * logs.std(ddof=1) / math.sqrt(len(logs)) if len(logs) > 1 else 0.0
    return {"geomean": math.exp(mean), "low": math.exp(mean - half), "high": math.exp(mean + half)}


def analyse(folder, tuning_sizes, seed=1, judge=None):
    rng = random.Random(seed)
    clusters = sorted(d for d in os.listdir(folder) if os.path.isfile(os.path.join(folder, d, "evaluate.yaml")))
    if not clusters:
        raise SystemExit(f"{folder}: no cluster folders of `orchestra evaluate` (DIR/<cluster>/evaluate.yaml)")
    per_cluster, cut, runs = [], 0, 0
    for name in clusters:
        sweep, controllers, *short = read_cluster(os.path.join(folder, name), judge)
        cut += sum(short)
        runs += sum(len(r) for r in sweep.values()) + sum(len(r) for r in controllers.values())
        oracle = oracles(sweep)
        n = len({s for runs in sweep.values() for s in runs})
        sizes = sorted({k for k in tuning_sizes if k < n} | {n - 1})
        row = {"cluster": name, "seeds": n, "tuned": {}, "missed_share": {}}
        for k in sizes:
            row["tuned"][k], row["missed_share"][k] = tuned_log_ratio(sweep, oracle, k, rng)
        row["hindsight"] = hindsight_log_ratio(sweep, oracle)
        row["spread"] = spread_at_hindsight_t(sweep, oracle)
        row["controllers"] = {label: float(np.mean([math.log(runs[s][0] / oracle[s]) for s in oracle if s in runs]))
                              for label, runs in controllers.items()}
        row["controller_misses"] = {label: sum(not r for _, r in runs.values()) for label, runs in controllers.items()}
        per_cluster.append(row)
    seeds = min(r["seeds"] for r in per_cluster)
    sizes = sorted(set.intersection(*(set(r["tuned"]) for r in per_cluster)))
    top = max(sizes)
    out = {"clusters": len(per_cluster), "seeds": seeds, "tuned": {}, "controllers": {}, "runs": runs,
           "judge": f"{judge.kind}:{judge.level:g}, smooth {judge.smooth}" if judge else "the runs' own time to target",
           "cut_short": cut}
    for k in sizes:
        out["tuned"][k] = {"over_oracle": interval([r["tuned"][k] for r in per_cluster]),
                           "over_most_seeds": interval([r["tuned"][k] - r["tuned"][top] for r in per_cluster]),
                           "missed_share": float(np.mean([r["missed_share"][k] for r in per_cluster]))}
    out["hindsight"] = interval([r["hindsight"] for r in per_cluster])
    out["median_spread"] = float(np.median([r["spread"] for r in per_cluster]))
    labels = [c for c in per_cluster[0]["controllers"] if all(c in r["controllers"] for r in per_cluster)]
    for c in labels:
        entry = {"over_oracle": interval([r["controllers"][c] for r in per_cluster]),
                 "misses": sum(r["controller_misses"][c] for r in per_cluster)}
        if 2 in sizes:
            entry["over_tuned_on_2"] = interval([r["controllers"][c] - r["tuned"][2] for r in per_cluster])
        entry[f"over_tuned_on_{top}"] = interval([r["controllers"][c] - r["tuned"][top] for r in per_cluster])
        out["controllers"][c] = entry
    out["most_seeds"] = top
    out["per_cluster"] = [{"cluster": r["cluster"], **{f"tuned_on_{k}": math.exp(v) for k, v in r["tuned"].items()},
                           **{c: math.exp(v) for c, v in r["controllers"].items()}} for r in per_cluster]
    return out


def shown(i):
    return f"{i['geomean']:.3f}x ({i['low']:.3f}-{i['high']:.3f}x)"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", help="an `orchestra evaluate --out` folder, best with many seeds")
    p.add_argument("--tuning", default="1,2,3,5", help="numbers of tuning seeds (n - 1 is always added)")
    p.add_argument("--judge", help="accuracy:LEVEL or loss:LEVEL, the time to target read from evals.csv")
    p.add_argument("--smooth", type=int, default=0, help="with --judge: the mean of 2H+1 evaluations around each")
    p.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = p.parse_args()
    sizes = [int(k) for k in args.tuning.split(",") if k]
    if any(k < 1 for k in sizes):
        p.error("--tuning: numbers of seeds, each at least 1")
    if args.smooth and not args.judge:
        p.error("--smooth needs --judge")
    try:
        judge = Judge(args.judge, args.smooth) if args.judge else None
    except ValueError as e:
        p.error(str(e))
    out = analyse(args.folder, sizes, judge=judge)
    top = out["most_seeds"]
    print(f"{out['clusters']} clusters, {out['seeds']} seeds each; geometric means over clusters, 95% intervals")
    print(f"time to target: {out['judge']}; {out['cut_short']} of {out['runs']} runs cut short")
    print(f"{'static T tuned on k seeds':34s} {'/ oracle':28s} {f'/ tuned on {top}':28s} choices that missed")
    for k, r in out["tuned"].items():
        print(f"  k = {k:<30d} {shown(r['over_oracle']):28s} {shown(r['over_most_seeds']):28s} {100 * r['missed_share']:.1f}%")
    print(f"  {'one T per cluster, in hindsight':32s} {shown(out['hindsight'])}")
    print(f"  seed-to-seed spread at that T: {out['median_spread']:.3f} (median over clusters of the SD of log time)")
    columns = [f"over_tuned_on_{k}" for k in sorted({2, top}) if f"over_tuned_on_{k}" in next(iter(out["controllers"].values()), {})]
    print(f"{'controller':34s} {'/ oracle':28s} " + " ".join(f"{'/ tuned on ' + c.rsplit('_', 1)[1]:28s}" for c in columns) + " misses")
    for c, r in out["controllers"].items():
        print(f"  {c:32s} {shown(r['over_oracle']):28s} " + " ".join(f"{shown(r[col]):28s}" for col in columns) + f" {r['misses']}")
    if args.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
