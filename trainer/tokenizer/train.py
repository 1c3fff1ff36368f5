"""Learning BPE merges on a corpus (incremental pair counts, so thousands of merges take seconds).

Ties between equally frequent pairs are broken by the pair's bytes, so the same corpus always gives
the same merges, whatever the order of the input files' words.
"""
from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from typing import Iterable, Sequence

from .bytelevel import BYTE_TO_CHAR, added_tokens_regex, pretokenize, split_added


def count_words(texts: Iterable[str], added_tokens: Sequence[str], pattern: str | None = None) -> Counter[str]:
    """Frequency of every pre-tokenized piece of ``texts``; added tokens are cut out first."""
    import re
    split_re = re.compile(pattern) if pattern else None
    added_re = added_tokens_regex(added_tokens)
    added = set(added_tokens)
    counts = Counter()
    for text in texts:
        for part in split_added(text, added_re):
            if part and part not in added:
                counts.update(pretokenize(part, split_re) if split_re else pretokenize(part))
    return counts


def train_bpe(word_counts: dict[str, int], max_merges: int, min_frequency: int = 2) -> list[tuple[str, str]]:
    """Merges (as pairs of byte-level token strings) learned from ``{piece: count}``."""
    symbols = [bytes([b]) for b in range(256)]
    words = []
    freqs = []
    for piece, count in word_counts.items():
        words.append(list(piece.encode("utf-8")))
        freqs.append(count)
    pair_counts = defaultdict(int)
    pair_where = defaultdict(set)
    for i, w in enumerate(words):
        for pair in zip(w, w[1:]):
            pair_counts[pair] += freqs[i]
            pair_where[pair].add(i)
    heap = [(-c, symbols[a], symbols[b], a, b) for (a, b), c in pair_counts.items()]
    heapq.heapify(heap)
    merges = []
    while len(merges) < max_merges and heap:
        neg, _, _, a, b = heapq.heappop(heap)
        count = pair_counts.get((a, b), 0)
        if count != -neg:
            continue  # stale entry: a newer one carries the current count
        if count < min_frequency:
            break
        new = len(symbols)
        symbols.append(symbols[a] + symbols[b])
        merges.append((a, b))
        changed = set()
        for i in pair_where.pop((a, b)):
            w, f = words[i], freqs[i]
            for pair in zip(w, w[1:]):
                pair_counts[pair] -= f
                changed.add(pair)
            merged = []
            j = 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == a and w[j + 1] == b:
                    merged.append(new)
                    j += 2
                else:
                    merged.append(w[j])
                    j += 1
            for pair in zip(merged, merged[1:]):
                pair_counts[pair] += f
                pair_where[pair].add(i)
                changed.add(pair)
            words[i] = merged
        pair_counts.pop((a, b), None)
        for pair in changed:
            c = pair_counts.get(pair, 0)
            if c > 0:
                heapq.heappush(heap, (-c, symbols[pair[0]], symbols[pair[1]], pair[0], pair[1]))
            else:
                pair_counts.pop(pair, None)
    as_text = lambda sym: "".join(BYTE_TO_CHAR[x] for x in symbols[sym])
    return [(as_text(a), as_text(b)) for a, b in merges]
