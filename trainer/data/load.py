"""Rows -> examples for a command, with the counts the ``data`` event reports."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import data_error
from .encode import encode_rows
from .rows import read_rows

if TYPE_CHECKING:
    from ..tokenizer.tokenizer import Tokenizer
    from .encode import Example


def summarize(examples: list[Example], dropped: list[Example], skipped: int, rows: int) -> dict[str, Any]:
    return {
        "rows": rows,
        "examples": len(examples),
        "roles": dict(Counter(e.role for e in examples)),
        "sources": dict(Counter(e.source for e in examples)),
        "target_tokens": sum(e.loss_tokens for e in examples),
        "tokens": sum(e.length for e in examples),
        "dropped_too_long": len(dropped),
        "dropped_ids": [e.id for e in dropped[:10]],
        "skipped_roles": skipped,
    }


def load_examples(paths: Sequence[str], tokenizer: Tokenizer, max_length: int, roles: Sequence[str],
                  what: str = "data.train") -> tuple[list[Example], dict[str, Any]]:
    """Examples of the rows in ``paths`` whose role is in ``roles``; raises when none is left."""
    rows = read_rows(paths)
    kept = [r for r in rows if r["role"] in roles]
    examples, dropped = encode_rows(kept, tokenizer, max_length)
    summary = summarize(examples, dropped, len(rows) - len(kept), len(rows))
    if not examples:
        raise data_error(f"No trainable rows in {what} ({len(rows)} rows; {len(dropped)} longer than "
                         f"data.max_length={max_length}; {len(rows) - len(kept)} of other roles).")
    return examples, summary
