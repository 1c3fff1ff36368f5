"""Packed rows (train.packing) compute what padded rows compute: the same per-row log-probs, the same
SFT loss and gradients, the same GRPO objective, on a small random model (the two paths on the same
weights; nothing is asserted of what a trained model does)."""
import dataclasses
import unittest

import torch

from ..config_types import GrpoSection, OptimSection, TrainerConfig, TrainSection
from ..data.batches import Batch, pack_rows
from ..data.encode import Example
from ..model import LlamaForCausalLM, ModelConfig
from ..runtime import Runtime
from ..train.engine import Engine
from ..train.grpo_objective import policy_loss, role_tokens
from ..train.sft import sft_loss

CONFIG = ModelConfig(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, eos_token_id=0, pad_token_id=0)
# (prompt, target) tokens: one row of a single input token, rows short enough to share a sequence.
SHAPES = [(1, 1), (9, 4), (3, 2), (14, 6), (2, 3), (5, 1), (4, 7)]
TOLERANCE = 1e-5


def rows(seed=0, shapes=SHAPES):
    g = torch.Generator().manual_seed(seed)
    out = []
    for i, (p, t) in enumerate(shapes):
        role = "act" if i % 2 else "rehearse"
        row = {"id": f"r{i}", "role": role, "source": "rollout", "weight": 0.5 + 0.25 * i, "reward": float(i % 3),
               "temperature": 0.7 if i % 3 == 0 else None,
               "target_logprobs": (-torch.rand(t, generator=g) * 2).tolist() if i % 2 else None}
        e = Example(i, row, torch.randint(1, CONFIG.vocab_size, (p,), generator=g).tolist(),
                    torch.randint(1, CONFIG.vocab_size, (t,), generator=g).tolist())
        e.advantage = float(i % 3) - 1.0
        out.append(e)
    return out


def model(attention="sdpa"):
    torch.manual_seed(0)
    return LlamaForCausalLM(CONFIG, attention=attention)


def engine(m, packing, pack_tokens=None, temperature=1.0):
    cfg = TrainerConfig(optim=OptimSection(), train=TrainSection(packing=packing, pack_tokens=pack_tokens))
    return Engine(m, cfg, Runtime(torch.device("cpu")), pad_id=0, temperature=temperature, row_temperatures=True)


def per_row(b, logp):
    return {e.index: part for e, part in zip(b.examples, torch.split(logp, [e.loss_tokens for e in b.examples]),
                                             strict=True)}


def loss_and_grads(eng, examples, loss_fn):
    """The loss of one micro-batch and the gradient of every weight, as the engine's step computes them."""
    eng.model.zero_grad(set_to_none=True)
    b = eng.batch(examples)
    logp = eng.forward(b.input_ids, b.mask, b.labels, eng.temperatures(b, eng.module.temperature), b.packing)
    loss, _ = loss_fn(b, logp)
    loss.backward()
    return b, loss.detach(), {n: p.grad.clone() for n, p in eng.model.named_parameters()}


class PackRowsTest(unittest.TestCase):
    def test_rows_are_packed_within_the_budget_and_never_split(self):
        lengths = [7, 1, 12, 3, 5, 4, 2]
        bins = pack_rows(lengths, 12)
        self.assertEqual(sorted(i for b in bins for i in b), list(range(len(lengths))))
        self.assertTrue(all(sum(lengths[i] for i in b) <= 12 for b in bins))
        self.assertEqual(len(bins), 3)  # 34 tokens in sequences of 12
        # A row longer than the budget is a sequence of its own, whole.
        self.assertIn([0], pack_rows([20, 3, 4], 8))

    def test_a_packed_batch_holds_several_rows_per_sequence_with_positions_from_zero(self):
        examples = rows()
        b = Batch(examples, 0, torch.device("cpu"), pack=0)
        assert b.packing is not None
        longest = max(e.length - 1 for e in examples)
        self.assertEqual(b.input_ids.shape[1], longest)
        self.assertLess(b.input_ids.shape[0], len(examples))
        self.assertTrue(any(len(spans) >= 3 for spans in b.packing.spans))
        for s, spans in enumerate(b.packing.spans):  # positions restart at 0 with every row (and padding tail)
            expected = torch.cat([torch.arange(n) for n in spans])
            self.assertTrue(torch.equal(b.packing.position_ids[s], expected))
        self.assertEqual(b.num_tokens, sum(e.loss_tokens for e in examples))

    def test_the_engine_packs_a_micro_batch_into_one_sequence_with_sdpa_and_by_the_longest_row_eager(self):
        examples = rows()
        longest = max(e.length - 1 for e in examples)
        whole = engine(model("sdpa"), True).batch(examples)
        assert whole.packing is not None
        self.assertEqual(len(whole.packing.spans), 1)
        self.assertEqual(whole.input_ids.shape[1], sum(e.length - 1 for e in examples))
        by_longest = engine(model("eager"), True).batch(examples)
        self.assertEqual(by_longest.input_ids.shape[1], longest)
        budget = engine(model("sdpa"), True, pack_tokens=20).batch(examples)
        self.assertEqual(budget.input_ids.shape[1], 20)  # sequences of at most 20 tokens, one of them full

    def test_rows_that_packing_would_not_shorten_are_simply_padded(self):
        for shapes, budget in (([(9, 4), (8, 3)], 0), ([(9, 4)], 100), ([(5, 4), (4, 5), (6, 3)], 100)):
            examples = rows(shapes=shapes)
            b = Batch(examples, 0, torch.device("cpu"), pack=budget)
            self.assertIsNone(b.packing, shapes)
            self.assertEqual(tuple(b.input_ids.shape), (len(shapes), max(p + t - 1 for p, t in shapes)))
            self.assertEqual([e.index for e in b.examples], [e.index for e in examples])


