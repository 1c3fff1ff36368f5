"""Rows sampled by a served engine (``target_ids``, ``target_logprobs``): the trainer trains the ids as
sampled, refuses ids that cannot be this model's, and corrects the sampler/trainer gap with truncated
importance sampling. The whole loop through a server: test/e2e/training-served-lora.test.ts."""
import math
import unittest

import torch

from ..data.batches import Batch
from ..data.encode import encode_rows, render_prompt
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


class ServedFullFineTuningTest(unittest.TestCase):
    """Full fine-tuning through a served engine: each iteration the weights are saved and reloaded in
    the server (SGLang's /update_weights_from_disk; here the stand-in), so the second iteration's
    rollouts come from the updated policy: the server's log-probs of its samples equal the trainer's."""

    def test_the_server_samples_the_updated_weights_each_iteration(self):
        import json as json_
        import os
        import subprocess
        import sys
        import tempfile

        from ..commands.test_checkpoint import make_test_checkpoint
        from .helpers import REPO, run_cli, subprocess_env
        with tempfile.TemporaryDirectory(prefix="served-full-") as tmp:
            base = os.path.join(tmp, "base")
            make_test_checkpoint(base, model_type="qwen3", seed=2)
            server = subprocess.Popen([sys.executable, "-m", "trainer.serve_hf", "--model", base, "--port", "0",
                                       "--served-model-name", "base", "--device", "cpu"], cwd=REPO,
                                      env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True)
            try:
                assert server.stdout is not None
                url = json_.loads(server.stdout.readline())["url"]
                cfg = {"out_dir": os.path.join(tmp, "run"), "threads": 1, "model": {"path": base, "backend": "transformers"},
                       "optim": {"lr": 0.01, "schedule": "constant"},
                       "train": {"micro_batch_size": 8, "export_at_end": False},
                       "grpo": {"iterations": 2, "kl_coef": 0.01},
                       "rollouts": {"server_url": url, "server_model": "base",
                                    "command": [sys.executable, os.path.join(REPO, "scripts", "gpu_check_lora.py"),
                                                "--rollout", "{endpoint}", "{model}", "{out}", "{seed}"]}}
                path = os.path.join(tmp, "grpo.json")
                with open(path, "w", encoding="utf-8") as f:
                    json_.dump(cfg, f)
                code, events, err = run_cli(["grpo", "--config", path])
            finally:
                server.terminate()
                server.wait(timeout=30)
                server.stdout.close()
            self.assertEqual(code, 0, err[-3000:])
            served = [e for e in events if e["event"] == "served"]
            self.assertEqual([e["model"] for e in served], ["base", "base"])
            self.assertTrue(all(e["path"].endswith("model") for e in served))
            steps = [e for e in events if e["event"] == "step"]
            self.assertGreater(steps[0]["grad_norm"], 0)  # the first iteration moved the weights
            # The KL reference is the frozen base: 0 before the first update, above 0 after it.
            self.assertEqual(steps[0]["roles"]["act"]["kl"], 0.0)
            self.assertGreater(steps[-1]["roles"]["act"]["kl"], 0.0)
            gaps = [e["sampler_gap"] for e in events if e["event"] == "iteration"]
            self.assertEqual(len(gaps), 2)
            # Sampled after the reload: the server computes what the trainer computes (fp32 both sides).
            self.assertLess(gaps[1]["max_abs"], 1e-3)


class TrlEpisodeTest(unittest.TestCase):
    """What `trl-grpo` hands TRL for one episode: the first act prompt, then the conversation with the act
    turns trained and everything between them masked out."""

    def test_an_episode_row_becomes_one_sequence_with_the_act_turns_marked(self):
        from ..train.trl_grpo import episode_sequence
        tiny = TinyModel(rows=2)
        try:
            tokenizer = load_tokenizer(tiny.model)
            first, second = "\n<tool_call>\n{\"name\": \"a\"}\n</tool_call>", "done"
            row = {"id": "e1/act", "role": "act", "source": "rollout", "train_history": True, "reward": 0.75,
                   "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": first},
                                {"role": "tool", "content": "ok"}],
                   "target": second, "target_ids": [7, 8], "target_logprobs": [-0.5, -0.25]}
            seq = episode_sequence(row, tokenizer)
            eos = tokenizer.token_id(tokenizer.eos_token)
            want_prompt = tokenizer.encode(render_prompt(dict(row, messages=row["messages"][:1]), tokenizer))
            self.assertEqual(seq["prompt_ids"], want_prompt)
            completion, mask = seq["completion_ids"], seq["env_mask"]
            self.assertEqual(len(completion), len(mask))
            trained = [t for t, m in zip(completion, mask, strict=True) if m]
            # The first turn with its end token, then the sampled last turn; the tool response is masked.
            self.assertEqual(trained, tokenizer.encode(first) + [eos] + [7, 8])
            self.assertIn(0, mask)
            self.assertEqual(seq["logprobs"][-2:], [-0.5, -0.25])
            self.assertEqual(seq["reward"], 0.75)
        finally:
            tiny.cleanup()
