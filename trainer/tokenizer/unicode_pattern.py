"""Pre-tokenizer patterns of other models' ``tokenizer.json`` (Qwen2/Qwen3, Llama 3) in Python's ``re``.

Those patterns are written for Oniguruma (Hugging Face tokenizers): ``\\p{L}``, ``\\p{N}`` and other
general categories, ``\\s`` as the White_Space property, ``(?i:...)`` folding ASCII letters only.
transformers.js rewrites them to JavaScript with those meanings; Python's ``re`` has no ``\\p{..}``,
its ``\\s`` also matches U+001C..U+001F, and its ``(?i)`` folds ``s`` to ``ſ`` and ``k`` to the Kelvin
sign. :func:`python_pattern` spells each of them out as explicit code-point classes (from
:mod:`unicodedata`), so both sides split the same text the same way. Only the escapes above are
rewritten; everything else passes through as written. Unicode versions may differ between Python's
``unicodedata`` and Node's ICU for characters assigned recently (CJK extensions H and later).
"""
from __future__ import annotations

import functools
import re
import sys
import unicodedata
from typing import Sequence

from ..errors import TrainerError

#: The White_Space property (what Oniguruma's and transformers.js' ``\\s`` match).
WHITE_SPACE = [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
               (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)]
_ESCAPE = re.compile(r"\\([pP])\{(\^?)([A-Za-z_]+)\}|\\([sSdD])|\\.|(\[)|(\])", re.S)
_NEEDS_REWRITE = re.compile(r"\\[pPsSdDwW]|\(\?i:")


@functools.lru_cache(maxsize=32)
def category_ranges(name: str) -> tuple[tuple[int, int], ...]:
    """Code-point ranges of a general category (``L``, ``Lu``, ``N``, ``Nd``, ...)."""
    if not re.fullmatch(r"[A-Z][a-z]?", name):
        raise TrainerError("TOKENIZER_UNSUPPORTED", f"The pre-tokenizer pattern uses \\p{{{name}}}; the trainer reads "
                           "general categories only (L, N, P, Lu, Nd, ...).")
    ranges, start = [], None
    for cp in range(sys.maxunicode + 1):
        inside = unicodedata.category(chr(cp)).startswith(name)
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            ranges.append((start, cp - 1))
            start = None
    if start is not None:
        ranges.append((start, sys.maxunicode))
    return tuple(ranges)


def complement(ranges: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out, nxt = [], 0
    for a, b in ranges:
        if a > nxt:
            out.append((nxt, a - 1))
        nxt = b + 1
    if nxt <= sys.maxunicode:
        out.append((nxt, sys.maxunicode))
    return tuple(out)


def _class_body(ranges):
    def esc(cp: int) -> str:
        return f"\\U{cp:08x}"
    return "".join(esc(a) if a == b else f"{esc(a)}-{esc(b)}" for a, b in ranges)


def _ranges_of(match):
    kind, caret, name, short = match.group(1), match.group(2), match.group(3), match.group(4)
    if kind:
        ranges, negated = category_ranges(name), (kind == "P") != bool(caret)
    else:
        ranges, negated = (tuple(WHITE_SPACE) if short in "sS" else category_ranges("Nd")), short in "SD"
    return complement(ranges) if negated else ranges


def _fold(match):
    body = match.group(1)
    if re.search(r"[\\\[\]()]", body):
        raise TrainerError("TOKENIZER_UNSUPPORTED", f"The pre-tokenizer pattern has (?i:{body}); the trainer folds "
                           "only groups of literal alternatives, such as Qwen's (?i:'s|'t|'re|'ve|'m|'ll|'d).")
    return "(?:" + "".join(f"[{c.lower()}{c.upper()}]" if c.isascii() and c.isalpha() else c for c in body) + ")"


def python_pattern(pattern: str) -> str:
    """``pattern`` with Oniguruma's meaning in Python's ``re`` (unchanged when it uses none of the escapes)."""
    if not _NEEDS_REWRITE.search(pattern):
        return pattern
    if re.search(r"\\[wW]", pattern):
        raise TrainerError("TOKENIZER_UNSUPPORTED", "The pre-tokenizer pattern uses \\w or \\W, which the trainer does not translate.")
    pattern = re.sub(r"\(\?i:([^)]*)\)", _fold, pattern)
    out, in_class, pos = [], False, 0
    for m in _ESCAPE.finditer(pattern):
        out.append(pattern[pos:m.start()])
        pos = m.end()
        if m.group(1) or m.group(4):
            body = _class_body(_ranges_of(m))
            out.append(body if in_class else f"[{body}]")
        else:
            out.append(m.group(0))
            if m.group(5) and not in_class:
                in_class = True
            elif m.group(6):
                in_class = False
    out.append(pattern[pos:])
    return "".join(out)
