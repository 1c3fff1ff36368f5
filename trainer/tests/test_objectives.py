"""GRPO advantages (per-role baselines within groups), PPO clipping and the grounding term, checked
against values computed by hand."""
import math
import unittest

import torch

from ..config_types import OptimSection, TrainerConfig
from ..data.encode import Example
from ..errors import TrainerError
from ..model import LlamaForCausalLM, ModelConfig
from ..objectives import compute_advantages, kl_penalty, ppo_token_losses
from ..runtime import Runtime
from ..train.engine import Engine
from ..train.grpo import split_rows
from ..train.grpo_objective import grounding_loss


class Row:
    """The fields of an example the objectives read."""

    def __init__(self, group, role, reward, weight=1.0, n_tokens=2):
        self.group, self.role, self.reward, self.weight = group, role, reward, weight
        self.target_ids = [0] * n_tokens
        self.advantage = None


class AdvantageTest(unittest.TestCase):
    def rows(self):
        return [
            Row("t1/i0", "act", 1.0), Row("t1/i0", "act", 0.0), Row("t1/i0", "act", 0.0),
            Row("t1/i0", "act", 1.0), Row("t1/i0", "act", 1.0),
            Row("t1/i0", "rehearse", 1.0), Row("t1/i0", "rehearse", 0.0),
            Row("t2/i0", "act", 0.0), Row("t2/i0", "act", 0.0),
            Row("t2/i0", "rehearse", 1.0),
        ]

    def test_baseline_is_the_mean_of_the_same_role_in_the_same_group(self):
        rows = self.rows()
        stats = compute_advantages(rows)
        # t1 act: mean 3/5 = 0.6; t1 rehearse: mean 0.5 (not the act rows' 0.6); t2 act: all 0.
        expected = [0.4, -0.6, -0.6, 0.4, 0.4, 0.5, -0.5, 0.0, 0.0, 0.0]
        for row, value in zip(rows, expected, strict=True):
            self.assertAlmostEqual(row.advantage, value, places=12)
        self.assertEqual(stats[("t1/i0", "act")][2], 5)
        self.assertAlmostEqual(stats[("t1/i0", "rehearse")][0], 0.5)
        # A role with one row in its group has nothing to compare with: advantage 0.
        self.assertEqual(rows[9].advantage, 0.0)

    def test_std_normalisation_uses_the_unbiased_std_of_the_role_in_the_group(self):
        rows = self.rows()
        compute_advantages(rows, norm_by_std=True)
        std = math.sqrt((3 * 0.4 ** 2 + 2 * 0.6 ** 2) / 4)
        self.assertAlmostEqual(rows[0].advantage, 0.4 / (std + 1e-6), places=9)
        self.assertAlmostEqual(rows[5].advantage, 0.5 / (math.sqrt(0.5) + 1e-6), places=9)
        self.assertEqual(rows[7].advantage, 0.0)  # zero spread: zero advantage, not a division by zero

    def test_per_turn_act_rows_give_envace_role_wise_baselines(self):
        # `rehearse rollout --act-rows turn`: an episode of three turns (reward 0.5) and one of one turn
        # (reward 1.0) in one group. EnvACE's compute_grpo_outcome_advantage (verl/trainer/ppo/
        # core_algos.py, group_by_agent_id=True: every row of a uid_agentid group pooled), run under
        # /usr/bin/python3 on these rewards, gives [-0.125, -0.125, -0.125, 0.375], and with
        # norm_adv_by_std_in_grpo [-0.499998, -0.499998, -0.499998, 1.499994]; one row per episode
        # would give [-0.25, 0.25].
        rows = [Row("t/i0", "act", 0.5), Row("t/i0", "act", 0.5), Row("t/i0", "act", 0.5), Row("t/i0", "act", 1.0)]
        compute_advantages(rows)
        self.assertEqual([round(r.advantage, 6) for r in rows], [-0.125, -0.125, -0.125, 0.375])
        compute_advantages(rows, norm_by_std=True)
        self.assertEqual([round(r.advantage, 6) for r in rows], [-0.499998, -0.499998, -0.499998, 1.499994])

    def test_groups_do_not_share_baselines(self):
        rows = [Row("a", "act", 1.0), Row("a", "act", 0.0), Row("b", "act", 1.0), Row("b", "act", 1.0)]
        compute_advantages(rows)
        self.assertEqual([r.advantage for r in rows], [0.5, -0.5, 0.0, 0.0])


