"""Encoding and decoding with a byte-level BPE ``tokenizer.json`` of the shape :mod:`.files` writes.

Applying merges lowest rank first, leftmost first, is what transformers.js' priority queue does
(and Hugging Face tokenizers'), so ids agree; ``test/unit/trainer-parity.test.ts`` checks it.
"""
from __future__ import annotations

import json
import os
import re
import unicodedata
from typing import Any, Iterable, Sequence

from ..errors import TrainerError
from .bytelevel import CHAR_TO_BYTE, SPECIAL_TOKENS, added_tokens_regex, split_added, to_units
from .unicode_pattern import python_pattern


class Tokenizer:
    """A byte-level BPE tokenizer with added tokens, and the chat template / end token of its config."""

    def __init__(self, vocab: dict[str, int], merges: Sequence[Sequence[str]], added_tokens: list[dict[str, Any]], split_pattern: str,
                 config: dict[str, Any] | None = None, nfc: bool = False, ignore_merges: bool = False) -> None:
        self.vocab = dict(vocab)                       # token string -> id (BPE model only)
        self.added = {t["content"]: t["id"] for t in added_tokens}
        self.special = {t["content"] for t in added_tokens if t.get("special")}
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        self.id_to_token.update({i: t for t, i in self.added.items()})
        self.ranks = {tuple(m): r for r, m in enumerate(merges)}
        self.merges = [tuple(m) for m in merges]
        self.split_re = re.compile(python_pattern(split_pattern))
        self.split_pattern = split_pattern
        # Qwen's tokenizer.json: an NFC normalizer (text between added tokens), and, in some others,
        # ignore_merges (a piece that is a token as a whole is taken whole), as transformers.js does.
        self.nfc = nfc
        self.ignore_merges = ignore_merges
        self.added_re = added_tokens_regex(list(self.added))
        self.config = config or {}
        self._cache = {}

    def __len__(self):
        return max(self.id_to_token) + 1

    @property
    def chat_template(self) -> str | None:
        return self.config.get("chat_template")

    def token_text(self, name: str) -> str | None:
        """The text of a config token field (``eos_token``...), plain or ``{"content": ...}``."""
        value = self.config.get(name)
        return value.get("content") if isinstance(value, dict) else value

    @property
    def eos_token(self) -> str:
        return self.token_text("eos_token") or "<|im_end|>"

    def token_id(self, text: str) -> int:
        if text in self.added:
            return self.added[text]
        if text in self.vocab:
            return self.vocab[text]
        raise KeyError(text)

    def _bpe(self, units):
        cached = self._cache.get(units)
        if cached is not None:
            return cached
        if self.ignore_merges and "".join(units) in self.vocab:
            return [self.vocab["".join(units)]]
        word = list(units)
        while len(word) > 1:
            best = None
            for i in range(len(word) - 1):
                r = self.ranks.get((word[i], word[i + 1]))
                if r is not None and (best is None or r < best):
                    best = r
            if best is None:
                break
            a, b = self.merges[best]
            out = []
            i = 0
            while i < len(word):
                if i + 1 < len(word) and word[i] == a and word[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            word = out
        ids = [self.vocab[t] for t in word]
        if len(self._cache) < 200000:
            self._cache[units] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; added tokens in the text map to their ids (no BOS/EOS added)."""
        ids = []
        for part in split_added(text, self.added_re):
            if not part:
                continue
            if part in self.added:
                ids.append(self.added[part])
                continue
            if self.nfc:
                part = unicodedata.normalize("NFC", part)
            for piece in self.split_re.findall(part):
                ids.extend(self._bpe(to_units(piece)))
        return ids

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = False) -> str:
        """Text of ``ids``; invalid UTF-8 becomes U+FFFD, as transformers.js decodes it."""
        out = []
        pending = bytearray()
        for i in ids:
            token = self.id_to_token.get(int(i))
            if token is None:
                continue
            if token in self.added:
                if skip_special_tokens and token in self.special:
                    continue
                out.append(pending.decode("utf-8", errors="replace"))
                pending = bytearray()
                out.append(token)
            else:
                pending.extend(CHAR_TO_BYTE[c] for c in token)
        out.append(pending.decode("utf-8", errors="replace"))
        return "".join(out)


def load_tokenizer(folder: str) -> Tokenizer:
    """The tokenizer of a model folder (``tokenizer.json`` + ``tokenizer_config.json``)."""
    path = os.path.join(folder, "tokenizer.json")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise TrainerError("TOKENIZER_MISSING", f"No tokenizer.json in {folder}. Run `python3 -m trainer tokenizer` "
                           "or point the config at a model folder that has one.")
    config = {}
    cpath = os.path.join(folder, "tokenizer_config.json")
    if os.path.exists(cpath):
        with open(cpath, encoding="utf-8") as f:
            config = json.load(f)
    model = data.get("model") or {}
    pre = data.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers", [])
    split = [p for p in steps if p.get("type") == "Split"]
    byte_level = [p for p in steps if p.get("type") == "ByteLevel"]
    normalizer = data.get("normalizer")
    if (model.get("type") != "BPE" or len(split) != 1 or len(byte_level) != 1 or len(steps) != 2
            or byte_level[0].get("add_prefix_space") or byte_level[0].get("use_regex", True) or model.get("byte_fallback")
            or split[0].get("behavior") != "Isolated" or split[0].get("invert")
            or normalizer not in (None, {"type": "NFC"})):
        raise TrainerError("TOKENIZER_UNSUPPORTED", f"{path} is not a byte-level BPE tokenizer the trainer reads "
                           "(BPE model, Split + ByteLevel pre-tokenizer without a prefix space, no normalizer or NFC: "
                           "this trainer's and Qwen's). Train one with `python3 -m trainer tokenizer`.")
    try:
        pattern = split[0]["pattern"]["Regex"]
        re.compile(python_pattern(pattern))
    except (KeyError, re.error):
        raise TrainerError("TOKENIZER_UNSUPPORTED", f"The Split pattern of {path} cannot be used by Python's re module.")
    merges = [m if isinstance(m, list) else m.split(" ", 1) for m in model["merges"]]
    return Tokenizer(model["vocab"], merges, data.get("added_tokens", []), pattern, config,
                     nfc=normalizer is not None, ignore_merges=bool(model.get("ignore_merges")))


__all__ = ["Tokenizer", "load_tokenizer", "SPECIAL_TOKENS"]
