"""scripts/gpu_check_lora.py, the one-command GPU check of LoRA training, runs here at its tiny size on
the CPU: LoRA SFT, the stand-in server, one served GRPO iteration, and the summary it prints. Its GPU
figures go into docs/ from a machine with a GPU; this keeps the script from breaking meanwhile."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from .helpers import REPO, subprocess_env


class GpuCheckScriptTest(unittest.TestCase):
    def test_the_tiny_check_trains_serves_and_summarizes(self):
        with tempfile.TemporaryDirectory(prefix="gpu-check-") as out:
            done = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "gpu_check_lora.py"), "--out", out,
                                   "--tiny", "--plan-gib", "1.0"], cwd=REPO, env=subprocess_env(),
                                  capture_output=True, text=True, timeout=600, check=False)
            self.assertEqual(done.returncode, 0, done.stdout[-2000:] + done.stderr[-2000:])
            lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
            summary = lines[-1]
            self.assertEqual(summary["event"], "summary")
            self.assertGreater(summary["sft_tokens_per_s"], 0)
            self.assertGreater(summary["sampler_gap"]["tokens"], 0)
            self.assertLess(summary["sampler_gap"]["max_abs"], 1e-3)  # fp32 on both sides
            self.assertIn("within_15_percent", summary)
            self.assertTrue(os.path.isfile(os.path.join(out, "sft.run.json")))


if __name__ == "__main__":
    unittest.main()
