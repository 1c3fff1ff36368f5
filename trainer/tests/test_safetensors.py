"""The trainer's safetensors files (through the safetensors package): the format's bytes, every dtype
checkpoints use, tied tensors, sharded folders with an index (what EnvACE's scripts/model_merger.py
leaves through save_pretrained), and a coded error for each kind of damage."""
import json
import os
import struct
import tempfile
import unittest

import torch
from safetensors import safe_open

from ..errors import TrainerError
from ..model import safetensors as st


def raw_file(path, header, data):
    raw = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + data)


class SafetensorsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="safetensors-test-")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_reads_the_format_as_specified(self):
        # The example of the format's README: an I32 [2, 2] tensor after a JSON header, plus metadata.
        raw_file(self.path("a.safetensors"), {"test": {"dtype": "I32", "shape": [2, 2], "data_offsets": [0, 16]},
                                              "__metadata__": {"foo": "bar"}}, struct.pack("<4i", 1, -2, 3, 4))
        got = st.read_file(self.path("a.safetensors"))
        self.assertEqual(list(got), ["test"])
        self.assertTrue(torch.equal(got["test"], torch.tensor([[1, -2], [3, 4]], dtype=torch.int32)))

    def test_every_float_dtype_round_trips_bit_for_bit(self):
        g = torch.Generator().manual_seed(0)
        tensors = {"f32": torch.randn(3, 5, generator=g), "f16": torch.randn(7, generator=g).half(),
                   "bf16": torch.randn(2, 3, 4, generator=g).bfloat16(), "i64": torch.arange(6), "empty": torch.zeros(0, 4)}
        st.write_file(self.path("b.safetensors"), tensors, {"format": "pt"})
        with open(self.path("b.safetensors"), "rb") as f:
            self.assertEqual(struct.unpack("<Q", f.read(8))[0] % 8, 0)  # the data starts 8-byte aligned
        with safe_open(self.path("b.safetensors"), "pt") as f:
            self.assertEqual(f.metadata(), {"format": "pt"})
            self.assertEqual({k: f.get_slice(k).get_dtype() for k in f.keys()},
                             {"f32": "F32", "f16": "F16", "bf16": "BF16", "i64": "I64", "empty": "F32"})
        got = st.read_file(self.path("b.safetensors"))
        for name, t in tensors.items():
            self.assertEqual(got[name].dtype, t.dtype, name)
            self.assertTrue(torch.equal(got[name], t), name)
        # BF16 bytes are the upper half of the float32 ones, little-endian.
        one = st.write_file(self.path("one.safetensors"), {"x": torch.tensor([1.0]).bfloat16()})
        self.assertIsNone(one)
        with open(self.path("one.safetensors"), "rb") as f:
            self.assertEqual(f.read()[-2:], b"\x80\x3f")

    def test_tied_tensors_are_written_as_copies(self):
        # safetensors refuses tensors that share memory; a tied lm_head is written as its own tensor.
        embed = torch.randn(6, 4)
        st.write_file(self.path("tied.safetensors"), {"embed": embed, "lm_head": embed, "rows": embed[:2]})
        got = st.read_file(self.path("tied.safetensors"))
        self.assertTrue(torch.equal(got["embed"], embed) and torch.equal(got["lm_head"], embed))
        self.assertTrue(torch.equal(got["rows"], embed[:2]))
        self.assertEqual(sorted(os.listdir(self.dir)), ["tied.safetensors"])  # no temporary file left

    def test_a_dtype_safetensors_lacks_is_a_coded_error(self):
        with self.assertRaises(TrainerError) as caught:
            st.write_file(self.path("c.safetensors"), {"c": torch.zeros(2, dtype=torch.complex128)})
        self.assertEqual(caught.exception.code, "EXPORT_FAILED")
        self.assertIn("c.safetensors", caught.exception.message)

    def test_sharded_folder_with_an_index(self):
        tensors = {f"model.layers.{i}.w": torch.full((4, 4), float(i)) for i in range(5)}
        files = st.write_folder(self.dir, tensors, max_shard_bytes=100)
        self.assertEqual(files[-1], st.INDEX_FILE)
        self.assertEqual(len(files), 6)
        with open(self.path(st.INDEX_FILE)) as f:
            index = json.load(f)
        self.assertEqual(index["metadata"]["total_size"], 5 * 64)
        self.assertEqual(sorted(index["weight_map"]), sorted(tensors))
        seen = []
        got = st.read_folder(self.dir, lambda done, total, file: seen.append((done, total)))
        self.assertEqual(seen[-1], (5, 5))
        self.assertTrue(all(torch.equal(got[k], v) for k, v in tensors.items()))
        # Written again small enough for one file: the old shards and index go.
        self.assertEqual(st.write_folder(self.dir, tensors), [st.SINGLE_FILE])
        self.assertEqual(sorted(os.listdir(self.dir)), [st.SINGLE_FILE])

    def test_a_missing_shard_is_named(self):
        st.write_folder(self.dir, {"a": torch.ones(8), "b": torch.ones(8)}, max_shard_bytes=40)
        os.remove(self.path("model-00002-of-00002.safetensors"))
        with self.assertRaises(TrainerError) as caught:
            st.read_folder(self.dir)
        self.assertEqual(caught.exception.code, "MODEL_MISSING")
        self.assertIn("model-00002-of-00002.safetensors", caught.exception.message)

    def test_damaged_files_are_coded_errors(self):
        good = {"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
        cases = {
            "short": (None, b"\x01\x02"),
            "huge header": (None, struct.pack("<Q", 2 ** 40) + b"{}"),
            "not json": (None, struct.pack("<Q", 3) + b"{x}"),
            "past the end": ({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 80]}}, b"\0" * 8),
            "wrong size": ({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8),
            "truncated": (good, b"\0" * 4),
            "unknown dtype": ({"x": {"dtype": "F9", "shape": [2], "data_offsets": [0, 2]}}, b"\0" * 2),
            "bad shape": ({"x": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 8]}}, b"\0" * 8),
            "bad metadata": ({**good, "__metadata__": {"n": 1}}, b"\0" * 8),
        }
        for name, (header, data) in cases.items():
            path = self.path(name.replace(" ", "-") + ".safetensors")
            if header is None:
                with open(path, "wb") as f:
                    f.write(data)
            else:
                raw_file(path, header, data)
            with self.assertRaises(TrainerError, msg=name) as caught:
                st.read_file(path)
            self.assertEqual(caught.exception.code, "WEIGHTS_INVALID", name)
            self.assertIn(path, caught.exception.message)

    def test_an_index_pointing_outside_its_folder_is_refused(self):
        with open(self.path(st.INDEX_FILE), "w") as f:
            json.dump({"weight_map": {"a": "../elsewhere.safetensors"}}, f)
        with self.assertRaises(TrainerError) as caught:
            st.read_folder(self.dir)
        self.assertEqual(caught.exception.code, "WEIGHTS_INVALID")


if __name__ == "__main__":
    unittest.main()