class PackedEqualsPaddedTest(unittest.TestCase):
    def check_log_probs(self, attention, pack_tokens=None):
        m = model(attention)
        examples = rows()
        padded, packed = engine(m, False), engine(m, True, pack_tokens)
        a = padded.logprobs_no_grad(examples, micro_size=len(examples))
        b = packed.logprobs_no_grad(examples, micro_size=len(examples))
        self.assertIsNotNone(packed.batch(examples).packing)
        self.assertEqual(sorted(a), sorted(b))
        for k in a:
            self.assertEqual(a[k].shape, b[k].shape)
            self.assertLess(float((a[k] - b[k]).abs().max()), TOLERANCE, f"row {k}")

    def test_per_row_log_probs_are_equal_with_sdpa(self):
        self.check_log_probs("sdpa")

    def test_per_row_log_probs_are_equal_with_eager_attention(self):
        self.check_log_probs("eager")

    def test_per_row_log_probs_are_equal_in_sequences_of_a_token_budget(self):
        self.check_log_probs("sdpa", pack_tokens=20)

    def check_sft(self, gradient_checkpointing=False):
        m = model()
        m.gradient_checkpointing = gradient_checkpointing
        examples = rows()
        fn = sft_loss(sum(e.loss_tokens for e in examples), 1)
        _, loss_a, grads_a = loss_and_grads(engine(m, False), examples, fn)
        b, loss_b, grads_b = loss_and_grads(engine(m, True, 64), examples, fn)
        assert b.packing is not None
        self.assertTrue(any(len(spans) >= 3 for spans in b.packing.spans))
        self.assertLess(abs(float(loss_a - loss_b)), TOLERANCE)
        for name, g in grads_a.items():
            self.assertLess(float((g - grads_b[name]).abs().max()), TOLERANCE, name)

    def test_sft_loss_and_gradients_are_equal(self):
        self.check_sft()

    def test_sft_loss_and_gradients_are_equal_with_gradient_checkpointing(self):
        self.check_sft(gradient_checkpointing=True)

    def test_grpo_objective_and_gradients_are_equal(self):
        # Clipping, the KL term against a reference, sampler weights (TIS) and row temperatures all on.
        m = model()
        examples = rows()
        grpo = GrpoSection(kl_coef=0.1, loss_agg="role-token-mean", tis_cap=2.0, temperature=0.9)
        padded, packed = engine(m, False, temperature=0.9), engine(m, True, temperature=0.9)
        old = padded.logprobs_no_grad(examples, 3)
        with torch.no_grad():  # a policy that moved: the old log-probs drift, so some ratios clip
            old = {k: v + 0.3 * torch.randn(v.shape, generator=torch.Generator().manual_seed(k)) for k, v in old.items()}
        ref = {k: v - 0.1 for k, v in padded.logprobs_no_grad(examples, 3).items()}
        fn = policy_loss(grpo, role_tokens(examples), 1, old, ref)
        _, loss_a, grads_a = loss_and_grads(padded, examples, fn)
        _, loss_b, grads_b = loss_and_grads(packed, examples, fn)
        self.assertLess(abs(float(loss_a - loss_b)), TOLERANCE)
        for name, g in grads_a.items():
            self.assertLess(float((g - grads_b[name]).abs().max()), TOLERANCE, name)
        token_mean = dataclasses.replace(grpo, loss_agg="token-mean")
        fn = policy_loss(token_mean, role_tokens(examples), 1, old, ref)
        self.assertLess(abs(float(loss_and_grads(padded, examples, fn)[1] - loss_and_grads(packed, examples, fn)[1])),
                        TOLERANCE)

    def test_packing_off_pads_every_row_as_before(self):
        eng = engine(model(), False)
        self.assertFalse(eng.packing)
        examples = rows()
        b = eng.batch(examples)
        self.assertIsNone(b.packing)
        self.assertEqual(tuple(b.input_ids.shape), (len(examples), max(e.length - 1 for e in examples)))
        self.assertEqual([e.index for e in b.examples], [e.index for e in examples])


if __name__ == "__main__":
    unittest.main()
