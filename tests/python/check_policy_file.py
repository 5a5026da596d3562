"""A policy file read the way a Python user reads it (Debian's python3-torch).

torch.load gives the dict agents/policy_file.hpp documents; its state_dict loads into the
equivalent nn.Module with strict key and shape checks; that module's pi(.|s) matches what C++
computes from the same file (policy_probe), and so does the greedy action. The other way round too:
a policy edited in Python and written with torch.save (e.g. an average of snapshots) loads in C++,
which then computes what Python computes from it.

usage: check_policy_file.py PROBE POLICY.pt
"""
import json
import os
import subprocess
import sys
import tempfile

import torch
from torch import nn


class ActorCritic(nn.Module):
    """The network agents/actor_critic.hpp builds: tanh trunk, a policy head and a value head."""

    def __init__(self, observation_size, hidden, actions):
        super().__init__()
        layers, width = [], observation_size
        for h in hidden:
            layers += [nn.Linear(width, h), nn.Tanh()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(width, actions)
        self.value = nn.Linear(width, 1)

    def forward(self, x):
        z = self.trunk(x)
        return torch.softmax(self.policy(z), dim=-1), self.value(z)


def fail(message):
    print("check_policy_file: " + message, file=sys.stderr)
    sys.exit(1)


def main():
    probe, path = sys.argv[1], sys.argv[2]
    # weights_only=False: PyTorch 2.6 and later default to True, which refuses the TorchScript type
    # tags torch::pickle_save writes (measured with PyTorch 2.11 on the GPU machine, 2026-11-26).
    policy = torch.load(path, weights_only=False)
    if not isinstance(policy, dict):
        fail(f"{path}: torch.load gave {type(policy).__name__}, expected a dict")
    expected = {"format", "format_version", "observation_size", "hidden", "actions", "updates",
                "controller", "training", "state_dict"}
    missing = expected - set(policy)
    if missing:
        fail(f"{path}: keys missing: {sorted(missing)}")
    if policy["format"] != "orchestra-a3c-policy" or policy["format_version"] != 2:
        fail(f"{path}: format {policy['format']!r} version {policy['format_version']!r}")
    if list(policy["actions"]) != [-1, 0, 1]:
        fail(f"{path}: actions {policy['actions']!r}")
    for key in ("move", "factor", "interval", "start"):
        if key not in policy["controller"]:
            fail(f"{path}: controller has no {key!r}")
    for key in ("config", "algorithm", "reward"):
        if key not in policy["training"]:
            fail(f"{path}: training has no {key!r}")

    worst = compare_with_cpp(probe, path, policy)
    # Written by Python: torch.save of the same dict with the weights halved (a different policy).
    edited = dict(policy)
    edited["state_dict"] = {key: value * 0.5 for key, value in policy["state_dict"].items()}
    with tempfile.TemporaryDirectory() as tmp:
        edited_path = os.path.join(tmp, "edited.pt")
        torch.save(edited, edited_path)
        edited_worst = compare_with_cpp(probe, edited_path, edited)
    print(f"{path}: {policy['format']} v{policy['format_version']}, hidden {list(policy['hidden'])}, "
          f"{policy['updates']} updates, {policy['training']['algorithm']} on {policy['training']['config']}; "
          f"16 observations: pi(.|s) agree within {worst:.1e}, greedy actions equal; "
          f"the same file edited and saved by torch.save: within {edited_worst:.1e}")


def compare_with_cpp(probe, path, policy):
    """pi(.|s) and the greedy action of the file's policy, Python against C++ (policy_probe)."""
    module = ActorCritic(int(policy["observation_size"]), [int(h) for h in policy["hidden"]], 3)
    module.load_state_dict(policy["state_dict"], strict=True)
    module.eval()

    run = subprocess.run([probe, path], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"{path}: C++ cannot read it: {run.stderr.strip()}")
    cpp = json.loads(run.stdout)
    if cpp["updates"] != policy["updates"]:
        fail(f"updates: C++ {cpp['updates']}, Python {policy['updates']}")
    with torch.no_grad():
        observations = torch.tensor(cpp["observations"], dtype=torch.float32)
        probabilities, _ = module(observations)
    cpp_probabilities = torch.tensor(cpp["probabilities"], dtype=torch.float32)
    worst = (probabilities - cpp_probabilities).abs().max().item()
    if worst > 1e-5:
        fail(f"{path}: pi(.|s) differs between C++ and Python by {worst:.2e}")
    greedy = [policy["actions"][i] for i in probabilities.argmax(dim=-1).tolist()]
    if greedy != cpp["greedy_actions"]:
        fail(f"{path}: greedy actions: C++ {cpp['greedy_actions']}, Python {greedy}")
    return worst


if __name__ == "__main__":
    main()
