"""orchestra.load_policy: a policy file of `orchestra train` (agents/policy_file.hpp) from Python."""
import os

from . import _core
from ._checks import checked_int


class Policy:
    """A trained barrier policy: the actor-critic network of the file, the controller options it
    was trained with, and the C++ controller's choice of action.

    predict(observation, deterministic=True): the action the `orchestra-a3c` controller takes in
        that state (the network's most probable move), as an index of the environment's action
        space (0, 1, 2 for T moved by -1, 0, +1), so env.step(policy.predict(obs)) runs it. An int
        for one observation of shape (observation_size,), an int64 array for a batch (n,
        observation_size). deterministic=False draws the action from the network's probabilities
        (`actions: sampled` in a run), from the policy's own generator (load_policy's seed). Unlike
        Stable-Baselines3's predict it returns the action alone: the network has no recurrent state.
    probabilities(observation): pi(.|s) over the actions 0, 1, 2.
    state_dict(): the parameters as numpy arrays, named as in the file ("trunk.0.weight", ...).
    to_torch(): the equivalent torch.nn.Module with these parameters (needs PyTorch).
    controller: how its actions move T, as the keys of a training config's `controller:` (move,
        factor or unit_ms, interval and interval_rounds, the bounds on T, weighting), so that
        BarrierEnv(config, controller=policy.controller) applies them as `orchestra-a3c` does.
    start: where `orchestra-a3c` starts T with it, "lcm" or "planned".
    observation_size, hidden, updates, training (dict of strings), path.
    """

    def __init__(self, path, seed=None):
        if seed is not None:
            seed = checked_int(seed, "load_policy: seed", 0, 2**63)
        self._policy = _core.Policy(os.fspath(path), seed)

    def predict(self, observation, deterministic=True):
        return self._policy.predict(observation, deterministic)

    def probabilities(self, observation):
        return self._policy.probabilities(observation)

    def state_dict(self):
        return dict(self._policy.state_dict())

    def to_torch(self):
        import torch
        from torch import nn

        class ActorCritic(nn.Module):
            """agents/actor_critic.hpp in PyTorch: a tanh trunk, a policy head, a value head."""

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
                return self.policy(z), self.value(z).squeeze(-1)

        module = ActorCritic(self.observation_size, self.hidden, len(self.action_moves))
        module.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in self.state_dict().items()}, strict=True)
        return module

    @property
    def observation_size(self):
        return self._policy.observation_size

    @property
    def action_moves(self):
        """The move of T of each output, in order: (-1, 0, 1), or -m ... m for max_move m."""
        m = self._policy.controller["max_move"]
        return tuple(range(-m, m + 1))

    @property
    def hidden(self):
        return list(self._policy.hidden)

    @property
    def updates(self):
        return self._policy.updates

    @property
    def controller(self):
        return dict(self._policy.controller)

    @property
    def start(self):
        """Where `orchestra-a3c` starts T with this file: "lcm" (LCM's T*) or "planned" (planned-t's T;
        the shipped policy's). Not a training key: BarrierEnv starts at LCM's T*, as training does."""
        return self._policy.start

    @property
    def training(self):
        return dict(self._policy.training)

    @property
    def path(self):
        return self._policy.path

    def __repr__(self):
        return (f"<orchestra.Policy {self.path}: {self.observation_size} inputs, hidden {self.hidden}, "
                f"{self.updates} updates, {self.controller['move']} moves>")


def load_policy(path, seed=None):
    """Reads a policy file (orchestra.PRETRAINED_POLICY is the shipped one). `seed` seeds the draws
    of predict(..., deterministic=False); without it they are seeded at random. A missing file or
    one of another layout raises orchestra.DataError naming it."""
    return Policy(path, seed)
