"""Arranging examples into steps, ranks and micro-batches, and tensors for one forward pass.

The order of rows is a pure function of (seed, step), never of a random state that would have to be
carried along: a resumed run draws exactly the rows the uninterrupted run would have drawn.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

import torch

from ..model.packing import PackedLayout

if TYPE_CHECKING:
    from .encode import Example

T = TypeVar("T")


def epoch_permutation(n: int, seed: int, epoch: int) -> list[int]:
    g = torch.Generator()
    g.manual_seed(seed * 1_000_003 + epoch)
    return torch.randperm(n, generator=g).tolist()


def step_indices(n: int, batch_size: int, seed: int, step: int) -> list[int]:
    """Row indices of optimizer step ``step``: consecutive slices of per-epoch shuffles of ``range(n)``."""
    start = step * batch_size
    out = []
    cache = {}
    for position in range(start, start + batch_size):
        epoch, offset = divmod(position, n)
        if epoch not in cache:
            cache[epoch] = epoch_permutation(n, seed, epoch)
        out.append(cache[epoch][offset])
    return out


def episodes_of(examples: list[Example]) -> list[list[Example]]:
    """The examples grouped by episode, in order of each episode's first row; a row without an
    episode is an episode of its own."""
    out: list[list[Example]] = []
    where: dict[tuple[str | None, str | None, str], int] = {}
    for e in examples:
        if e.episode is None:
            out.append([e])
        elif e.episode in where:
            out[where[e.episode]].append(e)
        else:
            where[e.episode] = len(out)
            out.append([e])
    return out


def rank_share(items: list[T], rank: int, world: int) -> list[T]:
    """This rank's part of a global batch (every world-th item)."""
    return items[rank::world]


def micro_batches(examples: list[Example], micro_size: int, count: int | None = None) -> list[list[Example]]:
    """Longest first (less padding), ``micro_size`` per batch; padded with empty batches up to ``count``
    so that every rank runs the same number of forward/backward passes (DDP needs that)."""
    ordered = sorted(examples, key=lambda e: -e.length)
    out = [ordered[i:i + micro_size] for i in range(0, len(ordered), micro_size)]
    if count is not None:
        out += [[] for _ in range(count - len(out))]
    return out


def micro_count(global_size: int, world: int, micro_size: int) -> int:
    """Micro-batches per rank for a global batch of ``global_size`` rows (the largest share decides)."""
    largest = -(-global_size // world)
    return max(1, -(-largest // micro_size))


def pack_rows(lengths: list[int], budget: int) -> list[list[int]]:
    """Indices of ``lengths`` grouped into sequences of at most ``budget`` tokens (first fit, longest
    first; a row is never split, so a row longer than ``budget`` gets a sequence of its own)."""
    bins: list[list[int]] = []
    room: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        for b, free in enumerate(room):
            if lengths[i] <= free:
                bins[b].append(i)
                room[b] -= lengths[i]
                break
        else:
            bins.append([i])
            room.append(budget - lengths[i])
    return bins


class Batch:
    """The inputs of a micro-batch and the positions whose next token is a target token: right-padded
    rows, one per sequence, or with ``pack`` rows packed (:func:`pack_rows`) into sequences of at most
    ``pack`` tokens (or the longest row's, when longer), then ``examples`` is in packed order and ``packing`` says
    where each row sits (None when padded, also when packing would save no token: then the rows are
    padded, in their order).

    ``token_row[k]`` is the example (within ``examples``) of the k-th target token, in row-major order,
    so per-row values (weights, advantages) broadcast with ``values[token_row]``.
    """

    def __init__(self, examples: list[Example], pad_id: int, device: torch.device, pack: int | None = None) -> None:
        inputs = [e.length - 1 for e in examples]
        layout = [[r] for r in range(len(examples))]
        if pack is not None:
            packed = pack_rows(inputs, max(pack, max(inputs)))
            if len(packed) * max(sum(inputs[i] for i in seq) for seq in packed) < len(examples) * max(inputs):
                layout = packed  # else packing saves no token (one row, rows of one length): padded
        rows = [[inputs[i] for i in seq] for seq in layout]  # per sequence, its rows' input tokens
        examples = [examples[i] for seq in layout for i in seq]
        self.examples = examples
        width = max(sum(seq) for seq in rows)
        ids = torch.full((len(layout), width), pad_id, dtype=torch.long)
        labels = torch.zeros((len(layout), width), dtype=torch.long)
        mask = torch.zeros((len(layout), width), dtype=torch.bool)
        r = 0
        for s, seq in enumerate(rows):
            offset = 0
            for n in seq:
                e = examples[r]
                token_ids = e.prompt_ids + e.target_ids
                ids[s, offset:offset + n] = torch.tensor(token_ids[:-1])
                labels[s, offset:offset + n] = torch.tensor(token_ids[1:])
                mask[s, offset + len(e.prompt_ids) - 1:offset + n] = True
                for start, end in e.history_spans:  # earlier assistant turns trained too (train_history rows)
                    mask[s, offset + start - 1:offset + end - 1] = True
                offset += n
                r += 1
        #: Where the rows of a packed batch sit (None: right-padded rows, one per sequence).
        self.packing = PackedLayout(rows, width, device) if len(layout) < len(examples) else None
        self.input_ids = ids.to(device)
        self.labels = labels.to(device)
        self.mask = mask.to(device)
        counts = torch.tensor([e.loss_tokens for e in examples])
        self.token_row = torch.repeat_interleave(torch.arange(len(examples)), counts).to(device)
        self.num_tokens = int(counts.sum())
        self.num_input_tokens = sum(e.length - 1 for e in examples)

    def per_row(self, values: list[float], dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """A per-example list broadcast to the batch's target tokens."""
        return torch.tensor(values, dtype=dtype, device=self.token_row.device)[self.token_row]
