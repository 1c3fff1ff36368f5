"""The exported folder has the layout transformers.js loads (names, dynamic axes, KV cache) and the
policy host's cascade graph beside it, weights past 2 GB move into one model.onnx_data (which the
cascade graph shares), and test-model folders are reproducible from their seed. Where Python's
onnxruntime is installed, both graphs compute what the PyTorch model computes (logits and caches).
(Numerical parity with transformers.js: test/e2e/trainer-parity.test.ts; of the cascade graph with
the normal one in onnxruntime: test/e2e/policy-cascade.test.ts.)"""
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
import unittest

import onnx
import torch
from onnx import numpy_helper

from ..commands.test_model import make_test_model
from ..errors import TrainerError
from ..export.external_data import consolidate
from ..export.onnx_export import io_names
from ..model.folder import load_model
from .helpers import TinyModel, of, run_cli


def dims(value_info):
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


HAS_ONNXRUNTIME = importlib.util.find_spec("onnxruntime") is not None
TOLERANCE = 1e-4


def run_onnx(path, inputs):
    """``{output name: tensor}`` of the graph at ``path`` run by onnxruntime on the CPU (one thread)."""
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    outputs = session.run(None, {name: value.numpy() for name, value in inputs.items()})
    return {o.name: torch.from_numpy(v) for o, v in zip(session.get_outputs(), outputs, strict=True)}


