"""Rows -> training text and token ids: template + target + end token, loss on the target only.
(Byte-identity with transformers.js' rendering: test/e2e/trainer-parity.test.ts.)"""
import unittest

import torch

from ..chat_template import CHAT_TEMPLATE, render_chat
from ..data.batches import Batch, micro_batches, micro_count, step_indices
from ..data.encode import encode_rows, render_row
from ..jsonfmt import js_json, js_number
from .fixtures import TOOLS, demonstration_rows
from .helpers import TinyModel, event_errors, of, run_cli


class JsonFormatTest(unittest.TestCase):
    def test_numbers_are_written_as_javascript_writes_them(self):
        # Expected values are JSON.stringify's output for the same doubles.
        cases = {1e-7: "1e-7", 1.5e-7: "1.5e-7", 0.000001: "0.000001", 123.456: "123.456", 1e21: "1e+21",
                 1e16: "10000000000000000", -0.0: "0", 100.0: "100", 5e-324: "5e-324", -3.75e-10: "-3.75e-10",
                 123456789012345680000.0: "123456789012345680000", 7: "7", 2 ** 60: str(2 ** 60)}
        for value, text in cases.items():
            self.assertEqual(js_number(value), text, value)

    def test_json_like_python_tojson_without_ascii_escapes(self):
        value = {"b": [1, 2.5, None, True, "é😀\n\"q\""], "a": {}}
        self.assertEqual(js_json(value), '{"b": [1, 2.5, null, true, "é😀\\n\\"q\\""], "a": {}}')
        self.assertEqual(js_json(value, indent=2),
                         '{\n  "b": [\n    1,\n    2.5,\n    null,\n    true,\n    "é😀\\n\\"q\\""\n  ],\n  "a": {}\n}')


class _TinyTokenizerTest(unittest.TestCase):
    """A tiny model folder and its tokenizer, once per class."""

    @classmethod
    def setUpClass(cls):
        cls.tiny = TinyModel()
        from ..tokenizer import load_tokenizer
        cls.tok = load_tokenizer(cls.tiny.model)

    @classmethod
    def tearDownClass(cls):
        cls.tiny.cleanup()


class RenderTest(_TinyTokenizerTest):
    def test_training_text_is_prompt_then_target_then_end_token(self):
        row = demonstration_rows(1)[2]  # act row after a tool response
        prompt, target = render_row(row, self.tok)
        self.assertEqual(prompt, render_chat(CHAT_TEMPLATE, row["messages"], TOOLS, True))
        self.assertTrue(prompt.endswith("<|im_start|>assistant\n"))
        self.assertEqual(target, row["target"] + "<|im_end|>")
        # The policy's earlier raw text is kept byte for byte as history.
        self.assertIn("<|im_start|>assistant\n" + row["messages"][2]["content"] + "<|im_end|>\n", prompt)
        self.assertIn("<|im_start|>user\n<tool_response>\n" + row["messages"][3]["content"] + "\n</tool_response><|im_end|>",
                      prompt)

    def test_loss_mask_covers_exactly_target_and_end_token(self):
        rows = demonstration_rows(2)
        examples, dropped = encode_rows(rows, self.tok, 4096)
        self.assertEqual(dropped, [])
        b = Batch(examples[:3], pad_id=0, device="cpu")
        self.assertEqual(int(b.mask.sum()), sum(len(e.target_ids) for e in examples[:3]))
        targets = b.labels[b.mask].tolist()
        self.assertEqual(targets, sum((e.target_ids for e in examples[:3]), []))
        self.assertEqual(examples[0].target_ids[-1], self.tok.token_id("<|im_end|>"))
        self.assertEqual(self.tok.decode(examples[1].target_ids), rows[1]["target"] + "<|im_end|>")
        self.assertEqual(b.token_row.tolist(), sum(([r] * len(e.target_ids) for r, e in enumerate(examples[:3])), []))

    def test_a_row_without_an_end_token_trains_its_target_only(self):
        # A rollout sample that stopped on a stop string never sampled the end token.
        row = {**demonstration_rows(1)[1], "eos": False}
        _, target = render_row(row, self.tok)
        self.assertEqual(target, row["target"])
        (with_eos, without), _ = encode_rows([demonstration_rows(1)[1], row], self.tok, 4096)
        self.assertEqual(without.target_ids, with_eos.target_ids[:-1])
        self.assertEqual(with_eos.target_ids[-1], self.tok.token_id("<|im_end|>"))
        self.assertEqual(without.loss_tokens, with_eos.loss_tokens - 1)

    def test_render_command_prints_each_row_as_trained(self):
        code, events, err = run_cli(["render", "--set", f"model.path={self.tiny.model}", "--set",
                                     f'data.train=["{self.tiny.rows}"]'])
        self.assertEqual(code, 0, err)
        rows = of(events, "row")
        self.assertEqual(len(rows), 30)
        examples, _ = encode_rows(demonstration_rows(10), self.tok, 4096)
        for event, example in zip(rows, examples, strict=True):
            self.assertEqual(event["text"], event["prompt"] + event["target"])
            self.assertEqual(event["prompt_ids"], example.prompt_ids)
            self.assertEqual(event["target_ids"], example.target_ids)
        self.assertEqual(event_errors(events), [])

    def test_rows_longer_than_max_length_are_dropped(self):
        rows = demonstration_rows(2)
        examples, dropped = encode_rows(rows, self.tok, 120)
        self.assertTrue(dropped)
        self.assertTrue(all(e.length > 120 for e in dropped))
        self.assertTrue(all(e.length <= 120 for e in examples))

    def test_data_order_is_a_function_of_seed_and_step(self):
        first = [step_indices(10, 4, seed=3, step=s) for s in range(5)]
        self.assertEqual(first, [step_indices(10, 4, seed=3, step=s) for s in range(5)])
        flat = sum(first, [])
        self.assertEqual(sorted(flat[:10]), list(range(10)))  # every row once per epoch
        self.assertNotEqual(first, [step_indices(10, 4, seed=4, step=s) for s in range(5)])

    def test_every_rank_runs_the_same_number_of_micro_batches(self):
        examples, _ = encode_rows(demonstration_rows(3), self.tok, 4096)
        count = micro_count(len(examples), world=2, micro_size=2)
        shares = [micro_batches(examples[r::2], 2, count) for r in range(2)]
        self.assertEqual(len(shares[0]), len(shares[1]))
        self.assertEqual(sorted(e.index for mb in shares[0] + shares[1] for e in mb), list(range(len(examples))))




