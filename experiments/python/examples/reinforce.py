#!/usr/bin/env python3
"""REINFORCE (Williams 1992) in PyTorch on the barrier-tuning environment: a small policy network
learns when to halve, keep or double the barrier T, then is judged against a random policy on
episodes it never trained on.

usage (from the repository root, after scripts/install.sh; needs python3-torch):
  PYTHONPATH=build/python python3 experiments/python/examples/reinforce.py [CONFIG] [--updates N] [--seed S]

The algorithm: each update runs --batch episodes with actions sampled from pi(a|s), computes every
step's return to the episode's end (gamma 1: with the config's time reward, an episode's return is
minus its time to the target), subtracts the batch's mean return at the same step as a baseline
and divides by their spread, and takes one Adam step on -sum(log pi(a|s) * advantage) minus an
entropy bonus. Evaluation: the trained network's greedy action against uniformly random actions,
on the same --eval held-out episode seeds (paired), mean return and the mean of the differences.
"""
import argparse
import json
import os

import numpy as np
import torch
from torch import nn

import orchestra

DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "configs", "python_env.yaml")
HELD_OUT = 10**6  # evaluation episodes use seeds from here, training ones from --seed * 10^4


class PolicyNetwork(nn.Module):
    def __init__(self, observation_size, actions, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(observation_size, hidden), nn.Tanh(), nn.Linear(hidden, actions))

    def forward(self, observations):
        return torch.distributions.Categorical(logits=self.body(observations))


def rollout(env, seed, act):
    """One episode: observations, actions, rewards and whether it reached the target."""
    obs, _ = env.reset(seed=seed)
    observations, actions, rewards = [], [], []
    done = terminated = False
    while not done:
        action = act(obs)
        observations.append(obs)
        actions.append(action)
        obs, reward, terminated, truncated, _ = env.step(action)
        rewards.append(reward)
        done = terminated or truncated
    return observations, actions, rewards, terminated


def train(env, network, updates, batch, seed, lr, entropy_coef, log):
    optimizer = torch.optim.Adam(network.parameters(), lr=lr)
    episode = seed * 10**4
    for update in range(updates):
        episodes = []
        for _ in range(batch):
            def sample(obs):
                with torch.no_grad():
                    return int(network(torch.from_numpy(obs)).sample())
            episodes.append(rollout(env, episode, sample))
            episode += 1
        returns_to_go = [np.cumsum(r[::-1])[::-1] for _, _, r, _ in episodes]
        longest = max(len(g) for g in returns_to_go)
        # Baseline: the batch's mean return from step t on, over the episodes that lasted to t.
        baseline = np.array([np.mean([g[t] for g in returns_to_go if len(g) > t]) for t in range(longest)])
        advantages = np.concatenate([g - baseline[:len(g)] for g in returns_to_go])
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        observations = torch.from_numpy(np.concatenate([np.stack(o) for o, _, _, _ in episodes]))
        actions = torch.tensor([a for _, acts, _, _ in episodes for a in acts])
        policy = network(observations)
        loss = -(policy.log_prob(actions) * torch.from_numpy(advantages).float()).sum() / batch
        loss = loss - entropy_coef * policy.entropy().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if log:
            mean = np.mean([g[0] for g in returns_to_go])
            print(f"update {update + 1:3d}/{updates}: mean return of its {batch} episodes {mean:8.3f}")


def evaluate(env, network, episodes, seed):
    """Paired returns on held-out seeds: the trained network's greedy actions and random ones."""
    rng = np.random.default_rng(seed)

    def greedy(obs):
        with torch.no_grad():
            return int(network.body(torch.from_numpy(obs)).argmax())

    trained = [sum(rollout(env, HELD_OUT + k, greedy)[2]) for k in range(episodes)]
    random = [sum(rollout(env, HELD_OUT + k, lambda obs: int(rng.integers(env.action_space.n)))[2]) for k in range(episodes)]
    return trained, random


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", nargs="?", default=os.path.normpath(DEFAULT_CONFIG))
    parser.add_argument("--updates", type=int, default=30)
    parser.add_argument("--batch", type=int, default=4, help="episodes per update")
    parser.add_argument("--eval", type=int, default=20, help="held-out episodes for the evaluation")
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--entropy", type=float, default=0.01, help="entropy bonus coefficient")
    parser.add_argument("--seed", type=int, default=0, help="the network's initialization and the training episodes")
    parser.add_argument("--quiet", action="store_true", help="no line per update")
    parser.add_argument("--json", action="store_true", help="end with a line of JSON (the tests read it)")
    args = parser.parse_args()
    if args.seed < 0:
        parser.error(f"--seed {args.seed}: expected a seed >= 0")

    torch.manual_seed(args.seed)
    env = orchestra.BarrierEnv(args.config)
    network = PolicyNetwork(env.observation_space.shape[0], env.action_space.n)
    train(env, network, args.updates, args.batch, args.seed, args.lr, args.entropy, not args.quiet)
    trained, random = evaluate(env, network, args.eval, args.seed)
    difference = np.array(trained) - np.array(random)
    print(f"held-out episodes ({args.eval}): mean return trained {np.mean(trained):.3f}, random {np.mean(random):.3f}; "
          f"trained - random {difference.mean():+.3f} (sd {difference.std(ddof=1) if args.eval > 1 else 0:.3f})")
    if args.json:
        print(json.dumps({"trained": trained, "random": random}))


if __name__ == "__main__":
    main()
