"""orchestra.load_policy: the policy file's network and options, predict equal to the C++
controller's agent on random observations (env_probe greedy), probabilities equal to the same
network in PyTorch, seeded sampling, and errors for bad input."""
import os
import tempfile
import unittest

import orchestra_testing as t

t.require()

import numpy as np  # noqa: E402

import orchestra  # noqa: E402


class Pretrained(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.policy = orchestra.load_policy(orchestra.PRETRAINED_POLICY)

    def test_what_the_file_records(self):
        p = self.policy
        self.assertEqual(p.observation_size, 22)
        self.assertEqual(len(p.hidden), 2)
        self.assertGreater(p.updates, 0)
        self.assertIn(p.controller["move"], ("additive", "multiplicative"))
        self.assertIn("factor" if p.controller["move"] == "multiplicative" else "unit_ms", p.controller)
        for key in ("interval", "min_T_ms", "max_T_ms", "min_T_x_start", "max_T_x_start", "floor_cap_steps", "min_T_steps", "T_cap_steps", "T_cap_x_comm", "T_cap_above_steps", "weighting", "state"):
            self.assertIn(key, p.controller)
        self.assertEqual("interval_rounds" in p.controller, p.controller["interval"] == "rounds")
        self.assertEqual(p.controller["state"], "base")  # the 22 entries: observation_size above
        # Deployed from the planned T (not a training key; its bounds there are the file's own).
        self.assertEqual(p.start, "planned")
        self.assertNotIn("start", p.controller)
        for key in ("config", "algorithm", "reward"):
            self.assertIn(key, p.training)
        names = set(p.state_dict())
        self.assertEqual(names, {"trunk.0.weight", "trunk.0.bias", "trunk.2.weight", "trunk.2.bias", "policy.weight",
                                 "policy.bias", "value.weight", "value.bias"})
        self.assertEqual(p.state_dict()["trunk.0.weight"].shape, (p.hidden[0], 22))

    def test_its_controller_keys_make_the_environment_move_t_as_in_training(self):
        env = orchestra.BarrierEnv(experiments=[t.TASK_SMALL], controller=self.policy.controller)
        self.assertEqual(env.action_moves, self.policy.action_moves)  # the network's outputs are the env's actions
        obs, info = env.reset(seed=1)
        _, _, _, _, after = env.step(env.action_moves.index(1))
        if self.policy.controller["move"] == "multiplicative":
            self.assertAlmostEqual(after["barrier_ms"], info["barrier_ms"] * self.policy.controller["factor"])
        else:
            self.assertGreater(after["barrier_ms"], info["barrier_ms"])

    def test_predict_is_the_cpp_controllers_action_on_random_observations(self):
        cpp = t.cpp_greedy(orchestra.PRETRAINED_POLICY, 300, 7)
        observations = np.asarray(cpp["observations"], dtype=np.float32)
        expected = [self.policy.action_moves.index(m) for m in cpp["moves"]]
        one_by_one = [self.policy.predict(o) for o in observations]
        self.assertEqual(one_by_one, expected)
        self.assertTrue(all(type(a) is int for a in one_by_one))
        batch = self.policy.predict(observations)
        self.assertEqual(batch.dtype, np.int64)
        self.assertEqual(batch.tolist(), expected)
        self.assertGreater(len(set(expected)), 1, "the observations should not all give one action")

    def test_probabilities_are_the_torch_modules(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch")
        module = self.policy.to_torch()
        rng = np.random.default_rng(3)
        observations = rng.uniform(-1, 1, size=(50, 22)).astype(np.float32)
        with torch.no_grad():
            logits, _ = module(torch.from_numpy(observations))
            expected = torch.softmax(logits, dim=-1).numpy()
        probabilities = self.policy.probabilities(observations)
        self.assertEqual(probabilities.shape, (50, 3))
        np.testing.assert_allclose(probabilities, expected, atol=1e-6)
        # Single-precision probabilities (the network's float32 softmax): a sum of three is 1 within a few ulps.
        np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=0, atol=1e-6)
        self.assertEqual(self.policy.predict(observations).tolist(), expected.argmax(axis=1).tolist())
        self.assertEqual(self.policy.probabilities(observations[0]).shape, (3,))

    def test_sampled_actions_follow_the_probabilities_from_the_seed(self):
        observation = np.zeros(22, dtype=np.float32)
        a = orchestra.load_policy(orchestra.PRETRAINED_POLICY, seed=5)
        b = orchestra.load_policy(orchestra.PRETRAINED_POLICY, seed=5)
        draws_a = [a.predict(observation, deterministic=False) for _ in range(3000)]
        draws_b = [b.predict(observation, deterministic=False) for _ in range(3000)]
        self.assertEqual(draws_a, draws_b)
        frequencies = np.bincount(draws_a, minlength=len(a.action_moves)) / len(draws_a)
        p = a.probabilities(observation)
        # 4.5 standard errors of a frequency over 3,000 draws.
        np.testing.assert_allclose(frequencies, p, atol=4.5 * np.sqrt(0.25 / 3000))

    def test_a_policy_edited_in_torch_predicts_what_torch_says(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch")
        # PyTorch 2.6+ defaults to weights_only=True, which refuses the file's TorchScript type tags.
        saved = torch.load(orchestra.PRETRAINED_POLICY, weights_only=False)
        saved["state_dict"] = {k: -v for k, v in saved["state_dict"].items()}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "negated.pt")
            torch.save(saved, path)
            negated = orchestra.load_policy(path)
            cpp = t.cpp_greedy(path, 100, 8)
        observations = np.asarray(cpp["observations"], dtype=np.float32)
        self.assertEqual(negated.predict(observations).tolist(), [negated.action_moves.index(m) for m in cpp["moves"]])

    def test_a_policy_of_five_moves_reads_and_acts_as_in_cpp(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch")
        saved = torch.load(orchestra.PRETRAINED_POLICY, weights_only=False)
        weights = saved["state_dict"]
        hidden = weights["policy.weight"].shape[1]
        torch.manual_seed(3)
        weights["policy.weight"] = torch.randn(5, hidden)  # moves -2 ... 2: five outputs
        weights["policy.bias"] = torch.randn(5)
        saved["actions"] = [-2, -1, 0, 1, 2]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "five.pt")
            torch.save(saved, path)
            five = orchestra.load_policy(path)
            cpp = t.cpp_greedy(path, 200, 9)
        self.assertEqual(five.action_moves, (-2, -1, 0, 1, 2))
        self.assertEqual(five.controller["max_move"], 2)
        observations = np.asarray(cpp["observations"], dtype=np.float32)
        self.assertEqual(five.probabilities(observations).shape, (200, 5))
        self.assertEqual(five.predict(observations).tolist(), [five.action_moves.index(m) for m in cpp["moves"]])
        self.assertGreater(len(set(cpp["moves"]) - {-1, 0, 1}), 0, "some observations should give a move of two")
        module = five.to_torch()
        with torch.no_grad():
            logits, _ = module(torch.from_numpy(observations))
        self.assertEqual(logits.argmax(-1).tolist(), five.predict(observations).tolist())


class BadInput(unittest.TestCase):
    def test_shapes_files_and_seeds(self):
        policy = orchestra.load_policy(orchestra.PRETRAINED_POLICY)
        for bad in (np.zeros(21), np.zeros((2, 23)), np.zeros((2, 2, 22)), np.zeros((0, 22))):
            with self.assertRaisesRegex(ValueError, r"expected an observation of shape \(22,\)"):
                policy.predict(bad)
        for broken in (np.full(22, np.nan), np.concatenate([np.zeros((1, 22)), np.full((1, 22), np.inf)])):
            for call in (policy.predict, policy.probabilities):
                with self.assertRaisesRegex(ValueError, "is not a finite number"):
                    call(broken)  # not an action, as if a NaN meant one
        for unclear in (None, 0, "yes"):  # None drew a random action as if it meant False
            with self.assertRaises(TypeError):
                policy.predict(np.zeros(22), deterministic=unclear)
        self.assertEqual(policy.predict(np.zeros(22), deterministic=np.bool_(True)), policy.predict(np.zeros(22)))
        with self.assertRaises(orchestra.DataError) as e:
            orchestra.load_policy("/no/such/policy.pt")
        self.assertIsInstance(e.exception, ValueError)
        self.assertIn("/no/such/policy.pt", str(e.exception))
        with tempfile.TemporaryDirectory() as tmp:
            garbage = t.write(os.path.join(tmp, "garbage.pt"), "not a policy")
            with self.assertRaisesRegex(orchestra.DataError, "garbage.pt"):
                orchestra.load_policy(garbage)
        with self.assertRaises(ValueError):
            orchestra.load_policy(orchestra.PRETRAINED_POLICY, seed=-3)

    def test_a_damaged_or_crafted_weight_record_is_a_data_error(self):
        # The first tensor's record cut short, filled with NaN, or named at an offset far past it:
        # each read past the stored bytes (a crash, or garbage weights) before the loader checked.
        import re
        import struct
        import zipfile
        with zipfile.ZipFile(orchestra.PRETRAINED_POLICY) as z:
            records = {i.filename: z.read(i.filename) for i in z.infolist()}
        first = next(name for name in records if name.endswith("/data/0"))
        pickle = next(name for name in records if name.endswith("/data.pkl"))
        offset = re.search(rb"tQ(q.|r....)K\x00", records[pickle], re.S)  # BINPERSID, its memo, offset 0
        self.assertIsNotNone(offset)
        at = offset.end() - 2
        crafted = records[pickle][:at] + b"J" + struct.pack("<i", 0x10000000) + records[pickle][at + 2:]
        cases = {"short": ({first: records[first][:100]}, "data records do not hold the bytes the file declares"),
                 "nan": ({first: struct.pack("<f", float("nan")) * (len(records[first]) // 4)}, "not finite"),
                 "offset": ({pickle: crafted}, "reaches past its stored data")}
        with tempfile.TemporaryDirectory() as tmp:
            for case, (replaced, message) in cases.items():
                path = os.path.join(tmp, case + ".pt")
                with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
                    for name, data in records.items():
                        z.writestr(name, replaced.get(name, data))
                with self.assertRaisesRegex(orchestra.DataError, f"{case}.pt: .*{message}"):
                    orchestra.load_policy(path)

    def test_loading_does_not_change_what_torch_draws_next(self):
        # load_policy builds a network before reading its weights
        t.check_torch_draws_unchanged(self, lambda: orchestra.load_policy(orchestra.PRETRAINED_POLICY))


if __name__ == "__main__":
    t.main()
