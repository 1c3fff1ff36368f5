"""The pre-tokenizer of the trainer's byte-level BPE, and its added tokens.

The pattern only uses ASCII classes, spelled out: ``\\s`` means White_Space to Oniguruma (Hugging Face
tokenizers) and to transformers.js, but other things to other engines, so the explicit class keeps
every side splitting every string identically. Letters run together, digits stand alone (numbers and
ids are copied digit by digit), punctuation and non-ASCII runs stay together, and whitespace behaves
as in GPT-2 (a space joins the word after it), except that every newline is a piece of its own. The
chat template joins a prompt and the policy's text at newlines (`<|im_start|>assistant\\n` +
`\\n<tool_call>...`): were newlines merged, a conversation re-tokenized as a whole would differ from
the tokens generated turn by turn, so the policy host could not reuse its KV cache across turns, and
history turns could not be trained as the tokens they were.
"""
from __future__ import annotations

from tokenizers import Regex, pre_tokenizers

_WS = r" \t\n\r\f\v"
_HWS = r" \t\r\f\v"


def split_pattern(digit_group: int = 1) -> str:
    """The pre-tokenizer pattern; ``digit_group`` > 1 keeps runs of up to that many digits together
    (``C192088`` -> ``C``, ``192``, ``088``) so that BPE can give each group one token of its own."""
    digits = "[0-9]" if digit_group == 1 else f"[0-9]{{1,{int(digit_group)}}}"
    return rf" ?[A-Za-z]+| ?{digits}| ?[^{_WS}A-Za-z0-9]+|[{_HWS}]+(?![^{_WS}])|[{_HWS}]+|\n"


SPLIT_PATTERN = split_pattern(1)

#: Tokens kept whole (never split by BPE). The first three are ChatML's; the others are the
#: protocol's tags (act: tool_call; tool results: tool_response; rehearse: execution_result, think).
DEFAULT_ADDED_TOKENS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tool_response>",
    "</tool_response>", "<execution_result>", "</execution_result>", "<think>", "</think>",
]
#: Added tokens that ``decode(skip_special_tokens=True)`` drops; the protocol tags must survive it.
SPECIAL_TOKENS = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}


def pre_tokenizer(pattern: str = SPLIT_PATTERN) -> pre_tokenizers.PreTokenizer:
    """The pattern's pieces, each then as GPT-2's byte-level characters (one per UTF-8 byte)."""
    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
                                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
