"""The copy probe (trainer/probe.py), its sft wiring (probe events, train.max_seconds), the synthetic
copy rows and the minimal chat template."""
import random
import unittest

from ..chat_template import TEMPLATES, render_chat
from ..commands.generate import greedy
from ..data.rows import read_rows
from ..model.folder import load_model
from ..probe import copy_targets, greedy_cached, parse_call, probe_rows, run_probe
from ..synthetic_copy import make_row
from ..tokenizer import load_tokenizer
from .fixtures import demonstration_rows
from .fixtures import write_rows as write_fixture_rows
from .helpers import TinyModel, event_errors, of, run_cli


class ProbeUnitTest(unittest.TestCase):
    def test_parse_call(self):
        self.assertEqual(parse_call('\n<tool_call>\n{"name": "f", "arguments": {"a":"x"}}\n</tool_call>'), ("f", {"a": "x"}))
        self.assertIsNone(parse_call("no call"))
        self.assertIsNone(parse_call('<tool_call>\n{"name": "f", "arguments": {"a":"x"\n</tool_call>'))

    def test_copy_targets_say_where_a_value_first_appears(self):
        row = {"role": "act",
               "target": '\n<tool_call>\n{"name": "g", "arguments": '
                         '{"email":"a.b@x.test","customer_id":"C123456","n":1}}\n</tool_call>',
               "messages": [{"role": "user", "content": "I am a.b@x.test"},
                            {"role": "assistant", "content": "..."},
                            {"role": "tool", "content": '{"customer_id":"C123456"}'}]}
        self.assertEqual(copy_targets(row), [("email", "a.b@x.test", "user"), ("customer_id", "C123456", "tool")])

    def test_synthetic_rows_are_valid_and_copyable(self):
        rng = random.Random(0)
        rows = [make_row(rng, i) for i in range(200)]
        for r in rows:
            call = parse_call(r["target"])
            self.assertIsNotNone(call)
            self.assertEqual(len(copy_targets(r)), len(call[1]), r)
        self.assertGreater(sum(1 for r in rows if any(w == "tool" for _, _, w in copy_targets(r))), 50)

    def test_minimal_template_keeps_the_conversation_and_drops_the_rest(self):
        row = demonstration_rows(1)[2]
        full = render_chat(TEMPLATES["compact"], row["messages"], row["tools"], True)
        small = render_chat(TEMPLATES["minimal"], row["messages"], row["tools"], True)
        self.assertTrue(small.startswith("<|im_start|>system\n# Tools\n- get_weather(city)<|im_end|>\n"))
        self.assertNotIn("helpful agent", small)
        self.assertEqual(full[full.index("<|im_start|>user"):], small[small.index("<|im_start|>user"):])


class ProbeRunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tiny = TinyModel(rows=10)

    @classmethod
    def tearDownClass(cls):
        cls.tiny.cleanup()

    def test_cached_greedy_equals_uncached_greedy(self):
        model = load_model(self.tiny.model).eval()
        tok = load_tokenizer(self.tiny.model)
        ids = tok.encode("<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n<|im_start|>assistant\n")
        _, reference = greedy(model, ids, 12, set())
        self.assertEqual(greedy_cached(model, ids, 12, set()), reference)

    def test_run_probe_figures(self):
        model = load_model(self.tiny.model)
        tok = load_tokenizer(self.tiny.model)
        rows = probe_rows(read_rows([self.tiny.rows]))
        self.assertEqual(len(rows), 10)  # every first act row copies its city from the user
        result = run_probe(model, tok, rows, {model.config.eos_token_id}, max_new_tokens=8, greedy_rows=3)
        self.assertEqual((result["rows"], result["decoded"], result["copy_args"]), (10, 3, 3))
        for key in ("copy_exact", "copy_token_acc", "parse_valid"):
            self.assertTrue(0.0 <= result[key] <= 1.0, key)
        self.assertIsNone(result["copy_exact_tool"])

    def test_sft_emits_probe_events_and_stops_at_max_seconds(self):
        held_out = write_fixture_rows(self.tiny.path("heldout.jsonl"), demonstration_rows(4, seed=7))
        self.assertTrue(held_out)
        cfg = self.tiny.config("sft-probe", {
            "seed": 0, "out_dir": "sft-probe", "model": {"path": "init"}, "data": {"train": ["demo.jsonl"]},
            "train": {"steps": 1000, "batch_size": 4, "micro_batch_size": 2, "log_every": 1, "max_seconds": 0.0,
                      "export_at_end": False},
            "probe": {"rows": ["heldout.jsonl"], "every": 1, "max_rows": 4, "greedy_rows": 2, "max_new_tokens": 8}})
        code, events, err = run_cli(["sft", "--config", cfg])
        self.assertEqual(code, 0, err)
        self.assertEqual(event_errors(events), [])
        self.assertEqual([e["step"] for e in of(events, "step")], [1])
        self.assertEqual([(e["step"], e["rows"], e["decoded"]) for e in of(events, "probe")], [(1, 4, 2)])
        self.assertEqual(of(events, "done")[0]["steps"], 1)


if __name__ == "__main__":
    unittest.main()


class DigitGroupTokenizerTest(unittest.TestCase):
    def test_digit_groups_become_single_tokens_and_the_file_keeps_the_pattern(self):
        import tempfile

        from ..commands.tokenizer import build
        rng = random.Random(0)
        texts = [" ".join(f"C{rng.randrange(10 ** 6):06d} #W{rng.randrange(10 ** 7):07d}" for _ in range(400))
                 + " C192088" * 2]
        with tempfile.TemporaryDirectory() as folder:
            built, _ = build(texts, 1600, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"], 2, folder, 4096, "minimal", 3)
            loaded = load_tokenizer(folder)
            ids = loaded.encode("C192088")
            self.assertEqual([loaded.decode([i]) for i in ids], ["C", "192", "088"])
            self.assertEqual(ids, built.encode("C192088"))
            self.assertEqual(loaded.decode(loaded.encode("x 1234567 y")), "x 1234567 y")
