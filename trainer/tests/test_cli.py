"""Command-line behaviour a user meets first: a bad config, a bad argument or a missing field gives
exactly one error event on stdout, a message that says what to fix, and a non-zero exit status."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from .helpers import REPO, event_errors, of, run_cli, subprocess_env


def run_process(args):
    proc = subprocess.run([sys.executable, "-m", "trainer", *args], cwd=REPO, env=subprocess_env(),
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


class CliTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_bad_config_is_one_error_event_and_exit_2(self):
        path = self.write("bad.json", json.dumps({"train": {"steps": 0, "stpes": 3}, "optim": {"lr": "fast"}}))
        code, events, stderr = run_process(["sft", "--config", path])
        self.assertEqual(code, 2)
        self.assertEqual(len(events), 1)
        event = events[0]
        self.assertEqual((event["event"], event["code"]), ("error", "CONFIG_INVALID"))
        self.assertIn(".train.stpes: unknown field", event["message"])
        self.assertIn(".train.steps: must be >= 1", event["message"])
        self.assertIn(".optim.lr: expected number", event["message"])
        self.assertIn("docs/trainer-config.md", event["message"])
        self.assertIn("CONFIG_INVALID", stderr)
        self.assertEqual(event_errors(events), [])

    def test_config_that_is_not_json_names_the_line(self):
        path = self.write("broken.json", '{\n  "seed": 1,\n  oops\n}')
        code, events, _ = run_cli(["sft", "--config", path])
        self.assertEqual(code, 2)
        self.assertIn("line 3", of(events, "error")[0]["message"])

    def test_missing_config_file_and_usage_errors(self):
        code, events, _ = run_cli(["sft", "--config", os.path.join(self.tmp.name, "nope.json")])
        self.assertEqual((code, events[0]["code"]), (2, "CONFIG_INVALID"))
        self.assertIn("not found", events[0]["message"])
        for argv in ([], ["fly"], ["sft", "--bogus"]):
            code, events, _ = run_cli(argv)
            self.assertEqual(code, 2, argv)
            self.assertEqual([e["code"] for e in events], ["USAGE"], argv)

    def test_required_fields_are_named(self):
        code, events, _ = run_cli(["sft", "--set", "device=cpu"])
        self.assertEqual(code, 2)
        self.assertIn("out_dir", of(events, "error")[0]["message"])
        code, events, _ = run_cli(["grpo", "--set", "out_dir=" + self.tmp.name, "--set", "model.path=x"])
        self.assertIn("rollouts.command", of(events, "error")[0]["message"])
        code, events, _ = run_cli(["export", "--set", "model.path=" + self.tmp.name])
        self.assertEqual((code, of(events, "error")[0]["code"]), (2, "MODEL_MISSING"))

    def test_set_overrides_are_validated_too(self):
        code, events, _ = run_cli(["sft", "--set", "train.micro_batch_size=-1"])
        self.assertEqual(code, 2)
        self.assertIn("micro_batch_size", events[0]["message"])

    def test_unavailable_device_is_refused(self):
        # No CUDA at all, or no 100th GPU: refused either way, before any work.
        code, events, _ = run_cli(["export", "--device", "cuda:99"])
        self.assertEqual((code, events[0]["code"]), (2, "DEVICE_UNAVAILABLE"))


if __name__ == "__main__":
    unittest.main()