class HistoryRowsTest(_TinyTokenizerTest):
    """`train_history` act rows train every assistant turn of an episode from one row."""

    def last_act_row(self):
        acts = [r for r in demonstration_rows(1) if r["role"] == "act"]
        return max(acts, key=lambda r: len(r["messages"]))

    def test_pieces_join_exactly_as_the_whole_conversation_tokenizes(self):
        row = dict(self.last_act_row(), train_history=True)
        plain, = encode_rows([self.last_act_row()], self.tok, 10_000)[0]
        history, = encode_rows([row], self.tok, 10_000)[0]
        # Newlines are pieces of their own, so turn-by-turn tokens equal the whole prompt's tokens.
        self.assertEqual(history.prompt_ids, plain.prompt_ids)
        self.assertEqual(plain.history_spans, ())

    def test_spans_cover_each_earlier_assistant_turn_and_its_end_token(self):
        row = dict(self.last_act_row(), train_history=True)
        ex, = encode_rows([row], self.tok, 10_000)[0]
        turns = [m["content"] for m in row["messages"] if m["role"] == "assistant"]
        self.assertEqual(len(ex.history_spans), len(turns))
        for (start, end), text in zip(ex.history_spans, turns, strict=True):
            self.assertEqual(self.tok.decode(ex.prompt_ids[start:end]), text + self.tok.eos_token)
        self.assertEqual(ex.loss_tokens, len(ex.target_ids) + sum(e - s for s, e in ex.history_spans))

    def test_the_batch_mask_trains_history_turns_and_the_target_only(self):
        row = dict(self.last_act_row(), train_history=True)
        ex, = encode_rows([row], self.tok, 10_000)[0]
        b = Batch([ex], 0, torch.device("cpu"))
        self.assertEqual(int(b.mask.sum()), ex.loss_tokens)
        self.assertEqual(b.num_tokens, ex.loss_tokens)
        trained = [int(b.labels[0, i]) for i in range(b.mask.shape[1]) if b.mask[0, i]]
        expected = [t for s, e in ex.history_spans for t in ex.prompt_ids[s:e]] + ex.target_ids
        self.assertEqual(trained, expected)

    def test_rehearse_rows_ignore_the_flag(self):
        row = dict(next(r for r in demonstration_rows(1) if r["role"] == "rehearse"), train_history=True)
        ex, = encode_rows([row], self.tok, 10_000)[0]
        self.assertEqual(ex.history_spans, ())


class CompactTemplateTest(unittest.TestCase):
    def test_lists_one_line_per_tool_with_argument_types_and_enums(self):
        from ..chat_template import COMPACT_TOOLS_TEMPLATE
        tools = [{"type": "function", "function": {"name": "cancel", "description": "Cancel an order.", "parameters": {
            "type": "object", "properties": {"order_id": {"type": "string"},
                                             "reason": {"type": "string", "enum": ["no longer needed", "mistake"]},
                                             "note": {"type": "string"}},
            "required": ["order_id", "reason"]}}},
            {"type": "function", "function": {"name": "ping", "description": "",
                                              "parameters": {"type": "object", "properties": {}}}}]
        text = render_chat(COMPACT_TOOLS_TEMPLATE,
                           [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}], tools)
        self.assertIn('\n- cancel(order_id: string, reason: string in ["no longer needed", "mistake"], note?: string): '
                      'Cancel an order.', text)
        self.assertIn("\n- ping()\n", text)
        full = render_chat(CHAT_TEMPLATE, [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}], tools)
        # Only the system turn differs: the conversation after it renders the same.
        self.assertEqual(text.split("<|im_end|>\n", 1)[1], full.split("<|im_end|>\n", 1)[1])
        self.assertLess(len(text), len(full))


if __name__ == "__main__":
    unittest.main()
