"""``model_slots.onnx`` (trainer/export/slots_graph.py) computes what the PyTorch model computes, read the
way the policy host's slot scheduler reads it: rows of different lengths in one pass, their caches in
slots longer than any of them (the bias hides the rest), only the new tokens' keys and values returned.
For llama (tied and untied), qwen2 (q/k/v biases) and qwen3 (q/k norms, its own head_dim), with
external weights referenced from model.onnx_data rather than copied."""
import importlib.util
import os
import tempfile
import unittest
from typing import Any

import numpy as np
import onnx
import torch

from ..export.onnx_export import export_onnx
from ..export.slots_graph import SLOTS_FILE
from ..model.config import ModelConfig
from ..model.llama import LlamaForCausalLM

HAS_ONNXRUNTIME = importlib.util.find_spec("onnxruntime") is not None
TOLERANCE = 1e-4
HIDDEN = -1e4  # the host's bias for a key a query must not see (slotScheduler.ts)
SLOT = 48  # every slot is longer than the rows' caches


def tiny(model_type: str, tied: bool = False) -> LlamaForCausalLM:
    fields: dict[str, Any] = {"model_type": model_type, "vocab_size": 90, "hidden_size": 32, "intermediate_size": 48,
              "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
              "tie_word_embeddings": tied}
    if model_type == "qwen3":
        fields["head_dim"] = 12
    if model_type == "qwen2":
        fields["attention_bias"] = True
    torch.manual_seed(0)
    model = LlamaForCausalLM(ModelConfig(eos_token_id=1, pad_token_id=0, **fields)).eval()
    with torch.no_grad():  # biases and norms away from their initial zeros and ones
        for name, p in model.named_parameters():
            if "norm" in name or name.endswith("bias"):
                p.add_(0.1 * torch.randn_like(p))
    return model


class Slots:
    """The host's reading of the slots graph: a cache of rows, a pass over a contiguous range of them."""

    def __init__(self, path: str, config: ModelConfig, rows: int) -> None:
        import onnxruntime
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        self.layers = config.num_hidden_layers
        shape = (rows, config.num_key_value_heads, SLOT, config.head_dim)
        self.cache = {f"{i}.{k}": np.zeros(shape, np.float32) for i in range(self.layers) for k in ("key", "value")}
        self.lengths = [0] * rows

    def run(self, first: int, chunks: list[list[int]]) -> np.ndarray:
        """Feeds ``chunks[b]`` to row ``first + b``; returns each row's logits at its last token."""
        batch, seq = len(chunks), max(len(c) for c in chunks)
        ids = np.zeros((batch, seq), np.int64)
        positions = np.zeros((batch, seq), np.int64)
        bias = np.full((batch, seq, SLOT + seq), HIDDEN, np.float32)
        rows = np.zeros(batch, np.int64)
        for b, chunk in enumerate(chunks):
            length = self.lengths[first + b]
            for j in range(seq):
                real = min(j, len(chunk) - 1)
                if j < len(chunk):
                    ids[b, j] = chunk[j]
                positions[b, j] = length + real
                bias[b, j, :length] = 0
                bias[b, j, SLOT:SLOT + real + 1] = 0
            rows[b] = b * seq + len(chunk) - 1
        feeds = {"input_ids": ids, "position_ids": positions, "attention_bias": bias, "logits_rows": rows}
        for name, buffer in self.cache.items():
            feeds[f"past_key_values.{name}"] = buffer[first:first + batch]
        names = ["logits"] + [f"new.{name}" for name in self.cache]
        out = dict(zip(names, self.session.run(names, feeds), strict=True))
        for b, chunk in enumerate(chunks):
            row, length = first + b, self.lengths[first + b]
            for name, buffer in self.cache.items():
                buffer[row, :, length:length + len(chunk)] = out[f"new.{name}"][b, :, :len(chunk)]
            self.lengths[row] += len(chunk)
        return out["logits"][:, 0]


