"""SFT runs end to end on a tiny model: the loss goes down, the update does not depend on how the
batch is split into micro-batches, and every event matches the documented schema."""
import os
import unittest

from .fixtures import write_rows
from .helpers import TinyModel, event_errors, load_weights, max_weight_diff, of, run_cli


class SftTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tiny = TinyModel()

    @classmethod
    def tearDownClass(cls):
        cls.tiny.cleanup()

    def sft(self, name, **train):
        cfg = {"out_dir": name, "threads": 1, "model": {"path": "init"}, "data": {"train": ["demo.jsonl"]},
               "optim": {"lr": 0.01, "warmup_steps": 2}, "train": dict({"steps": 40, "batch_size": 8,
                                                                          "micro_batch_size": 4, "checkpoint_every": 20,
                                                                          "export_at_end": False}, **train)}
        return run_cli(["sft", "--config", self.tiny.config(name, cfg)])

    def test_loss_decreases_for_both_roles(self):
        code, events, err = self.sft("decrease")
        self.assertEqual(code, 0, err)
        steps = of(events, "step")
        self.assertEqual(len(steps), 40)
        first, last = steps[0], steps[-1]
        self.assertLess(last["loss"], 0.6 * first["loss"])
        early = {r: sum(s["roles"][r]["loss"] for s in steps[:5] if r in s["roles"]) for r in ("act", "rehearse")}
        late = {r: sum(s["roles"][r]["loss"] for s in steps[-5:] if r in s["roles"]) for r in ("act", "rehearse")}
        for role in ("act", "rehearse"):
            self.assertLess(late[role], early[role], role)
        self.assertEqual([c["step"] for c in of(events, "checkpoint")], [20, 40])
        self.assertEqual(event_errors(events), [])
        self.assertEqual([e["event"] for e in events[:3]], ["start", "model", "data"])
        self.assertEqual(events[-1]["event"], "done")
        self.assertTrue(os.path.exists(os.path.join(self.tiny.path("decrease"), "final", "pytorch_model.bin")))
        with open(self.tiny.path("decrease", "events.jsonl"), encoding="utf-8") as f:
            self.assertEqual(len(f.read().splitlines()), len(events))

    def test_a_policy_folder_trains_again_and_keeps_its_rehearsal_config(self):
        # The embedded default policy is an exported folder: ONNX weights, no pytorch_model.bin, and the
        # studio's rehearsal_config.json, which the fine-tuned policy's final and export must keep.
        exported = self.tiny.path("policy")
        code, _, err = run_cli(["export", "--set", f"model.path={self.tiny.model}", "--set", f"out_dir={exported}"])
        self.assertEqual(code, 0, err)
        sidecar = '{"rehearsePrompt": {"includeTools": false}}\n'
        with open(os.path.join(exported, "rehearsal_config.json"), "w", encoding="utf-8") as f:
            f.write(sidecar)
        cfg_path = self.tiny.config("from-policy2", {"out_dir": "from-policy2", "threads": 1, "model": {"path": exported},
                                                     "data": {"train": ["demo.jsonl"]},
                                                     "train": {"steps": 2, "batch_size": 4, "export_at_end": True}})
        code, events, err = run_cli(["sft", "--config", cfg_path])
        self.assertEqual(code, 0, err)
        final = self.tiny.path("from-policy2", "final")
        self.assertTrue(os.path.exists(os.path.join(final, "onnx", "model.onnx")))
        with open(os.path.join(final, "rehearsal_config.json"), encoding="utf-8") as f:
            self.assertEqual(f.read(), sidecar)

    def test_update_does_not_depend_on_micro_batching(self):
        code1, _, err1 = self.sft("micro1", steps=3, micro_batch_size=1)
        code8, _, err8 = self.sft("micro8", steps=3, micro_batch_size=8)
        self.assertEqual((code1, code8), (0, 0), err1 + err8)
        a, b = load_weights(self.tiny.path("micro1", "final")), load_weights(self.tiny.path("micro8", "final"))
        self.assertLess(max_weight_diff(a, b), 1e-5)
        self.assertGreater(max_weight_diff(a, load_weights(self.tiny.model)), 1e-3)  # it did train

    def test_row_weights_scale_the_loss(self):
        rows_path = self.tiny.path("demo.jsonl")
        with open(rows_path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        import json
        heavy = [dict(json.loads(line), weight=2.0) for line in lines]
        write_rows(self.tiny.path("heavy.jsonl"), heavy)

        def cfg(name, data):
            return {"out_dir": name, "threads": 1, "model": {"path": "init"}, "data": {"train": [data]},
                    "train": {"steps": 1, "batch_size": 4, "export_at_end": False}}

        _, plain, _ = run_cli(["sft", "--config", self.tiny.config("w1", cfg("w1", "demo.jsonl"))])
        _, doubled, _ = run_cli(["sft", "--config", self.tiny.config("w2", cfg("w2", "heavy.jsonl"))])
        self.assertAlmostEqual(of(doubled, "step")[0]["loss"], 2 * of(plain, "step")[0]["loss"], places=5)

    def test_invalid_rows_give_one_error_naming_file_and_line(self):
        bad = self.tiny.path("bad.jsonl")
        with open(bad, "w", encoding="utf-8") as f:
            f.write('{"id": "a", "role": "act", "messages": [{"role": "user", "content": "x"}], "target": "y", '
                    '"source": "demonstration"}\n')
            f.write('{"id": "b", "role": "critic", "messages": [], "target": "y", "source": "demonstration"}\n')
            f.write("not json\n")
        cfg = {"out_dir": "bad", "model": {"path": "init"}, "data": {"train": ["bad.jsonl"]}}
        code, events, _ = run_cli(["sft", "--config", self.tiny.config("bad", cfg)])
        self.assertEqual(code, 2)
        errors = of(events, "error")
        self.assertEqual(len(errors), 1)
        self.assertEqual(errors[0]["code"], "DATA_INVALID")
        self.assertIn("bad.jsonl:2", errors[0]["message"])
        self.assertIn("bad.jsonl:3", errors[0]["message"])
        self.assertIn("role", errors[0]["message"])
        self.assertEqual(event_errors(events), [])


if __name__ == "__main__":
    unittest.main()
