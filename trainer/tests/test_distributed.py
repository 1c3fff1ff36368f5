"""The same trainer under ``torchrun --nproc_per_node 2`` (gloo on CPU): both replicas stay
bit-identical, and they match one process training on the combined batch."""
import json
import os
import socket
import subprocess
import sys
import unittest

from .fixtures import rollout_rows, write_rows
from .helpers import REPO, TinyModel, load_weights, max_weight_diff, run_cli, subprocess_env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(nproc, args, timeout=300):
    # --redirects/--tee avoid torchrun's crash on Python 3.11 (pytorch#92319); the short monitor
    # interval keeps the launch fast. Rank 0's events are read from <out_dir>/events.jsonl.
    argv = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(nproc), "--redirects", "1",
            "--tee", "1", "--monitor_interval", "0.2", "--master_port", str(free_port()), "-m", "trainer", *args]
    return subprocess.run(argv, cwd=REPO, env=subprocess_env(), capture_output=True, text=True, timeout=timeout)


class DistributedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tiny = TinyModel()

    @classmethod
    def tearDownClass(cls):
        cls.tiny.cleanup()

    def config(self, name):
        # 7 rows per step: one rank gets 4 rows, the other 3 (and a padding pass), as happens in practice.
        cfg = {"out_dir": name, "threads": 1, "model": {"path": "init"}, "data": {"train": ["demo.jsonl"]},
               "optim": {"lr": 0.001}, "train": {"steps": 4, "batch_size": 7, "micro_batch_size": 2,
                                                 "checkpoint_every": 2, "export_at_end": False}}
        return self.tiny.config(name, cfg)

    def test_two_ranks_stay_identical_and_match_one_process(self):
        proc = torchrun(2, ["sft", "--config", self.config("ddp")])
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        with open(self.tiny.path("ddp", "events.jsonl"), encoding="utf-8") as f:
            events = [json.loads(line) for line in f]
        start = events[0]
        self.assertEqual((start["world_size"], start["device"]), (2, "cpu"))
        self.assertTrue(events[-1]["replicas_identical"])
        self.assertEqual([e["step"] for e in events if e["event"] == "checkpoint"], [2, 4])

        code, single, err = run_cli(["sft", "--config", self.config("single")])
        self.assertEqual(code, 0, err)
        ddp_steps = [e for e in events if e["event"] == "step"]
        one_steps = [e for e in single if e["event"] == "step"]
        for a, b in zip(ddp_steps, one_steps, strict=True):
            self.assertAlmostEqual(a["loss"], b["loss"], places=5)
            self.assertEqual(a["roles"]["act"]["tokens"], b["roles"]["act"]["tokens"])
        diff = max_weight_diff(load_weights(self.tiny.path("ddp", "final")), load_weights(self.tiny.path("single", "final")))
        self.assertLess(diff, 2e-5)  # Adam turns float-summation-order noise into ~lr * 1e-2
        self.assertTrue(os.path.exists(self.tiny.path("ddp", "checkpoints", "step-00000004", "trainer_state.pt")))

    def test_grpo_runs_the_rollout_command_once_per_iteration_on_rank_0(self):
        for i in range(2):
            write_rows(self.tiny.path("rollouts", f"iter-{i}.jsonl"), rollout_rows(i))
        script = os.path.join(REPO, "trainer", "tests", "rollout_fixture.py")
        cfg = {"out_dir": "grpo", "threads": 1, "model": {"path": "init"},
               "train": {"micro_batch_size": 4, "export_at_end": False},
               "grpo": {"iterations": 2, "mini_batch_size": 12, "kl_coef": 0.01, "grounding": {"coef": 0.5, "batch_size": 3}},
               "rollouts": {"command": [sys.executable, script, "{iteration}", "{out}", "{model_dir}", "rollouts"]}}
        proc = torchrun(2, ["grpo", "--config", self.tiny.config("grpo", cfg)])
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        with open(self.tiny.path("grpo", "events.jsonl"), encoding="utf-8") as f:
            events = [json.loads(line) for line in f]
        self.assertTrue(events[-1]["replicas_identical"])
        self.assertEqual(len([e for e in events if e["event"] == "step"]), 4)
        with open(self.tiny.path("rollouts", "policies.txt"), encoding="utf-8") as f:
            self.assertEqual([line.split()[0] for line in f], ["0", "1"])

    def test_grpo_by_episode_and_role_token_mean_on_two_ranks_matches_one_process(self):
        # The role token-mean's denominators are the whole mini-batch's, whatever rank and
        # micro-batch a row lands in: 3 episodes (9 rows) a step, 5 rows on one rank and 4 on the other.
        write_rows(self.tiny.path("rollouts", "fair-0.jsonl"), rollout_rows(0))

        def config(name):
            return self.tiny.config(name, {
                "out_dir": name, "threads": 1, "model": {"path": "init"}, "optim": {"lr": 0.003},
                "train": {"micro_batch_size": 2, "export_at_end": False},
                "grpo": {"iterations": 1, "mini_batch_size": 3, "mini_batch_unit": "episode",
                         "loss_agg": "role-token-mean"},
                "rollouts": {"rows": os.path.join(self.tiny.dir, "rollouts", "fair-{iteration}.jsonl")}})
        proc = torchrun(2, ["grpo", "--config", config("fair-ddp")])
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        with open(self.tiny.path("fair-ddp", "events.jsonl"), encoding="utf-8") as f:
            events = [json.loads(line) for line in f]
        self.assertTrue(events[-1]["replicas_identical"])
        code, single, err = run_cli(["grpo", "--config", config("fair-single")])
        self.assertEqual(code, 0, err)
        ddp_steps = [e for e in events if e["event"] == "step"]
        one_steps = [e for e in single if e["event"] == "step"]
        self.assertEqual(len(ddp_steps), 3)
        for a, b in zip(ddp_steps, one_steps, strict=True):
            self.assertAlmostEqual(a["loss"], b["loss"], places=5)
            self.assertEqual(a["roles"]["act"]["tokens"], b["roles"]["act"]["tokens"])
        diff = max_weight_diff(load_weights(self.tiny.path("fair-ddp", "final")),
                               load_weights(self.tiny.path("fair-single", "final")))
        self.assertLess(diff, 2e-5)
        self.assertEqual(events[-1]["act_updates"], 3)


class PaddingTest(unittest.TestCase):
    def test_a_padding_row_makes_a_one_token_batch(self):
        # What a rank with fewer micro-batches than the others runs (its loss is multiplied by 0).
        import torch

        from ..data.batches import Batch
        from ..train.engine import _Padding
        batch = Batch([_Padding(0)], 0, torch.device("cpu"))
        self.assertEqual((batch.input_ids.tolist(), batch.num_tokens, batch.num_input_tokens), ([[0]], 1, 1))


if __name__ == "__main__":
    unittest.main()