@unittest.skipUnless(HAS_ONNXRUNTIME, "onnxruntime is not installed")
class SlotsGraphTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="slots-test-")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    @torch.no_grad()
    def check(self, model: LlamaForCausalLM, external: str = "auto") -> None:
        onnx_dir = os.path.join(self.dir, model.config.model_type)
        *_, slots_bytes = export_onnx(model, onnx_dir, external_data=external, cascade=False, slots=True)
        path = os.path.join(onnx_dir, SLOTS_FILE)
        self.assertEqual(os.path.getsize(path), slots_bytes)
        onnx.checker.check_model(path)
        g = torch.Generator().manual_seed(1)
        prompts = [torch.randint(2, model.config.vocab_size, (n,), generator=g).tolist() for n in (9, 4, 13)]
        slots = Slots(path, model.config, rows=3)

        def expected(tokens):
            return model.lm_head(model.hidden_states(torch.tensor([tokens])))[0, -1].numpy()

        def same(logits, sequences):
            for b, tokens in enumerate(sequences):
                self.assertLess(float(np.abs(logits[b] - expected(tokens)).max()), TOLERANCE, (b, len(tokens)))

        # Three first prompts of different lengths in one pass (right-padded).
        same(slots.run(0, prompts), prompts)
        # A decode step of the three rows, each at its own length.
        step = [[int(t)] for t in torch.randint(2, model.config.vocab_size, (3,), generator=g)]
        seqs = [p + s for p, s in zip(prompts, step, strict=True)]
        same(slots.run(0, step), seqs)
        # Chunks of several tokens after a cache (the second and third rows only), then one row alone.
        more = [torch.randint(2, model.config.vocab_size, (n,), generator=g).tolist() for n in (5, 2)]
        seqs[1:] = [s + m for s, m in zip(seqs[1:], more, strict=True)]
        same(slots.run(1, more), seqs[1:])
        seqs[2] += [7]
        same(slots.run(2, [[7]]), seqs[2:])

    def test_llama(self):
        self.check(tiny("llama"))

    def test_llama_tied(self):
        self.check(tiny("llama", tied=True))

    def test_qwen2(self):
        self.check(tiny("qwen2"))

    def test_qwen3(self):
        self.check(tiny("qwen3"))

    def test_weights_are_the_main_graphs(self):
        # With external weights every matrix is a reference into model.onnx_data, not a second copy.
        self.check(tiny("llama"), external="always")
        onnx_dir = os.path.join(self.dir, "llama")
        graph = onnx.load(os.path.join(onnx_dir, SLOTS_FILE), load_external_data=False).graph
        external = [t for t in graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
        self.assertEqual(len(external), 2 + 7 * 2)  # embedding, lm_head, 7 matrices a layer
        self.assertEqual({e.value for t in external for e in t.external_data if e.key == "location"},
                         {"model.onnx_data"})
        self.assertLess(os.path.getsize(os.path.join(onnx_dir, SLOTS_FILE)), 64_000)

    def test_export_slots_adds_the_graph_to_a_folder(self):
        # `python3 -m trainer export-slots` completes a folder exported before the slots graph existed.
        from .helpers import TinyModel, run_cli
        tiny_folder = TinyModel()
        try:
            folder = tiny_folder.path("exported")
            code, _, err = run_cli(["export", "--set", f"model.path={tiny_folder.model}", "--set", f"out_dir={folder}",
                                    "--set", "export.slots=false"])
            self.assertEqual(code, 0, err)
            self.assertFalse(os.path.exists(os.path.join(folder, "onnx", SLOTS_FILE)))
            code, events, err = run_cli(["export-slots", "--source", folder])
            self.assertEqual(code, 0, err)
            self.assertEqual(events[-1]["event"], "done")
            self.assertGreater(os.path.getsize(os.path.join(folder, "onnx", SLOTS_FILE)), 1000)
            code, events, _ = run_cli(["export-slots", "--source", os.path.join(folder, "missing")])
            self.assertEqual((code, events[-1]["code"]), (1, "MODEL_MISSING"))
        finally:
            tiny_folder.cleanup()


if __name__ == "__main__":
    unittest.main()
