"""A training run killed with SIGKILL resumes from its last checkpoint and ends bit-identical to a
run that was never interrupted (weights and optimizer state)."""
import json
import os
import signal
import time
import unittest

import torch

from .helpers import TinyModel, load_weights, of, run_cli, trainer_process

STEPS = 24


class ResumeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tiny = TinyModel()

    @classmethod
    def tearDownClass(cls):
        cls.tiny.cleanup()

    def config(self, name):
        cfg = {"out_dir": name, "seed": 3, "threads": 1, "model": {"path": "init"}, "data": {"train": ["demo.jsonl"]},
               "optim": {"lr": 0.005, "weight_decay": 0.1, "warmup_steps": 3},
               "train": {"steps": STEPS, "batch_size": 6, "micro_batch_size": 4, "checkpoint_every": 4,
                         "keep_checkpoints": 2, "export_at_end": False}}
        return self.tiny.config(name, cfg)

    def kill_after_checkpoint(self, config, step):
        """Runs the trainer in a child process and SIGKILLs it right after checkpoint ``step``."""
        proc = trainer_process(["sft", "--config", config])
        seen = []
        deadline = time.monotonic() + 120
        try:
            for line in proc.stdout:
                event = json.loads(line)
                seen.append(event)
                if event["event"] == "checkpoint" and event["step"] == step:
                    proc.send_signal(signal.SIGKILL)
                    break
                self.assertLess(time.monotonic(), deadline, "the child run took too long")
        finally:
            proc.wait(timeout=60)
            proc.stdout.close()
            proc.stderr.close()
        return proc.returncode, seen

    def test_killed_run_resumes_bit_exactly(self):
        code, events, err = run_cli(["sft", "--config", self.config("straight")])
        self.assertEqual(code, 0, err)
        self.assertNotIn("resume", [e["event"] for e in events])

        killed_config = self.config("killed")
        returncode, seen = self.kill_after_checkpoint(killed_config, 8)
        self.assertEqual(returncode, -signal.SIGKILL)
        self.assertNotIn("done", [e["event"] for e in seen])
        # A checkpoint folder left half-written by a crash is never resumed from.
        os.makedirs(self.tiny.path("killed", "checkpoints", "step-99999999.tmp"))

        code, events, err = run_cli(["sft", "--config", killed_config])
        self.assertEqual(code, 0, err)
        resume = of(events, "resume")
        self.assertEqual(len(resume), 1)
        self.assertGreaterEqual(resume[0]["step"], 8)
        self.assertEqual(of(events, "step")[0]["step"], resume[0]["step"] + 1)

        straight = load_weights(self.tiny.path("straight", "final"))
        resumed = load_weights(self.tiny.path("killed", "final"))
        for name in straight:
            self.assertTrue(torch.equal(straight[name], resumed[name]), name)

        def state(run):
            return torch.load(self.tiny.path(run, "checkpoints", f"step-{STEPS:08d}", "trainer_state.pt"),
                              weights_only=False)

        a, b = state("straight")["optimizer"]["state"], state("killed")["optimizer"]["state"]
        for key in a:
            self.assertTrue(torch.equal(a[key]["exp_avg_sq"], b[key]["exp_avg_sq"]))
        # Only the newest checkpoints are kept.
        kept = sorted(d for d in os.listdir(self.tiny.path("straight", "checkpoints")) if d.startswith("step-"))
        self.assertEqual(kept, [f"step-{STEPS - 4:08d}", f"step-{STEPS:08d}"])

        # Going on with more steps bends the learning-rate schedule: the resume says so.
        code, events, err = run_cli(["sft", "--config", self.config("straight"), "--set", f"train.steps={STEPS + 4}"])
        self.assertEqual(code, 0, err)
        self.assertEqual(of(events, "resume")[0]["step"], STEPS)
        warnings = [w for w in of(events, "warning") if w["code"] == "RESUME_CONFIG_CHANGED"]
        self.assertEqual(len(warnings), 1)
        self.assertIn("train.steps", warnings[0]["message"])
        self.assertEqual(of(events, "step")[-1]["step"], STEPS + 4)


if __name__ == "__main__":
    unittest.main()