def random_cache(config, rows, length, generator):
    return [torch.randn(rows, config.num_key_value_heads, length, config.head_dim, generator=generator)
            for _ in range(2 * config.num_hidden_layers)]


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class ExportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tiny = TinyModel()
        code, cls.events, err = run_cli(["export", "--set", f"model.path={cls.tiny.model}",
                                         "--set", f"out_dir={cls.tiny.path('exported')}"])
        assert code == 0, err

    @classmethod
    def tearDownClass(cls):
        cls.tiny.cleanup()

    def test_folder_layout_and_graph_signature(self):
        folder = self.tiny.path("exported")
        for name in ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "onnx/model.onnx"):
            self.assertTrue(os.path.exists(os.path.join(folder, name)), name)
        with open(os.path.join(folder, "config.json")) as f:
            config = json.load(f)
        self.assertEqual((config["model_type"], config["num_hidden_layers"], config["num_key_value_heads"], config["head_dim"]),
                         ("llama", 2, 2, 8))
        with open(os.path.join(folder, "generation_config.json")) as f:
            self.assertEqual(len(json.load(f)["eos_token_id"]), 2)
        onnx.checker.check_model(os.path.join(folder, "onnx", "model.onnx"))
        graph = onnx.load(os.path.join(folder, "onnx", "model.onnx")).graph
        inputs = {i.name: dims(i) for i in graph.input}
        outputs = {o.name: dims(o) for o in graph.output}
        self.assertEqual(list(inputs)[:3], ["input_ids", "attention_mask", "position_ids"])
        self.assertEqual(inputs["input_ids"], ["batch_size", "sequence_length"])
        self.assertEqual(inputs["attention_mask"], ["batch_size", "past_sequence_length + sequence_length"])
        for i in range(2):
            for kind in ("key", "value"):
                self.assertEqual(inputs[f"past_key_values.{i}.{kind}"], ["batch_size", 2, "past_sequence_length", 8])
                self.assertEqual(outputs[f"present.{i}.{kind}"], ["batch_size", 2, "past_sequence_length + sequence_length", 8])
        self.assertEqual(outputs["logits"][:2], ["batch_size", "sequence_length"])
        self.assertEqual(of(self.events, "export")[0]["external_data"], False)

    def test_cascade_graph_signature(self):
        path = os.path.join(self.tiny.path("exported"), "onnx", "model_cascade.onnx")
        onnx.checker.check_model(path)
        graph = onnx.load(path).graph
        inputs = {i.name: dims(i) for i in graph.input}
        outputs = {o.name: dims(o) for o in graph.output}
        self.assertEqual(list(inputs)[:3], ["input_ids", "position_ids", "prefix_key_values.0.key"])
        self.assertNotIn("attention_mask", inputs)
        for i in range(2):
            for kind in ("key", "value"):
                self.assertEqual(inputs[f"prefix_key_values.{i}.{kind}"], [1, 2, "prefix_sequence_length", 8])
                self.assertEqual(inputs[f"past_key_values.{i}.{kind}"], ["batch_size", 2, "past_sequence_length", 8])
                self.assertEqual(outputs[f"present.{i}.{kind}"], ["batch_size", 2, "past_sequence_length + sequence_length", 8])
        self.assertEqual(list(outputs), ["logits"] + [f"present.{i}.{k}" for i in range(2) for k in ("key", "value")])
        self.assertEqual(of(self.events, "export")[0]["cascade_bytes"], os.path.getsize(path))

    def assertSameOutputs(self, names, ours, theirs):
        self.assertEqual(list(theirs), names)
        for name, tensor in zip(names, ours, strict=True):
            self.assertEqual(tuple(theirs[name].shape), tuple(tensor.shape), name)
            self.assertLessEqual(float((theirs[name] - tensor).abs().max()), TOLERANCE, name)

    @unittest.skipUnless(HAS_ONNXRUNTIME, "onnxruntime is not installed")
    @torch.no_grad()
    def test_onnxruntime_computes_what_pytorch_computes(self):
        # Shapes other than the traced example's, and a left-padded row: the dynamic axes and the mask.
        model = load_model(self.tiny.model).eval()
        config, g = model.config, torch.Generator().manual_seed(3)
        b, past, s = 3, 5, 4
        ids = torch.randint(0, config.vocab_size, (b, s), generator=g)
        mask = torch.ones(b, past + s, dtype=torch.int64)
        mask[0, :2] = 0
        pos = (mask.cumsum(-1) - 1).clamp(min=0)[:, past:]
        inputs, outputs, _ = io_names(config.num_hidden_layers)
        feeds = dict(zip(inputs, (ids, mask, pos, *random_cache(config, b, past, g)), strict=True))
        ours = model(*feeds.values())
        self.assertSameOutputs(outputs, ours, run_onnx(os.path.join(self.tiny.path("exported"), "onnx", "model.onnx"), feeds))

    @unittest.skipUnless(HAS_ONNXRUNTIME, "onnxruntime is not installed")
    @torch.no_grad()
    def test_onnxruntime_computes_what_pytorch_computes_with_the_cascade_graph(self):
        model = load_model(self.tiny.model).eval()
        config, g = model.config, torch.Generator().manual_seed(4)
        n, prefix, past, s = 4, 6, 3, 2
        ids = torch.randint(0, config.vocab_size, (n, s), generator=g)
        pos = torch.arange(prefix + past, prefix + past + s)[None].expand(n, s).contiguous()
        inputs, outputs, _ = io_names(config.num_hidden_layers, cascade=True)
        values = (ids, pos, *random_cache(config, 1, prefix, g), *random_cache(config, n, past, g))
        feeds = dict(zip(inputs, values, strict=True))
        ours = model.forward_cascade(*feeds.values())
        path = os.path.join(self.tiny.path("exported"), "onnx", "model_cascade.onnx")
        self.assertSameOutputs(outputs, ours, run_onnx(path, feeds))

    def test_cascade_and_slots_false_write_the_normal_graph_only(self):
        folder = self.tiny.path("plain")
        code, events, err = run_cli(["export", "--set", f"model.path={self.tiny.model}", "--set", f"out_dir={folder}",
                                     "--set", "export.cascade=false", "--set", "export.slots=false"])
        self.assertEqual(code, 0, err)
        self.assertEqual(os.listdir(os.path.join(folder, "onnx")), ["model.onnx"])
        self.assertNotIn("cascade_bytes", of(events, "export")[0])
        self.assertEqual(digest(os.path.join(folder, "onnx", "model.onnx")),
                         digest(os.path.join(self.tiny.path("exported"), "onnx", "model.onnx")))

    def test_external_data_always(self):
        folder = self.tiny.path("external")
        code, events, err = run_cli(["export", "--set", f"model.path={self.tiny.model}", "--set", f"out_dir={folder}",
                                     "--set", "export.external_data=always"])
        self.assertEqual(code, 0, err)
        self.assertTrue(of(events, "export")[0]["external_data"])
        self.assertGreater(os.path.getsize(os.path.join(folder, "onnx", "model.onnx_data")), 100_000)
        with open(os.path.join(folder, "config.json")) as f:
            self.assertEqual(json.load(f)["transformers.js_config"], {"use_external_data_format": {"model.onnx": 1}})
        onnx.checker.check_model(os.path.join(folder, "onnx", "model.onnx"))
        # The cascade graph's weights are those of model.onnx_data, stored once.
        self.assertEqual(sorted(os.listdir(os.path.join(folder, "onnx"))),
                         ["model.onnx", "model.onnx_data", "model_cascade.onnx", "model_slots.onnx"])
        cascade = os.path.join(folder, "onnx", "model_cascade.onnx")
        onnx.checker.check_model(cascade)
        self.assertLess(os.path.getsize(cascade), 100_000)
        shared = [t for t in onnx.load(cascade, load_external_data=False).graph.initializer
                  if t.data_location == onnx.TensorProto.EXTERNAL]
        self.assertGreater(len(shared), 10)
        self.assertEqual({e.value for t in shared for e in t.external_data if e.key == "location"}, {"model.onnx_data"})
        inline = onnx.load(os.path.join(self.tiny.path("exported"), "onnx", "model_cascade.onnx"))
        weights = {t.name: numpy_helper.to_array(t) for t in inline.graph.initializer}
        loaded = onnx.load(cascade)  # external data resolved from model.onnx_data
        for t in loaded.graph.initializer:
            self.assertTrue((numpy_helper.to_array(t) == weights[t.name]).all(), t.name)

    def test_weights_come_back_from_an_exported_folder(self):
        # A policy folder without pytorch_model.bin (the embedded default) trains again from its ONNX weights.
        folder = self.tiny.path("exported")
        self.assertFalse(os.path.exists(os.path.join(folder, "pytorch_model.bin")))
        original = load_model(self.tiny.model).state_dict()
        recovered = load_model(folder).state_dict()
        self.assertEqual(sorted(recovered), sorted(original))
        for name, tensor in original.items():
            self.assertTrue(torch.equal(recovered[name], tensor), name)
        broken = self.tiny.path("broken-onnx")
        os.makedirs(os.path.join(broken, "onnx"))
        shutil.copy(os.path.join(folder, "config.json"), broken)
        with open(os.path.join(broken, "onnx", "model.onnx"), "wb") as f:
            f.write(b"not a graph")
        with self.assertRaises(TrainerError) as caught:
            load_model(broken)
        self.assertEqual(caught.exception.code, "MODEL_MISSING")
        self.assertIn("model.onnx cannot be read", str(caught.exception))

    def test_tensor_files_are_gathered_into_one_data_file(self):
        # torch.onnx writes one file per tensor past 2 GB; build such a model with onnx itself.
        with tempfile.TemporaryDirectory() as d:
            a, b = torch.randn(64, 32), torch.randn(32)
            graph = onnx.helper.make_graph(
                [onnx.helper.make_node("MatMul", ["x", "A"], ["y0"]), onnx.helper.make_node("Add", ["y0", "B"], ["y"])],
                "g", [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 64])],
                [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 32])],
                [numpy_helper.from_array(a.numpy(), "A"), numpy_helper.from_array(b.numpy(), "B")])
            model = onnx.helper.make_model(graph)
            os.makedirs(os.path.join(d, "split"))
            onnx.save_model(model, os.path.join(d, "split", "model.onnx"), save_as_external_data=True,
                            all_tensors_to_one_file=False, size_threshold=0)
            self.assertGreater(len(os.listdir(os.path.join(d, "split"))), 2)
            os.makedirs(os.path.join(d, "one"))
            size = consolidate(os.path.join(d, "split", "model.onnx"), os.path.join(d, "one", "model.onnx"))
            self.assertEqual(sorted(os.listdir(os.path.join(d, "one"))), ["model.onnx", "model.onnx_data"])
            self.assertEqual(size, (64 * 32 + 32) * 4)
            loaded = onnx.load(os.path.join(d, "one", "model.onnx"))
            tensors = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in loaded.graph.initializer}
            self.assertTrue(torch.equal(tensors["A"], a) and torch.equal(tensors["B"], b))

    def test_test_model_is_reproducible_from_its_seed(self):
        with tempfile.TemporaryDirectory() as d:
            make_test_model(os.path.join(d, "a"), seed=1)
            make_test_model(os.path.join(d, "b"), seed=1)
            make_test_model(os.path.join(d, "c"), seed=2)
            for name in ("onnx/model.onnx", "onnx/model_cascade.onnx", "tokenizer.json", "tokenizer_config.json", "config.json"):
                self.assertEqual(digest(os.path.join(d, "a", name)), digest(os.path.join(d, "b", name)), name)
            self.assertNotEqual(digest(os.path.join(d, "a", "onnx/model.onnx")), digest(os.path.join(d, "c", "onnx/model.onnx")))


if __name__ == "__main__":
    unittest.main()
