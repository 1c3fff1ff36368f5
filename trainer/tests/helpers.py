"""Shared set-up of the trainer tests: running the CLI in-process, a tiny tokenizer + model folder,
and launching the trainer as a real subprocess."""
import io
import json
import os
import subprocess
import sys
import tempfile

import torch

from ..cli import main
from ..schema import load_schema, validate
from .fixtures import demonstration_rows, write_config, write_rows

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY_ARCHITECTURE = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                     "num_key_value_heads": 2}
_EVENT_SCHEMA = load_schema("trainer-events")


def run_cli(argv):
    """``(exit code, events, stderr)`` of one in-process run of ``python3 -m trainer``."""
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out, err)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    return code, events, err.getvalue()


def event_errors(events):
    """Schema violations of a list of events (empty when all are valid)."""
    problems = []
    for e in events:
        problems += [f"{e.get('event')}: {m}" for m in validate(_EVENT_SCHEMA, e)]
    return problems


def of(events, name):
    return [e for e in events if e["event"] == name]


def subprocess_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


def trainer_process(args, **kwargs):
    """``python3 -m trainer <args>`` as a child process with stdout piped."""
    return subprocess.Popen([sys.executable, "-m", "trainer", *args], cwd=REPO, env=subprocess_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


class TinyModel:
    """A temporary folder with demonstration rows, a trained tokenizer and a random tiny model."""

    def __init__(self, rows=10, vocab_size=400, architecture=None):
        torch.set_num_threads(1)
        self._tmp = tempfile.TemporaryDirectory(prefix="trainer-test-")
        self.dir = self._tmp.name
        self.rows = write_rows(self.path("demo.jsonl"), demonstration_rows(rows))
        tok_cfg = write_config(self.path("tokenizer-config.json"), {"out_dir": "tokenizer", "tokenizer": {
            "row_files": ["demo.jsonl"], "vocab_size": vocab_size}})
        code, events, err = run_cli(["tokenizer", "--config", tok_cfg])
        assert code == 0, err
        init_cfg = write_config(self.path("init.json"), {"out_dir": "init", "seed": 0, "model": {
            "tokenizer": "tokenizer", "architecture": architecture or TINY_ARCHITECTURE}})
        code, events, err = run_cli(["init", "--config", init_cfg])
        assert code == 0, err
        self.model = self.path("init")

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def config(self, name, cfg):
        """Writes ``<dir>/<name>.json`` and returns its path."""
        return write_config(self.path(f"{name}.json"), cfg)

    def cleanup(self):
        self._tmp.cleanup()


def load_weights(folder):
    return torch.load(os.path.join(folder, "pytorch_model.bin"), map_location="cpu")


def max_weight_diff(a, b):
    return max(float((a[k] - b[k]).abs().max()) for k in a)