class SignalTest(unittest.TestCase):
    def test_a_set_has_signal_when_its_rewards_differ(self):
        rows = [Row("a", "act", 1.0), Row("a", "act", 0.0), Row("a", "rehearse", 0.5), Row("a", "rehearse", 0.5),
                Row("b", "act", 1.0), Row("c", "act", 0.5), Row("c", "act", 0.25), Row("c", "act", 0.0)]
        compute_advantages(rows)
        self.assertEqual([r.has_signal for r in rows], [True, True, False, False, False, True, True, True])
        self.assertEqual(rows[6].advantage, 0.0)  # at the mean of a set with signal: still trained


class RowTemperatureTest(unittest.TestCase):
    """Each role may sample at its own temperature: a GRPO row is scored at the one it carries."""

    def setUp(self):
        torch.manual_seed(0)
        config = ModelConfig(vocab_size=97, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, initializer_range=0.2,
                             eos_token_id=1, pad_token_id=0)
        self.model = LlamaForCausalLM(config).eval()
        optim = OptimSection(lr=1e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.0, grad_clip=1.0)
        self.cfg = TrainerConfig(optim=optim)

    def example(self, index, role, temperature=None):
        row = {"id": f"r{index}", "role": role, "source": "rollout", "reward": 1.0, "group": "g"}
        if temperature is not None:
            row["temperature"] = temperature
        return Example(index, row, [5 + index, 6, 7, 8], [9, 10 + index, 11])

    def alone(self, example, temperature):
        engine = Engine(self.model, self.cfg, Runtime(torch.device("cpu")), 0, temperature)
        return engine.logprobs_no_grad([example], 4)[example.index]

    def test_each_row_is_scored_at_its_own_temperature(self):
        act, rehearse, plain = self.example(0, "act", 1.0), self.example(1, "rehearse", 0.6), self.example(2, "act")
        engine = Engine(self.model, self.cfg, Runtime(torch.device("cpu")), 0, 1.5, row_temperatures=True)
        got = engine.logprobs_no_grad([act, rehearse, plain], 4)
        torch.testing.assert_close(got[0], self.alone(act, 1.0))
        torch.testing.assert_close(got[1], self.alone(rehearse, 0.6))
        torch.testing.assert_close(got[2], self.alone(plain, 1.5))  # no temperature: grpo.temperature
        self.assertFalse(torch.allclose(got[1], self.alone(rehearse, 1.5)))

    def test_without_row_temperatures_every_row_is_scored_at_the_engines(self):
        rehearse = self.example(1, "rehearse", 0.6)
        engine = Engine(self.model, self.cfg, Runtime(torch.device("cpu")), 0, 1.0)  # SFT's engine
        torch.testing.assert_close(engine.logprobs_no_grad([rehearse], 4)[1], self.alone(rehearse, 1.0))


