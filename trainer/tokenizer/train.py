"""Learning a byte-level BPE on a corpus with Hugging Face tokenizers' ``BpeTrainer``.

The trainer breaks ties between equally frequent pairs by their ids, so the same corpus always gives
the same merges, whatever the order of its texts. Its training pre-tokenizes raw text without looking
for added tokens, so they are cut out of the corpus here: no merge is learned across ``<|im_end|>``.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

from .bytelevel import SPECIAL_TOKENS, SPLIT_PATTERN, pre_tokenizer


def plain_segments(texts: Iterable[str], added_tokens: Sequence[str]) -> Iterator[str]:
    """The non-empty parts of ``texts`` between added tokens."""
    added = sorted(added_tokens, key=len, reverse=True)  # the longest first where one is a prefix of another
    split = re.compile("|".join(re.escape(t) for t in added)).split if added else lambda text: [text]
    for text in texts:
        yield from (part for part in split(text) if part)


def empty_tokenizer(pattern: str = SPLIT_PATTERN) -> Tokenizer:
    """A BPE model without merges yet, with the pre-tokenizer and the byte-level decoder.

    No normalizer: byte-level BPE is lossless, and Unicode normalisation tables differ between
    tokenizers' and Node's Unicode versions."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizer(pattern)
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def train_bpe(texts: Iterable[str], vocab_size: int, added_tokens: Sequence[str], min_frequency: int = 2,
              pattern: str = SPLIT_PATTERN) -> Tokenizer:
    """A tokenizer of ``vocab_size`` ids at most: the 256 bytes, the merges learned on ``texts``, then
    ``added_tokens`` (special when in :data:`SPECIAL_TOKENS`), in that order."""
    tok = empty_tokenizer(pattern)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size - len(added_tokens), min_frequency=min_frequency,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(plain_segments(texts, added_tokens), trainer)
    for t in added_tokens:
        tok.add_tokens([AddedToken(t, special=t in SPECIAL_TOKENS, normalized=False)])
    return tok
