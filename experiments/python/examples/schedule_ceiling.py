#!/usr/bin/env python3
"""Can any barrier schedule beat the best static barrier by much? A controller that moves T during
a run can only pay if some schedule of T is faster than every static T; this script measures how
much faster the best two-phase schedule is (T_a held, then T_b from a switch time on), with every
choice made in hindsight, so that what it finds bounds what a controller could gain from moving T
this way.

usage (from the repository root, after scripts/install.sh):
  PYTHONPATH=build/python python3 experiments/python/examples/schedule_ceiling.py EXPERIMENT.yaml [...] \
      [--seeds 1,2] [--span 2] [--switches 0.25,0.5,0.75] [--json]

Each EXPERIMENT is an experiment config (configs/heldout_twelfth/drawn-30001.yaml): its cluster,
model and data, on real training, run as `orchestra evaluate` runs it (a test evaluation every
round, the experiment's epochs the only budget). For each one:
  1. the static T = c x T* (LCM's barrier) for c = 1/8, 1/4, ..., 32, every seed, and on past
     an end (to 1/128 or 128) while the best static T lies within SPAN doublings of it;
  2. the centre: the c with the lowest mean log time to the target over the seeds (no miss);
  3. every two-phase schedule T_a -> T_b with T_a and T_b within SPAN doublings of the centre
     (T_a != T_b): T_a from the first round, and from the first round whose clock passes
     s x t_ref one x2 move a round until T_b, then held; t_ref is the centre's time to the target
     (geometric mean over the seeds), s each of SWITCHES.
It prints, per cluster, the best schedule (static T included) over the best static T three ways:
  - per seed (both chosen on the seed they are judged on),
  - per cluster (one static T and one schedule for all seeds, chosen on all of them),
  - tuned on the other seeds (each chosen on the seeds it is not judged on, as a researcher would
    tune either; the static one is `fixed-t-other-seeds` of `orchestra evaluate`),
and the geometric means over the clusters at the end. Every choice here leans toward the schedules
(more candidates, and t_ref read from the seeds judged), so a ratio near 1 says that no
controller moving T between two values gains over a static T on these clusters.
"""
import argparse
import json
import math
import os

import numpy as np

import orchestra

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
BASE_CONFIG = os.path.join(ROOT, "configs", "python_env.yaml")
DECREASE, KEEP, INCREASE = 0, 1, 2  # action_space's order (orchestra.ACTION_MOVES)
GRID = [2.0 ** k for k in range(-3, 6)]  # c = 1/8 ... 32, the learned controller's bounds around T*
EXTENDED = [2.0 ** k for k in range(-7, 8)]  # where the best static T lies at an end of GRID, the sweep goes on


def make_env(experiment, start_multiple):
    # A decision every round, x2 moves, bounds wide enough that only the schedule decides where T goes.
    controller = {"move": "multiplicative", "factor": 2, "interval": "rounds", "interval_rounds": 1,
                  "min_T_x_start": 2.0 ** -10, "max_T_x_start": 2.0 ** 10, "T_x_lcm": start_multiple}
    return orchestra.BarrierEnv(BASE_CONFIG, controller=controller, experiments=[experiment],
                                eval_every_reference_rounds=0, max_reference_epochs=0)


def run_to_end(env, seed, moves_after=0, switch_s=math.inf):
    """The last step's info of an episode with T held, or moved by `moves_after` x2 moves
    (negative: down), one a round, from the first decision at or after switch_s."""
    obs, info = env.reset(seed=seed)
    left, done = abs(moves_after), False
    while not done:
        action = KEEP
        if left and info["clock_ms"] / 1000.0 >= switch_s:
            action, left = (INCREASE if moves_after > 0 else DECREASE), left - 1
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    return info


def episode(env, seed, moves_after=0, switch_s=math.inf, final_barrier=False):
    """Time (simulated s) to the target of run_to_end's episode, or None on a miss (and T at the
    end, with final_barrier)."""
    info = run_to_end(env, seed, moves_after, switch_s)
    time = info["clock_ms"] / 1000.0 if info["reached_target"] else None
    return (time, info["barrier_ms"]) if final_barrier else time


def log_or_inf(t):
    return math.log(t) if t is not None else math.inf


def best_index(pool, seeds):
    """Index in `pool` (dicts of times by seed) of the lowest mean log time over `seeds`; a miss
    rules a candidate out, and None says every one missed."""
    scores = [np.mean([log_or_inf(times[s]) for s in seeds]) for times in pool]
    return int(np.argmin(scores)) if min(scores) < math.inf else None