class PpoTest(unittest.TestCase):
    def test_clipped_surrogate_by_hand(self):
        ratio = torch.tensor([1.5, 0.5, 1.1, 5.0, 0.5])
        adv = torch.tensor([1.0, 1.0, -1.0, -1.0, -1.0])
        old = torch.tensor([-2.0, -1.0, -3.0, -4.0, -0.5])
        logp = old + torch.log(ratio)
        losses, clipped, approx_kl = ppo_token_losses(logp, old, adv, clip_ratio=0.2, clip_ratio_c=3.0)
        # 1: max(-1.5, -1.2) = -1.2 (clipped); 2: max(-0.5, -0.8) = -0.5; 3: max(1.1, 1.1) = 1.1;
        # 4: max(5.0, 1.2) = 5.0, then the dual clip bounds it at -A*c = 3.0; 5: max(0.5, 0.8) = 0.8 (clipped).
        self.assertTrue(torch.allclose(losses, torch.tensor([-1.2, -0.5, 1.1, 3.0, 0.8]), atol=1e-6))
        self.assertEqual(clipped.tolist(), [True, False, False, False, True])
        self.assertTrue(torch.allclose(approx_kl, -torch.log(ratio), atol=1e-6))
        losses_no_dual, _, _ = ppo_token_losses(logp, old, adv, 0.2, None)
        self.assertAlmostEqual(float(losses_no_dual[3]), 5.0, places=5)

    def test_clipped_tokens_get_no_gradient(self):
        old = torch.zeros(4)
        logp = torch.log(torch.tensor([1.5, 1.1, 0.5, 0.9])).requires_grad_()
        adv = torch.tensor([1.0, 1.0, -1.0, -1.0])
        losses, _, _ = ppo_token_losses(logp, old, adv, 0.2, 3.0)
        losses.sum().backward()
        # Ratio 1.5 > 1.2 with A > 0 and ratio 0.5 < 0.8 with A < 0 are clipped: zero gradient.
        self.assertEqual(logp.grad[0].item(), 0.0)
        self.assertEqual(logp.grad[2].item(), 0.0)
        self.assertAlmostEqual(logp.grad[1].item(), -1.1, places=5)  # d(-A * exp(logp))/dlogp = -A * ratio
        self.assertAlmostEqual(logp.grad[3].item(), 0.9, places=5)

    def test_kl_estimators(self):
        logp, ref = torch.tensor([-1.0]), torch.tensor([-2.0])
        self.assertAlmostEqual(float(kl_penalty(logp, ref, "kl")), 1.0)
        self.assertAlmostEqual(float(kl_penalty(logp, ref, "mse")), 0.5)
        self.assertAlmostEqual(float(kl_penalty(logp, ref, "low_var_kl")), math.exp(-1.0) + 1.0 - 1.0, places=6)
        self.assertEqual(float(kl_penalty(logp, logp, "low_var_kl")), 0.0)


class GroundingTest(unittest.TestCase):
    def row(self, source, role, reward=None, group="g"):
        return {"id": "x", "role": role, "source": source, "reward": reward, "group": group, "_where": "f:1",
                "messages": [], "target": ""}

    def test_only_actual_rehearse_rows_are_grounding_targets(self):
        rows = [self.row("rollout", "act", 1.0), self.row("rollout", "rehearse", 0.0), self.row("actual", "rehearse"),
                self.row("actual", "act"), self.row("demonstration", "rehearse")]
        policy, actual, ignored = split_rows(rows, ["act", "rehearse"])
        self.assertEqual([(r["source"], r["role"]) for r in policy], [("rollout", "act"), ("rollout", "rehearse")])
        self.assertEqual([(r["source"], r["role"]) for r in actual], [("actual", "rehearse")])
        self.assertEqual(ignored, 2)

    def test_rollout_rows_need_a_reward_and_a_group(self):
        with self.assertRaises(TrainerError) as ctx:
            split_rows([self.row("rollout", "act", None)], ["act"])
        self.assertEqual(ctx.exception.code, "DATA_INVALID")
        with self.assertRaises(TrainerError):
            split_rows([self.row("rollout", "act", 1.0, group=None)], ["act"])

    def test_weights_scale_the_grounding_loss(self):
        class B:
            def __init__(self, rows):
                self.examples = rows
                self.num_tokens = sum(len(r.target_ids) for r in rows)

            def per_row(self, values):
                return torch.tensor(sum(([v] * len(r.target_ids) for v, r in zip(values, self.examples, strict=True)), []))

        logp = torch.tensor([-1.0, -2.0, -3.0, -4.0])
        plain = [Row("g", "rehearse", None, weight=1.0), Row("g", "rehearse", None, weight=1.0)]
        marked = [Row("g", "rehearse", None, weight=1.0), Row("g", "rehearse", None, weight=3.0)]
        loss_plain, values = grounding_loss(0.5, 4, 1)(B(plain), logp)
        loss_marked, _ = grounding_loss(0.5, 4, 1)(B(marked), logp)
        self.assertAlmostEqual(float(loss_plain), 0.5 * 10 / 4)
        self.assertAlmostEqual(float(loss_marked), 0.5 * (3 + 3 * 7) / 4)  # the marked row's tokens count 3 times
        self.assertAlmostEqual(values["grounding.nll"], 10.0)
        doubled, _ = grounding_loss(0.5, 4, 1)(B([Row("g", "rehearse", None, weight=2.0)] * 2), logp)
        self.assertAlmostEqual(float(doubled), 2 * float(loss_plain))


if __name__ == "__main__":
    unittest.main()
