"""A tokenizer.json shaped like Qwen2/Qwen3's (NFC normalizer; a split pattern with \\p{L}, \\p{N}, \\s and
(?i:...), written for Oniguruma) loads in the trainer, so an imported EnvACE checkpoint can be fine-tuned.
The vocabulary is the embedded policy's (models/default); only the pre-tokenizer and normalizer are
Qwen's. Parity with transformers.js on the same file: test/e2e/checkpoint-import.test.ts."""
import json
import os
import shutil
import tempfile
import unittest

from tokenizers import Regex, pre_tokenizers

from ..commands.test_checkpoint import QWEN_PATTERN, write_qwen_shaped_tokenizer
from ..errors import TrainerError
from ..tokenizer import load_tokenizer
from ..tokenizer.tokenizer import as_transformers_js_reads
from .helpers import REPO


def qwen_shaped(folder):
    """A folder with models/default's vocabulary under Qwen's normalizer and pre-tokenizer."""
    write_qwen_shaped_tokenizer(folder)
    shutil.copyfile(os.path.join(REPO, "models", "default", "tokenizer_config.json"),
                    os.path.join(folder, "tokenizer_config.json"))
    return folder


class QwenTokenizerTest(unittest.TestCase):
    def test_the_pattern_means_what_transformers_js_means(self):
        pre = pre_tokenizers.Split(Regex(as_transformers_js_reads(QWEN_PATTERN)), behavior="isolated")

        def split(text):
            return [piece for piece, _ in pre.pre_tokenize_str(text)]

        # Unicode letters and numbers as \p{L} / \p{N}; a number is one digit a piece; ² and ½ are numbers.
        self.assertEqual(split("naïve 中文 x42²½"), ["naïve", " 中文", " x", "4", "2", "²", "½"])
        # (?i:...) folds ASCII only: "'S" is a contraction, "'ſ" (long s) is not (Oniguruma's own (?i) would split "'ſ", "x").
        self.assertEqual(split("IT'S it'ſx"), ["IT", "'S", " it", "'ſx"])
        # \s is White_Space: U+3000 is a space, U+001C is not (Python's \s would give "\x1c", "\x1cy").
        self.assertEqual(split("a\u3000\u3000y"), ["a", "\u3000", "\u3000y"])
        self.assertEqual(split("a\x1c\x1cy"), ["a", "\x1c\x1c", "y"])
        self.assertEqual(split("x  \n\n y"), ["x", "  \n\n", " y"])

    def test_a_qwen_shaped_tokenizer_loads_normalizes_and_round_trips(self):
        with tempfile.TemporaryDirectory() as d:
            tok = load_tokenizer(qwen_shaped(d))
            composed, decomposed = "caf\u00e9", "cafe\u0301"
            self.assertEqual(tok.encode(decomposed), tok.encode(composed))
            text = "<|im_start|>user\nIT'S 42 naïve 中文\u00a0ok<|im_end|>"
            self.assertEqual(tok.decode(tok.encode(text)), text)
            self.assertIn(tok.token_id("<|im_end|>"), tok.encode(text))

    def test_other_normalizers_and_unknown_escapes_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            qwen_shaped(d)
            path = os.path.join(d, "tokenizer.json")
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            for change in ({"normalizer": {"type": "NFKC"}},
                           {"pre_tokenizer": {"type": "Sequence", "pretokenizers": [data["pre_tokenizer"]["pretokenizers"][0]]}}):
                with open(path, "w", encoding="utf-8") as f:
                    json.dump({**data, **change}, f)
                with self.assertRaises(TrainerError) as caught:
                    load_tokenizer(d)
                self.assertEqual(caught.exception.code, "TOKENIZER_UNSUPPORTED")
        with self.assertRaises(TrainerError):
            as_transformers_js_reads(r"\w+")
        with self.assertRaises(TrainerError):
            as_transformers_js_reads(r"(?i:[a-z]+)")


if __name__ == "__main__":
    unittest.main()
