"""Byte-level pieces shared by training and encoding: the byte <-> printable-character map of GPT-2
and the pre-tokenizer pattern.

The pattern only uses ASCII classes, spelled out: ``\\s`` means different things in Python's ``re``
(it includes U+001C..U+001F) and in transformers.js (which rewrites it to ``\\p{White_Space}``), so
the explicit class keeps both sides splitting every string identically. Letters run together,
digits stand alone (numbers and ids are copied digit by digit), punctuation and non-ASCII runs stay
together, and whitespace behaves as in GPT-2 (a space joins the word after it), except that every
newline is a piece of its own. The chat template joins a prompt and the policy's text at newlines
(`<|im_start|>assistant\n` + `\n<tool_call>...`): were newlines merged, a conversation re-tokenized
as a whole would differ from the tokens generated turn by turn, so the policy host could not reuse
its KV cache across turns, and history turns could not be trained as the tokens they were.
"""
from __future__ import annotations

import re
from typing import Sequence

_WS = r" \t\n\r\f\v"
_HWS = r" \t\r\f\v"


def split_pattern(digit_group: int = 1) -> str:
    """The pre-tokenizer pattern; ``digit_group`` > 1 keeps runs of up to that many digits together
    (``C192088`` -> ``C``, ``192``, ``088``) so that BPE can give each group one token of its own."""
    digits = "[0-9]" if digit_group == 1 else f"[0-9]{{1,{int(digit_group)}}}"
    return rf" ?[A-Za-z]+| ?{digits}| ?[^{_WS}A-Za-z0-9]+|[{_HWS}]+(?![^{_WS}])|[{_HWS}]+|\n"


SPLIT_PATTERN = split_pattern(1)
SPLIT_RE = re.compile(SPLIT_PATTERN)

#: Tokens kept whole (never split by BPE). The first three are ChatML's; the others are the
#: protocol's tags (act: tool_call; tool results: tool_response; rehearse: execution_result, think).
DEFAULT_ADDED_TOKENS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tool_response>",
    "</tool_response>", "<execution_result>", "</execution_result>", "<think>", "</think>",
]
#: Added tokens that ``decode(skip_special_tokens=True)`` drops; the protocol tags must survive it.
SPECIAL_TOKENS = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}


def _bytes_to_unicode():
    """GPT-2's map: printable bytes stand for themselves, the others move to U+0100 onwards."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars = {}
    extra = 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


BYTE_TO_CHAR = _bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def pretokenize(text: str, split_re: re.Pattern[str] = SPLIT_RE) -> list[str]:
    """The pieces BPE sees (before the byte mapping)."""
    return split_re.findall(text)


def to_units(piece: str) -> str:
    """A piece as byte-level characters, one per UTF-8 byte."""
    return "".join(BYTE_TO_CHAR[b] for b in piece.encode("utf-8"))


def split_added(text: str, added_re: re.Pattern[str] | None) -> list[str]:
    """Alternating plain segments and added tokens (``added_re`` has one capturing group)."""
    return added_re.split(text) if added_re is not None else [text]


def added_tokens_regex(tokens: Sequence[str]) -> re.Pattern[str] | None:
    """Matches added tokens, the longest first where one is a prefix of another (as transformers.js' trie)."""
    if not tokens:
        return None
    ordered = sorted(tokens, key=lambda t: (-len(t), t))
    return re.compile("(" + "|".join(re.escape(t) for t in ordered) + ")")