def static_sweep(experiment, seeds, span):
    """The static T = c x T* over GRID on every seed, on past an end of GRID while the best static
    T lies within `span` doublings of it: (grid, envs by c, times by c and seed, index of the
    centre in grid, or None when every c missed)."""
    grid = list(GRID)
    envs, static = {}, {}

    def sweep(c):
        envs[c] = make_env(experiment, c)
        static[c] = {s: episode(envs[c], s) for s in seeds}

    for c in grid:
        sweep(c)
    # Extend the sweep past an end of the grid while that end is the best static T (and span more
    # beyond it, so that the schedules around it have their neighbours).
    while True:
        centre = best_index([static[c] for c in grid], seeds)
        if centre is None:
            break
        lower, upper = centre - span < 0, centre + span >= len(grid)
        added = False
        if lower and grid[0] > EXTENDED[0]:
            grid.insert(0, grid[0] / 2)
            sweep(grid[0])
            added = True
        if upper and grid[-1] < EXTENDED[-1]:
            grid.append(grid[-1] * 2)
            sweep(grid[-1])
            added = True
        if not added:
            break
    return grid, envs, static, centre


def run_cluster(experiment, seeds, span, switches, verbose=True):
    grid, envs, static, centre = static_sweep(experiment, seeds, span)
    name = os.path.splitext(os.path.basename(experiment))[0]
    if centre is None:
        return {"cluster": name, "centre": None, "static": [{"c": c, "times": static[c]} for c in grid], "schedules": []}
    t_ref = math.exp(np.mean([math.log(static[grid[centre]][s]) for s in seeds]))
    near = [i for i in range(centre - span, centre + span + 1) if 0 <= i < len(grid)]
    schedules = []
    for a in near:
        for b in near:
            if a == b:
                continue
            for f in switches:
                times = {s: episode(envs[grid[a]], s, moves_after=b - a, switch_s=f * t_ref) for s in seeds}
                schedules.append({"from": grid[a], "to": grid[b], "switch": f, "switch_s": f * t_ref, "times": times})
    out = {"cluster": name, "centre": grid[centre], "t_ref": t_ref,
           "static": [{"c": c, "times": static[c]} for c in grid], "schedules": schedules}
    out.update(compare(out, seeds))
    if verbose:
        print(f"{name}: best static c = {grid[centre]:g} x T* ({t_ref:.2f} s); best schedule over best static T: "
              f"per seed {out['per_seed']:.3f}x, per cluster {out['per_cluster']:.3f}x, "
              f"tuned on the other seeds {out['other_seeds']:.3f}x (best: {out['best_schedule']})", flush=True)
    return out


def compare(result, seeds):
    """The three ratios of the docstring: best schedule (statics included) over best static T."""
    statics = [r["times"] for r in result["static"]]
    candidates = statics + [r["times"] for r in result["schedules"]]
    labels = [f"static {r['c']:g}" for r in result["static"]] + \
             [f"{r['from']:g} -> {r['to']:g} at {r['switch']:g}" for r in result["schedules"]]

    def ratio(chosen_any, chosen_static, s):
        if chosen_any is None or chosen_static is None:
            return math.nan  # every candidate missed the seeds chosen on
        t_any, t_static = candidates[chosen_any][s], statics[chosen_static][s]
        return log_or_inf(t_any) - log_or_inf(t_static)

    per_seed = [ratio(best_index(candidates, [s]), best_index(statics, [s]), s) for s in seeds]
    all_any, all_static = best_index(candidates, seeds), best_index(statics, seeds)
    per_cluster = [ratio(all_any, all_static, s) for s in seeds]
    other = []
    if len(seeds) > 1:
        for s in seeds:
            rest = [x for x in seeds if x != s]
            other.append(ratio(best_index(candidates, rest), best_index(statics, rest), s))
    finite = lambda xs: [x for x in xs if math.isfinite(x)]  # noqa: E731
    gm = lambda xs: float(math.exp(np.mean(finite(xs)))) if finite(xs) else float("nan")  # noqa: E731
    # A miss on the seed judged (either side's choice) is counted, not averaged.
    return {"per_seed": gm(per_seed), "per_cluster": gm(per_cluster), "other_seeds": gm(other),
            "other_seeds_schedule_misses": sum(1 for x in other if x == math.inf),
            "other_seeds_static_misses": sum(1 for x in other if x == -math.inf), "best_schedule": labels[all_any]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiments", nargs="+")
    parser.add_argument("--seeds", default="1,2")
    parser.add_argument("--span", type=int, default=2, help="T_a and T_b within this many doublings of the best static T")
    parser.add_argument("--switches", default="0.25,0.5,0.75", help="switch times, in fractions of the best static T's time")
    parser.add_argument("--json", action="store_true", help="end with a line of JSON (the tests read it)")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    switches = [float(f) for f in args.switches.split(",")]
    orchestra.set_threads(1)
    results = [run_cluster(os.path.abspath(e), seeds, args.span, switches) for e in args.experiments]
    judged = [r for r in results if r["centre"] is not None]
    for key in ("per_seed", "per_cluster", "other_seeds"):
        values = [math.log(r[key]) for r in judged if math.isfinite(r[key])]
        if values:
            print(f"{key.replace('_', ' ')}: best schedule / best static T, geometric mean over {len(values)} clusters "
                  f"{math.exp(np.mean(values)):.3f}x (range {math.exp(min(values)):.3f}-{math.exp(max(values)):.3f}x)")
    if args.json:
        print(json.dumps({"results": results}))


if __name__ == "__main__":
    main()
