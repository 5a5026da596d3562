#!/usr/bin/env python3
"""How close to the best static barrier can a controller that starts at LCM's T* get at all, given
how far one move takes T? The fastest such controller moves by the move's factor every round
until T reaches cap x T* (up for a cap above 1, down below it), then holds; this script runs that
schedule for each cap, and the static barrier T = cap x T* held from the first round, on the same
cluster and episode seeds.

usage (from the repository root, after scripts/install.sh):
  PYTHONPATH=build/python python3 experiments/python/examples/climb_ceiling.py EXPERIMENT.yaml \
      [--factor 2] [--caps 0.125,0.25,0.5,1,2,4,8,16,32] [--seeds 1,2,3] [--json]

EXPERIMENT is an experiment config (configs/heldout_fresh/h100_k40_2g.yaml): its cluster, model
and data, on real training. The controller is the learned one's (a decision every round, T within
1/8 and 32 times T*), on configs/python_env.yaml's environment. Prints, per cap and seed, the time
to the target (simulated s) of the climb and of the static T, and at the end the best climb over
the best static T, seed by seed: where that is well above 1, no controller with these moves can
come near the sweep's best on this cluster, however well it is trained (BENCHMARKS.md, "Where a
controller started at T* cannot follow").
"""
import argparse
import json
import os

import numpy as np

import orchestra

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
BASE_CONFIG = os.path.join(ROOT, "configs", "python_env.yaml")
DECREASE, KEEP, INCREASE = 0, 1, 2  # action_space's order (orchestra.ACTION_MOVES)


def controller(factor, start_multiple=1.0):
    # The learned controller's decisions and bounds (configs/a3c_surrogate_f4.yaml), with the factor
    # given; T_x_lcm moves the start (and the bounds with it) for the static runs.
    return {"move": "multiplicative", "factor": factor, "interval": "rounds", "interval_rounds": 1,
            "min_T_x_start": 0.125, "max_T_x_start": 32, "T_x_lcm": start_multiple}


def episode(env, seed, choose):
    """Simulated seconds to the end of the episode, whether it reached the target, and the final T."""
    obs, info = env.reset(seed=seed)
    moves, done = 0, False
    while not done:
        action = choose(moves)
        moves += action != KEEP
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    return info["clock_ms"] / 1000.0, bool(info["reached_target"]), info["barrier_ms"]


def moves_needed(cap, factor):
    """Moves from T* until T is at least cap x T* (cap > 1) or at most cap x T* (cap < 1); the
    bounds at 1/8 and 32 x T* stop the last one."""
    if cap > 1:
        return int(np.ceil(np.log(cap) / np.log(factor) - 1e-9))
    if cap < 1:
        return int(np.ceil(np.log(1 / cap) / np.log(factor) - 1e-9))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiment")
    parser.add_argument("--factor", type=float, default=2.0, help="T is multiplied by this per move (default 2)")
    parser.add_argument("--caps", default="0.125,0.25,0.5,1,2,4,8,16,32", help="where the climb stops, in multiples of T*")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--json", action="store_true", help="end with a line of JSON (the tests read it)")
    args = parser.parse_args()
    caps = [float(c) for c in args.caps.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    # As `orchestra evaluate` runs the experiment: a test evaluation after every round, and only the
    # experiment's epochs end a run (a budget in reference time would differ between the climb and
    # a static T, whose reference is its own start).
    common = {"experiments": [os.path.abspath(args.experiment)], "eval_every_reference_rounds": 0, "max_reference_epochs": 0}

    climb = orchestra.BarrierEnv(BASE_CONFIG, controller=controller(args.factor), **common)
    rows = []
    for cap in caps:
        static = orchestra.BarrierEnv(BASE_CONFIG, controller=controller(args.factor, cap), **common)
        needed, move = moves_needed(cap, args.factor), INCREASE if cap > 1 else DECREASE
        for seed in seeds:
            t_climb, r_climb, T_climb = episode(climb, seed, lambda moves: move if moves < needed else KEEP)
            t_static, r_static, T_static = episode(static, seed, lambda moves: KEEP)
            rows.append({"cap": cap, "seed": seed, "climb_s": t_climb, "climb_reached": r_climb, "climb_T_ms": T_climb,
                         "static_s": t_static, "static_reached": r_static, "static_T_ms": T_static})
            print(f"cap {cap:5g} x T*  seed {seed}:  climb {t_climb:7.2f} s{'' if r_climb else ' (missed)'} "
                  f"ending at T = {T_climb:7.1f} ms   static T = {T_static:7.1f} ms: {t_static:7.2f} s"
                  f"{'' if r_static else ' (missed)'}", flush=True)

    def best(seed, kind):
        times = [r[kind + "_s"] for r in rows if r["seed"] == seed and r[kind + "_reached"]]
        return min(times) if times else float("nan")

    ratios = [best(s, "climb") / best(s, "static") for s in seeds]
    print(f"best climb / best static T, seed by seed: {', '.join(f'{x:.2f}x' for x in ratios)}; "
          f"geometric mean {np.exp(np.mean(np.log(ratios))):.2f}x")
    if args.json:
        print(json.dumps({"rows": rows, "ratios": ratios}))


if __name__ == "__main__":
    main()
