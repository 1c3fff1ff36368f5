"""The Llama model: the KV-cache path agrees with full recomputation, padding is masked, the cascade
signature (a shared prompt cache plus each sample's own) agrees with it too, the training path agrees
with the exported signature, and folders save and load (tied weights too)."""
import tempfile
import unittest

import torch

from ..errors import TrainerError
from ..model import LlamaForCausalLM, ModelConfig
from ..model.folder import load_model, save_weights, write_metadata
from .helpers import TinyModel


def tiny_config(**kw):
    base = dict(vocab_size=97, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, initializer_range=0.2, eos_token_id=1, pad_token_id=0)
    base.update(kw)
    return ModelConfig(**base)


def full(model, ids, mask=None):
    mask = torch.ones_like(ids) if mask is None else mask
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    return model(ids, mask, pos)


class ModelTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.model = LlamaForCausalLM(tiny_config()).eval()

    @torch.no_grad()
    def test_kv_cache_gives_the_same_logits_as_recomputing(self):
        ids = torch.randint(0, 97, (2, 12))
        expected = full(self.model, ids)[0]
        out = full(self.model, ids[:, :7])
        past = list(out[1:])
        step_logits = [out[0]]
        for t in range(7, 12):
            mask = torch.ones(2, t + 1, dtype=torch.long)
            pos = torch.full((2, 1), t)
            out = self.model(ids[:, t:t + 1], mask, pos, *past)
            past = list(out[1:])
            step_logits.append(out[0])
        self.assertLess(float((torch.cat(step_logits, 1) - expected).abs().max()), 1e-5)
        self.assertEqual(tuple(past[0].shape), (2, 2, 12, 8))  # [batch, kv_heads, seq, head_dim]

    @torch.no_grad()
    def test_cascade_over_a_shared_prefix_gives_each_sample_its_own_logits(self):
        # 3 samples continue one 9-token prompt with different tokens: first 2 at once (causal within
        # the chunk), then one at a time. Each must get the logits of its whole sequence recomputed.
        for kv_heads in (2, 4):  # grouped-query attention and plain multi-head
            model = LlamaForCausalLM(tiny_config(num_key_value_heads=kv_heads)).eval()
            prompt, suffixes = torch.randint(0, 97, (1, 9)), torch.randint(0, 97, (3, 5))
            expected = full(model, torch.cat([prompt.expand(3, 9), suffixes], 1))[0][:, 9:]
            prefix = full(model, prompt)[1:]
            past = [torch.zeros(3, kv_heads, 0, 8) for _ in prefix]
            logits = []
            for start, end in ((0, 2), (2, 3), (3, 4), (4, 5)):
                pos = torch.arange(9 + start, 9 + end)[None].expand(3, -1)
                out = model.forward_cascade(suffixes[:, start:end], pos, *prefix, *past)
                logits.append(out[0])
                past = list(out[1:])
            self.assertLess(float((torch.cat(logits, 1) - expected).abs().max()), 1e-5, kv_heads)
            self.assertEqual(tuple(past[0].shape), (3, kv_heads, 5, 8))  # the samples' own tokens only

    @torch.no_grad()
    def test_left_padding_is_masked(self):
        ids = torch.randint(2, 97, (1, 6))
        padded = torch.cat([torch.zeros(1, 3, dtype=torch.long), ids], 1)
        mask = torch.cat([torch.zeros(1, 3, dtype=torch.long), torch.ones(1, 6, dtype=torch.long)], 1)
        alone = full(self.model, ids)[0]
        with_pad = full(self.model, padded, mask)[0][:, 3:]
        self.assertLess(float((alone - with_pad).abs().max()), 1e-5)

    @torch.no_grad()
    def test_training_path_matches_the_exported_signature(self):
        ids = torch.randint(0, 97, (3, 10))
        train_logits = self.model.lm_head(self.model.hidden_states(ids))
        self.assertLess(float((train_logits - full(self.model, ids)[0]).abs().max()), 1e-5)

    def test_parameter_count_formula(self):
        for kw in ({}, {"tie_word_embeddings": True}, {"attention_bias": True}):
            config = tiny_config(**kw)
            self.assertEqual(config.num_parameters(), sum(p.numel() for p in LlamaForCausalLM(config).parameters()), kw)

    def test_tied_weights_are_saved_once_and_restored(self):
        tiny = TinyModel()
        try:
            from ..tokenizer import load_tokenizer
            tok = load_tokenizer(tiny.model)
            model = LlamaForCausalLM(tiny_config(vocab_size=len(tok), tie_word_embeddings=True))
            with tempfile.TemporaryDirectory() as d:
                write_metadata(d, model.config, tok, tiny.model)
                save_weights(d, model)
                saved = torch.load(f"{d}/pytorch_model.bin")
                self.assertNotIn("lm_head.weight", saved)
                loaded = load_model(d)
                self.assertIs(loaded.lm_head.weight, loaded.model.embed_tokens.weight)
                self.assertTrue(torch.equal(loaded.lm_head.weight, model.lm_head.weight))
        finally:
            tiny.cleanup()

    def test_impossible_shapes_are_refused(self):
        with self.assertRaises(TrainerError):
            tiny_config(num_key_value_heads=3)
        with self.assertRaises(TrainerError):
            tiny_config(head_dim=7)
        with self.assertRaises(TrainerError):
            ModelConfig.from_hf({"model_type": "gpt2", "vocab_size": 10})

    def test_config_json_of_transformers_5_reads_as_of_4(self):
        # transformers 5 moved rope_theta into rope_parameters and renamed torch_dtype to dtype.
        v5 = {"model_type": "qwen3", "vocab_size": 10, "dtype": "bfloat16",
              "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}}
        config = ModelConfig.from_hf(v5)
        self.assertEqual((config.rope_theta, config.torch_dtype), (1000000.0, "bfloat16"))
        self.assertEqual(ModelConfig.from_hf(config.to_hf()).to_hf(), config.to_hf())
        with self.assertRaises(TrainerError):
            ModelConfig.from_hf({**v5, "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e6, "factor": 4.0}})


if __name__ == "__main__":
    unittest.main()
