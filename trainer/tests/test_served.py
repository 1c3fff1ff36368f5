"""Rows sampled by a served engine (``target_ids``, ``target_logprobs``): the trainer trains the ids as
sampled, refuses ids that cannot be this model's, and corrects the sampler/trainer gap with truncated
importance sampling. The whole loop through a server: test/e2e/training-served-lora.test.ts."""
import math
import unittest

import torch

from ..data.batches import Batch
from ..data.encode import encode_rows
from ..errors import TrainerError
from ..tokenizer import load_tokenizer
from ..train.grpo_objective import sampler_weights
from .helpers import TinyModel


def row(i, **extra):
    return {"id": f"r{i}", "role": "act", "source": "rollout", "messages": [{"role": "user", "content": "hi"}],
            "target": "hello there", **extra}


class ServedRowsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tiny = TinyModel(rows=2)
        cls.tokenizer = load_tokenizer(cls.tiny.model)

    @classmethod
    def tearDownClass(cls):
        cls.tiny.cleanup()

    def test_sampled_ids_are_trained_as_sampled_not_retokenized(self):
        plain, sampled = encode_rows([row(0), row(1, target_ids=[7, 8, 9], target_logprobs=[-0.1, -0.2, -0.3])],
                                     self.tokenizer, 4096)[0]
        eos = self.tokenizer.token_id(self.tokenizer.eos_token)
        self.assertEqual(plain.target_ids, self.tokenizer.encode("hello there") + [eos])
        self.assertEqual(plain.prompt_ids, sampled.prompt_ids)
        self.assertEqual(sampled.target_ids, [7, 8, 9])
        self.assertEqual(sampled.sampler_logprobs, [-0.1, -0.2, -0.3])
        self.assertIsNone(plain.sampler_logprobs)

    def test_sampled_ids_that_cannot_be_this_models_are_refused_naming_the_row(self):
        cases = [(row(0, target_ids=[7, 8], target_logprobs=[-0.1]), "target_logprobs 1"),
                 (row(1, target_ids=[7, 10 ** 6], target_logprobs=[-0.1, -0.1]), "outside the tokenizer"),
                 (row(2, target_logprobs=[-0.1]), "needs target_ids")]
        for bad, why in cases:
            with self.assertRaises(TrainerError) as caught:
                encode_rows([bad], self.tokenizer, 4096)
            self.assertEqual(caught.exception.code, "DATA_INVALID")
            self.assertIn(bad["id"], caught.exception.message)
            self.assertIn(why, caught.exception.message)

    def test_truncated_importance_weights_cover_sampled_tokens_only(self):
        plain, sampled = encode_rows([row(0), row(1, target_ids=[7, 8, 9], target_logprobs=[-1.0, -2.0, -0.5])],
                                     self.tokenizer, 4096)[0]
        b = Batch([plain, sampled], 0, torch.device("cpu"))
        old = torch.cat([torch.full((plain.loss_tokens,), -3.0), torch.tensor([-1.5, -1.0, -0.5])])
        w = sampler_weights(b, old, cap=2.0)
        self.assertEqual(w[:plain.loss_tokens].tolist(), [1.0] * plain.loss_tokens)  # no sampler: weight 1
        expected = [math.exp(-0.5), 2.0, 1.0]  # exp(old - sampler), the second one truncated at the cap
        self.assertEqual([round(x, 6) for x in w[plain.loss_tokens:].tolist()], [round(x, 6) for x in expected])


if __name__ == "__main__":
    unittest.main()
