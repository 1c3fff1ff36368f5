"""`export-trl`: training rows as one parquet file in TRL's conversational prompt-completion format,
which `datasets` loads and TRL's SFTTrainer trains as is (checked by hand with trl 1.16.0; TRL is not a
dependency). What TRL will see is checked here: transformers' own apply_chat_template over the
exported prompt, completion and tools gives the same text the studio's trainer trains on."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from datasets import load_dataset  # type: ignore[import-untyped]
from transformers import AutoTokenizer

from ..commands.test_checkpoint import make_test_checkpoint
from ..data.encode import render_row
from ..tokenizer import load_tokenizer
from .fixtures import demonstration_rows, write_rows
from .helpers import REPO, run_cli, subprocess_env


class TrlDatasetTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="trl-dataset-")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_rows_load_with_datasets_and_render_as_the_trainer_renders_them(self):
        rows = demonstration_rows(4)
        rows[0] = dict(rows[0], reward=0.5, group="g1", temperature=0.7, eos=False)
        write_rows(os.path.join(self.dir, "rows.jsonl"), rows)
        out = os.path.join(self.dir, "rows.parquet")
        code, events, err = run_cli(["export-trl", "--rows", os.path.join(self.dir, "rows.jsonl"), "--out", out])
        self.assertEqual(code, 0, err)
        self.assertEqual(events[-1]["rows"], len(rows))
        ds = load_dataset("parquet", data_files=out, split="train")
        self.assertEqual(len(ds), len(rows))
        for column in ("prompt", "completion", "tools", "id", "role", "source", "weight", "reward", "group"):
            self.assertIn(column, ds.column_names)
        first = ds[0]
        self.assertEqual((first["reward"], first["group"], first["temperature"], first["eos"]), (0.5, "g1", 0.7, False))
        self.assertEqual(first["completion"], [{"role": "assistant", "content": rows[0]["target"]}])

        # A Qwen3 folder's tokenizer, through transformers as TRL calls it: the same prompt and target
        # text as the studio's trainer renders (the end token aside, which TRL appends itself).
        folder = os.path.join(self.dir, "qwen3")
        make_test_checkpoint(folder, model_type="qwen3")
        hf = AutoTokenizer.from_pretrained(folder)
        studio = load_tokenizer(folder)
        for row, example in zip(rows, ds, strict=True):
            tools = json.loads(example["tools"]) if example["tools"] else None
            prompt = hf.apply_chat_template(example["prompt"], tools=tools, add_generation_prompt=True, tokenize=False)
            whole = hf.apply_chat_template(example["prompt"] + example["completion"], tools=tools, tokenize=False)
            want_prompt, _ = render_row(row, studio)
            self.assertEqual(prompt, want_prompt, row["id"])
            # The completion as the template renders an assistant turn: Qwen3's puts an empty <think>
            # block before it and strips its leading newline (docs/trainer-config.md says so).
            self.assertTrue(whole.startswith(prompt), row["id"])
            self.assertIn(row["target"].strip(), whole[len(prompt):], row["id"])

    def test_rows_come_on_stdin_and_bad_rows_are_named(self):
        out = os.path.join(self.dir, "piped.parquet")
        lines = "".join(json.dumps(r) + "\n" for r in demonstration_rows(2))
        done = subprocess.run([sys.executable, "-m", "trainer", "export-trl", "--rows", "-", "--out", out], cwd=REPO,
                              env=subprocess_env(), input=lines, capture_output=True, text=True, check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(len(load_dataset("parquet", data_files=out, split="train")), 6)
        bad = subprocess.run([sys.executable, "-m", "trainer", "export-trl", "--rows", "-", "--out", out], cwd=REPO,
                             env=subprocess_env(), input='{"id": "x"}\n', capture_output=True, text=True, check=False)
        error = json.loads(bad.stdout.splitlines()[-1])
        self.assertEqual((bad.returncode, error["code"]), (2, "DATA_INVALID"))
        self.assertIn("-:1", error["message"])


if __name__ == "__main__":
    unittest.main()
