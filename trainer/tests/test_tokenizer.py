"""The byte-level BPE tokenizer: training, the files it writes, encoding and decoding.
(Ids equal transformers.js' ids: test/unit/trainer-parity.test.ts.)"""
import json
import os
import random
import tempfile
import unittest

from ..errors import TrainerError
from ..tokenizer import DEFAULT_ADDED_TOKENS, SPLIT_PATTERN, load_tokenizer
from ..tokenizer.bytelevel import BYTE_TO_CHAR
from ..tokenizer.files import write_tokenizer
from ..tokenizer.tokenizer import Tokenizer
from ..tokenizer.train import count_words, train_bpe
from ..commands.tokenizer import row_text
from .fixtures import demonstration_rows

CORPUS = [row_text(r) for r in demonstration_rows(10)]


class TokenizerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        merges = train_bpe(count_words(CORPUS, DEFAULT_ADDED_TOKENS), 300)
        cls.tok = write_tokenizer(cls.tmp.name, merges, DEFAULT_ADDED_TOKENS)
        cls.merges = merges

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_round_trips_any_text(self):
        for text in ["café ünïcödé 😀 中文", "tabs\tand\n\nnewlines   spaces", "\x1c\x85\u00a0\ufeff\u2028", "",
                     '{"city":"Paris","temperature":21}', CORPUS[0]]:
            self.assertEqual(self.tok.decode(self.tok.encode(text)), text)

    def test_added_tokens_are_single_ids_even_inside_words(self):
        text = "x<tool_call>\n{}</tool_call><|im_end|>y<execution_result></execution_result><think></think>"
        ids = self.tok.encode(text)
        for token in ["<tool_call>", "</tool_call>", "<|im_end|>", "<execution_result>", "</execution_result>", "<think>", "</think>"]:
            self.assertIn(self.tok.token_id(token), ids)
        self.assertEqual(ids[1], self.tok.token_id("<tool_call>"))

    def test_training_learns_frequent_pieces(self):
        # The corpus repeats "get_weather" and "temperature": they end up as few tokens.
        self.assertLessEqual(len(self.tok.encode("temperature")), 3)
        self.assertLess(len(self.tok.encode(CORPUS[0])), len(CORPUS[0].encode("utf-8")) / 2)

    def test_training_does_not_depend_on_corpus_order(self):
        shuffled = CORPUS[:]
        random.Random(1).shuffle(shuffled)
        self.assertEqual(train_bpe(count_words(shuffled, DEFAULT_ADDED_TOKENS), 300), self.merges)

    def test_merges_apply_lowest_rank_first(self):
        units = [BYTE_TO_CHAR[b] for b in b"abc"]
        a, b, c = units
        vocab = {BYTE_TO_CHAR[i]: i for i in range(256)}
        vocab.update({b + c: 256, a + b: 257, a + b + c: 258})
        # "bc" has rank 0, so "abc" -> "a" + "bc", and "ab"+"c" (rank 2) never applies.
        tok = Tokenizer(vocab, [[b, c], [a, b], [a + b, c]], [], SPLIT_PATTERN)
        self.assertEqual(tok.encode("abc"), [vocab[a], 256])
        tok2 = Tokenizer(vocab, [[a, b], [b, c], [a + b, c]], [], SPLIT_PATTERN)
        self.assertEqual(tok2.encode("abc"), [258])

    def test_files_have_the_layout_transformers_js_reads(self):
        with open(os.path.join(self.tmp.name, "tokenizer.json"), encoding="utf-8") as f:
            tj = json.load(f)
        with open(os.path.join(self.tmp.name, "tokenizer_config.json"), encoding="utf-8") as f:
            tc = json.load(f)
        vocab = tj["model"]["vocab"]
        self.assertEqual([vocab[BYTE_TO_CHAR[b]] for b in range(256)], list(range(256)))
        self.assertEqual(len(vocab), 256 + len(tj["model"]["merges"]))
        added = {t["content"]: t for t in tj["added_tokens"]}
        self.assertEqual(sorted(t["id"] for t in added.values()), list(range(len(vocab), len(vocab) + len(added))))
        self.assertTrue(added["<|im_end|>"]["special"])
        self.assertFalse(added["<tool_call>"]["special"])  # must survive decode(skip_special_tokens)
        self.assertIsNone(tj["normalizer"])
        self.assertNotIn("\\s", SPLIT_PATTERN)  # \s differs between Python re and transformers.js
        self.assertEqual(tc["eos_token"], "<|im_end|>")
        self.assertIn("<tool_call>", tc["chat_template"])
        self.assertEqual(len(load_tokenizer(self.tmp.name)), len(self.tok))

    def test_skip_special_tokens_keeps_protocol_tags(self):
        ids = self.tok.encode("<|im_start|>assistant\n\n<tool_call>\n{}\n</tool_call><|im_end|>")
        self.assertEqual(self.tok.decode(ids, skip_special_tokens=True), "assistant\n\n<tool_call>\n{}\n</tool_call>")

    def test_foreign_tokenizer_is_refused_with_a_clear_error(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "tokenizer.json"), "w") as f:
                json.dump({"model": {"type": "WordPiece"}, "normalizer": None, "pre_tokenizer": None}, f)
            with self.assertRaises(TrainerError) as ctx:
                load_tokenizer(d)
            self.assertEqual(ctx.exception.code, "TOKENIZER_UNSUPPORTED")
            with self.assertRaises(TrainerError) as ctx:
                load_tokenizer(os.path.join(d, "missing"))
            self.assertEqual(ctx.exception.code, "TOKENIZER_MISSING")


if __name__ == "__main__":
    unittest.main()
