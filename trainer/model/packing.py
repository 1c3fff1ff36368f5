"""Packed rows: several rows side by side in one sequence, each attending only to its own tokens.

A packed micro-batch is ``[sequences, width]``; sequence b holds the rows ``rows[b]`` (their token
counts, in order) and then padding up to ``width``. Position ids restart at 0 with every row, and
attention never crosses a row's edge, so each row computes what it would alone; the padding at a
sequence's end is one more span of its own, never seen by a row.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch


class PackedLayout:
    """Where the rows of a packed micro-batch sit (see the module's doc)."""

    def __init__(self, rows: Sequence[Sequence[int]], width: int, device: torch.device) -> None:
        #: Per sequence, the token counts of its rows, then of its padding (when there is any): the
        #: spans attention stays within, covering the sequence.
        self.spans: tuple[tuple[int, ...], ...] = tuple(
            tuple(rows_b) + ((width - sum(rows_b),) if sum(rows_b) < width else ()) for rows_b in rows)
        positions = torch.cat([torch.arange(n) for spans in self.spans for n in spans]).view(len(rows), width)
        #: ``[sequences, width]``: each row's positions from 0 (the padding's too).
        self.position_ids = positions.to(device)

    def additive_mask(self, dtype: torch.dtype) -> torch.Tensor:
        """``[sequences, 1, width, width]`` in ``dtype`` (the activations'; torch's CPU attention misreads
        a float32 mask beside float64 queries): 0 where a query sees a key (same span, not after it),
        the dtype's minimum elsewhere (the eager attention's form of the block-diagonal causal mask)."""
        span_of = torch.cat([torch.full((n,), i) for spans in self.spans for i, n in enumerate(spans)])
        span_of = span_of.view(self.position_ids.shape).to(self.position_ids.device)
        width = span_of.shape[1]
        causal = torch.ones(width, width, dtype=torch.bool, device=span_of.device).tril()
        allowed = causal[None] & (span_of[:, :, None] == span_of[:, None, :])
        return ((~allowed).to(dtype) * torch.finfo(dtype).min)[:, None]
