"""Encoding and decoding with a byte-level BPE ``tokenizer.json``, by Hugging Face tokenizers.

Only the shapes whose ids transformers.js (the policy host) is known to reproduce are read: a BPE
model behind a Split + ByteLevel pre-tokenizer, no normalizer or NFC (this trainer's and Qwen's);
``test/e2e/trainer-parity.test.ts`` and ``checkpoint-import.test.ts`` check the ids. One rewrite keeps
them equal: transformers.js folds the letters of ``(?i:...)`` as ASCII only, where tokenizers'
Oniguruma folds Unicode (``'ſ`` would be the contraction ``'s``), so the loaded pattern spells the
ASCII folding out.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any

import tokenizers

from ..errors import TrainerError


class Tokenizer:
    """A tokenizers ``Tokenizer`` with the chat template and end token of its ``tokenizer_config.json``."""

    def __init__(self, backend: tokenizers.Tokenizer, config: dict[str, Any] | None = None) -> None:
        self.backend = backend
        self.added = {t.content: i for i, t in backend.get_added_tokens_decoder().items()}
        self.config = config or {}
        self._size = max(backend.get_vocab(with_added_tokens=True).values()) + 1

    def __len__(self):
        return self._size

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
        i = self.backend.token_to_id(text)
        if i is None:
            raise KeyError(text)
        return i

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; added tokens in the text map to their ids (no BOS/EOS added)."""
        return self.backend.encode(text, add_special_tokens=False).ids

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = False) -> str:
        """Text of ``ids``; invalid UTF-8 becomes U+FFFD, as transformers.js decodes it."""
        return self.backend.decode([int(i) for i in ids], skip_special_tokens=skip_special_tokens)


def _fold_ascii(match):
    body = match.group(1)
    if re.search(r"[\\\[\]()]", body):
        raise TrainerError("TOKENIZER_UNSUPPORTED", f"The pre-tokenizer pattern has (?i:{body}); the trainer folds "
                           "only groups of literal alternatives, such as Qwen's (?i:'s|'t|'re|'ve|'m|'ll|'d).")
    return "(?:" + "".join(f"[{c.lower()}{c.upper()}]" if c.isascii() and c.isalpha() else c for c in body) + ")"


def as_transformers_js_reads(pattern: str) -> str:
    """``pattern`` with ``(?i:...)`` folding ASCII letters only, as transformers.js rewrites it."""
    if re.search(r"\\[wW]", pattern):
        raise TrainerError("TOKENIZER_UNSUPPORTED", "The pre-tokenizer pattern uses \\w or \\W, whose Unicode "
                           "classes transformers.js and tokenizers do not spell alike.")
    return re.sub(r"\(\?i:([^)]*)\)", _fold_ascii, pattern)


def _check_shape(path, data):
    model = data.get("model") or {}
    pre = data.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers", [])
    split = [p for p in steps if p.get("type") == "Split"]
    byte_level = [p for p in steps if p.get("type") == "ByteLevel"]
    if (model.get("type") != "BPE" or len(split) != 1 or len(byte_level) != 1 or len(steps) != 2
            or byte_level[0].get("add_prefix_space") or byte_level[0].get("use_regex", True) or model.get("byte_fallback")
            or split[0].get("behavior") != "Isolated" or split[0].get("invert")
            or not isinstance(split[0].get("pattern"), dict) or not isinstance(split[0]["pattern"].get("Regex"), str)
            or data.get("normalizer") not in (None, {"type": "NFC"})):
        raise TrainerError("TOKENIZER_UNSUPPORTED", f"{path} is not a byte-level BPE tokenizer the trainer reads "
                           "(BPE model, Split + ByteLevel pre-tokenizer without a prefix space, no normalizer or NFC: "
                           "this trainer's and Qwen's). Train one with `python3 -m trainer tokenizer`.")
    return split[0]["pattern"]


def load_tokenizer(folder: str) -> Tokenizer:
    """The tokenizer of a model folder (``tokenizer.json`` + ``tokenizer_config.json``)."""
    path = os.path.join(folder, "tokenizer.json")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError as e:
        raise TrainerError("TOKENIZER_MISSING", f"No tokenizer.json in {folder}. Run `python3 -m trainer tokenizer` "
                           "or point the config at a model folder that has one.") from e
    config = {}
    cpath = os.path.join(folder, "tokenizer_config.json")
    if os.path.exists(cpath):
        with open(cpath, encoding="utf-8") as f:
            config = json.load(f)
    pattern = _check_shape(path, data)
    pattern["Regex"] = as_transformers_js_reads(pattern["Regex"])
    try:
        backend = tokenizers.Tokenizer.from_str(json.dumps(data))
    except Exception as e:  # tokenizers raises plain Exception for a pattern Oniguruma refuses, a bad merge...
        raise TrainerError("TOKENIZER_UNSUPPORTED", f"{path} cannot be read by Hugging Face tokenizers: {e}.") from e
    return Tokenizer(backend, config)


__all__ = ["Tokenizer", "load_tokenizer"]
