"""transformers is the reference implementation of the trainer's decoder: a random Llama, Qwen2 or
Qwen3 made by transformers (from the config.json the trainer writes), saved with save_pretrained and
read back through the importer's path (config.json -> ModelConfig, safetensors by parameter name),
computes the same logits (fp32, 1e-4) on the training path and on the exported signature with its KV
cache: a prefill, a decode step, and a left-padded batch. Skipped where transformers is not installed
(the Debian packages of CI have none); offline: transformers never touches the network."""
import importlib.util
import os
import tempfile
import unittest

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers is imported: no hub look-ups, ever

import torch  # noqa: E402

from ..model.config import ModelConfig  # noqa: E402
from ..model.folder import load_model  # noqa: E402

HAS_TRANSFORMERS = importlib.util.find_spec("transformers") is not None
TOLERANCE = 1e-4
VOCAB = 96


def trainer_config(model_type, tied):
    """Tiny, with grouped-query attention; Qwen3 with a head_dim other than hidden / heads, as it allows."""
    return ModelConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, head_dim=24 if model_type == "qwen3" else None,
                       rope_theta=5000.0, rms_norm_eps=1e-5, model_type=model_type, tie_word_embeddings=tied,
                       eos_token_id=1, pad_token_id=0)


def randomize(model):
    """Weights far from transformers' init (norms near 1, biases non-zero) so every tensor matters."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.normal_(1.0 if name.endswith("norm.weight") else 0.0, 0.1 if name.endswith("norm.weight") else 0.08)


def reference_pair(model_type, tied, folder):
    """``(transformers model, trainer model)`` with the same weights: the first saved, the second imported."""
    import transformers
    torch.manual_seed(0)
    hf_config = transformers.AutoConfig.for_model(**trainer_config(model_type, tied).to_hf())
    reference = transformers.AutoModelForCausalLM.from_config(hf_config, attn_implementation="eager").eval()
    randomize(reference)
    reference.save_pretrained(folder)
    return reference, load_model(folder).eval()


def left_padded(rows):
    """``(input_ids, attention_mask, position_ids)`` of token lists padded on the left, positions from 0."""
    width = max(len(r) for r in rows)
    ids = torch.tensor([[0] * (width - len(r)) + r for r in rows])
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
    return ids, mask, (mask.cumsum(-1) - 1).clamp(min=0)


def cache_tensors(cache):
    """transformers' cache as the trainer's ``[k0, v0, k1, v1, ...]``."""
    return [t for layer in cache.layers for t in (layer.keys, layer.values)]


@unittest.skipUnless(HAS_TRANSFORMERS, "transformers is not installed")
class TransformersParityTest(unittest.TestCase):
    CASES = [(model_type, tied) for model_type in ("llama", "qwen2", "qwen3") for tied in (False, True)]

    @classmethod
    def setUpClass(cls):
        torch.set_num_threads(1)
        cls.tmp = tempfile.TemporaryDirectory(prefix="transformers-parity-")
        cls.pairs = {case: reference_pair(*case, os.path.join(cls.tmp.name, "-".join(map(str, case)))) for case in cls.CASES}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assertClose(self, ours, reference, what):
        self.assertEqual(ours.shape, reference.shape, what)
        self.assertLessEqual((ours - reference).abs().max().item(), TOLERANCE, what)

    def test_imported_config_is_the_reference_config(self):
        for (model_type, tied), (reference, ours) in self.pairs.items():
            with self.subTest(model_type=model_type, tied=tied):
                c = ours.config
                self.assertEqual((c.model_type, c.tie_word_embeddings, c.head_dim, c.rope_theta),
                                 (model_type, tied, reference.model.layers[0].self_attn.head_dim, 5000.0))
                self.assertEqual(sorted(ours.state_dict()), sorted(reference.state_dict()))

    def test_training_path(self):
        ids = torch.randint(0, VOCAB, (2, 12), generator=torch.Generator().manual_seed(1))
        for (model_type, tied), (reference, ours) in self.pairs.items():
            expected = reference(ids).logits
            for attention in ("eager", "sdpa"):
                with self.subTest(model_type=model_type, tied=tied, attention=attention), torch.no_grad():
                    ours.attention = attention
                    self.assertClose(ours.lm_head(ours.hidden_states(ids)), expected, "logits")
            ours.attention = "eager"

    def test_prefill_and_decode_with_the_cache(self):
        rows = [[5, 17, 42, 8, 91, 3, 60], [11, 2, 77, 30, 9, 64, 21]]
        self.check_decode(rows)

    def test_left_padded_batch(self):
        self.check_decode([[5, 17, 42], [11, 2, 77, 30, 9, 64, 21], [40, 41, 42, 43, 44]])

    def check_decode(self, rows):
        """Prefill ``rows`` (left-padded), then one token per row; logits of real tokens and caches agree."""
        import transformers
        ids, mask, pos = left_padded(rows)
        step = torch.tensor([[7], [13], [50]][:len(rows)])
        step_mask = torch.cat([mask, torch.ones(len(rows), 1, dtype=mask.dtype)], dim=1)
        step_pos = pos[:, -1:] + 1
        real = mask.bool()
        for (model_type, tied), (reference, ours) in self.pairs.items():
            with self.subTest(model_type=model_type, tied=tied), torch.no_grad():
                cache = transformers.DynamicCache(config=reference.config)
                expected = reference(ids, attention_mask=mask, position_ids=pos, cache=cache, use_cache=True).logits
                logits, *present = ours(ids, mask, pos)
                self.assertClose(logits[real], expected[real], "prefill logits")
                for i, (a, b) in enumerate(zip(present, cache_tensors(cache), strict=True)):
                    self.assertClose(a, b, f"prefill cache {i}")
                expected = reference(step, attention_mask=step_mask, position_ids=step_pos, cache=cache, use_cache=True).logits
                logits, *present = ours(step, step_mask, step_pos, *present)
                self.assertClose(logits, expected, "decode logits")
                for i, (a, b) in enumerate(zip(present, cache_tensors(cache), strict=True)):
                    self.assertClose(a, b, f"decode cache {i}")


if __name__ == "__main__":
    unittest.main()
