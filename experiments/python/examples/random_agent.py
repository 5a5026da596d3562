#!/usr/bin/env python3
"""A random agent on the barrier-tuning environment: each decision halves, keeps or doubles the
barrier T at random. The baseline any learned controller has to beat (reinforce.py does).

usage (from the repository root, after scripts/install.sh):
  PYTHONPATH=build/python python3 experiments/python/examples/random_agent.py [CONFIG] [--episodes N] [--seed S]

CONFIG is a training config of `orchestra train` (default: configs/python_env.yaml, a small fixed
cluster whose episodes take a fraction of a second). Prints each episode's return, whether it
reached the target accuracy and in how much simulated time; --json adds one line of JSON.
"""
import argparse
import json
import os

import numpy as np

import orchestra

DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "configs", "python_env.yaml")


def run_episode(env, seed, choose):
    """Return, simulated time (s) and whether the target was reached, acting with choose(obs)."""
    obs, info = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, info = env.step(choose(obs))
        total += reward
        done = terminated or truncated
    return total, info["clock_ms"] / 1000.0, terminated


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", nargs="?", default=os.path.normpath(DEFAULT_CONFIG))
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0, help="episode k runs with seed SEED + k")
    parser.add_argument("--json", action="store_true", help="end with a line of JSON (the tests read it)")
    args = parser.parse_args()
    if args.seed < 0:
        parser.error(f"--seed {args.seed}: expected a seed >= 0")

    env = orchestra.BarrierEnv(args.config)
    env.action_space.seed(args.seed)
    returns = []
    for k in range(args.episodes):
        total, seconds, reached = run_episode(env, args.seed + k, lambda obs: env.action_space.sample())
        returns.append(total)
        print(f"episode {k} (seed {args.seed + k}): return {total:8.3f}, "
              f"{'reached the target' if reached else 'missed the target'} after {seconds:7.2f} s simulated")
    print(f"mean return over {len(returns)} episodes: {np.mean(returns):.3f}")
    if args.json:
        print(json.dumps({"returns": returns}))


if __name__ == "__main__":
    main()
