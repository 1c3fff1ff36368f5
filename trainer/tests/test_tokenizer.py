"""The byte-level BPE tokenizer: training (Hugging Face tokenizers), the files it writes, encoding and
decoding. (Ids equal transformers.js' ids: test/e2e/trainer-parity.test.ts.)"""
import json
import os
import random
import tempfile
import unittest

import tokenizers
from tokenizers.pre_tokenizers import ByteLevel

from ..commands.tokenizer import row_text
from ..errors import TrainerError
from ..tokenizer import DEFAULT_ADDED_TOKENS, SPLIT_PATTERN, load_tokenizer
from ..tokenizer.bytelevel import split_pattern
from ..tokenizer.files import write_tokenizer
from ..tokenizer.train import train_bpe
from .fixtures import demonstration_rows

CORPUS = [row_text(r) for r in demonstration_rows(10)]
VOCAB = 256 + 300 + len(DEFAULT_ADDED_TOKENS)
TEXTS = ["café ünïcödé 😀👍🏽 中文 𝔘𝔫𝔦 cafe\u0301", "tabs\tand\n\nnewlines   spaces \r\n", "\x1c\x85\u00a0\ufeff\u2028\u3000",
         "", "C192088 1234567890 3.14e-7 -42", '{"city":"Paris","temperature":21,"list":[1,2.5,null,"é"]}', CORPUS[0]]


def merges_of(backend):
    return json.loads(backend.to_str())["model"]["merges"]


class TokenizerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.backend = train_bpe(CORPUS, VOCAB, DEFAULT_ADDED_TOKENS)
        cls.tok = write_tokenizer(cls.tmp.name, cls.backend)
        cls.merges = merges_of(cls.backend)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_round_trips_any_text(self):
        with tempfile.TemporaryDirectory() as d:
            grouped = write_tokenizer(d, train_bpe(CORPUS, VOCAB, DEFAULT_ADDED_TOKENS, pattern=split_pattern(3)))
            for tok in (self.tok, grouped):
                for text in TEXTS:
                    self.assertEqual(tok.decode(tok.encode(text)), text)

    def test_the_file_alone_gives_the_trainers_ids(self):
        # What any tokenizers user (and transformers' fast tokenizer) reads from tokenizer.json alone.
        plain = tokenizers.Tokenizer.from_file(os.path.join(self.tmp.name, "tokenizer.json"))
        loaded = load_tokenizer(self.tmp.name)
        for text in TEXTS + ["x<tool_call>\n{}</tool_call><|im_end|>"]:
            ids = plain.encode(text, add_special_tokens=False).ids
            self.assertEqual(ids, self.tok.encode(text), text)
            self.assertEqual(ids, loaded.encode(text), text)

    def test_pieces_follow_the_split_pattern(self):
        pieces = [p for p, _ in self.backend.pre_tokenizer.pre_tokenize_str("Hi  there\n\n42 ok!")]
        self.assertEqual(pieces, ["Hi", "Ġ", "Ġthere", "Ċ", "Ċ", "4", "2", "Ġok", "!"])

    def test_added_tokens_are_single_ids_even_inside_words(self):
        text = "x<tool_call>\n{}</tool_call><|im_end|>y<execution_result></execution_result><think></think>"
        ids = self.tok.encode(text)
        for token in ["<tool_call>", "</tool_call>", "<|im_end|>", "<execution_result>", "</execution_result>",
                      "<think>", "</think>"]:
            self.assertIn(self.tok.token_id(token), ids)
        self.assertEqual(ids[1], self.tok.token_id("<tool_call>"))

    def test_training_learns_frequent_pieces(self):
        # The corpus repeats "get_weather" and "temperature": they end up as few tokens.
        self.assertLessEqual(len(self.tok.encode("temperature")), 3)
        self.assertLess(len(self.tok.encode(CORPUS[0])), len(CORPUS[0].encode("utf-8")) / 2)

    def test_training_does_not_depend_on_corpus_order(self):
        shuffled = CORPUS[:]
        random.Random(1).shuffle(shuffled)
        self.assertEqual(merges_of(train_bpe(shuffled, VOCAB, DEFAULT_ADDED_TOKENS)), self.merges)

    def test_no_merge_crosses_an_added_token(self):
        self.assertFalse([m for m in self.merges if "<|" in "".join(m) or "|>" in "".join(m)])

    def test_files_have_the_layout_transformers_js_reads(self):
        with open(os.path.join(self.tmp.name, "tokenizer.json"), encoding="utf-8") as f:
            tj = json.load(f)
        with open(os.path.join(self.tmp.name, "tokenizer_config.json"), encoding="utf-8") as f:
            tc = json.load(f)
        vocab = tj["model"]["vocab"]
        self.assertEqual(sorted(vocab[c] for c in ByteLevel.alphabet()), list(range(256)))  # every byte, first
        self.assertEqual(len(vocab), 256 + len(tj["model"]["merges"]))
        self.assertLessEqual(len(self.tok), VOCAB)
        added = {t["content"]: t for t in tj["added_tokens"]}
        self.assertEqual(sorted(t["id"] for t in added.values()), list(range(len(vocab), len(vocab) + len(added))))
        self.assertTrue(added["<|im_end|>"]["special"])
        self.assertFalse(added["<tool_call>"]["special"])  # must survive decode(skip_special_tokens)
        self.assertIsNone(tj["normalizer"])
        self.assertEqual(tj["pre_tokenizer"]["pretokenizers"][0]["pattern"], {"Regex": SPLIT_PATTERN})
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
