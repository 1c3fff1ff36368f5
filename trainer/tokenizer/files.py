"""Writing ``tokenizer.json`` (Hugging Face tokenizers format) and ``tokenizer_config.json``.

Layout: ids 0..255 are the bytes (in byte order), then one id per merge, then the added tokens.
No normalizer: byte-level BPE is lossless, and Unicode normalisation tables differ between Python's
and Node's Unicode versions.
"""
from __future__ import annotations

import json
import os
from typing import Any, Sequence

from ..chat_template import CHAT_TEMPLATE
from .bytelevel import BYTE_TO_CHAR, SPECIAL_TOKENS, SPLIT_PATTERN
from .tokenizer import Tokenizer

_BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}


def build_vocab(merges: Sequence[Sequence[str]]) -> dict[str, int]:
    vocab = {BYTE_TO_CHAR[b]: b for b in range(256)}
    for a, b in merges:
        token = a + b
        if token not in vocab:
            vocab[token] = len(vocab)
    return vocab


def tokenizer_json(merges: Sequence[Sequence[str]], added_tokens: Sequence[str], pattern: str = SPLIT_PATTERN) -> dict[str, Any]:
    vocab = build_vocab(merges)
    added = [
        {"id": len(vocab) + i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": t in SPECIAL_TOKENS}
        for i, t in enumerate(added_tokens)
    ]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
            _BYTE_LEVEL]},
        "post_processor": _BYTE_LEVEL, "decoder": _BYTE_LEVEL,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": [[a, b] for a, b in merges]},
    }


def tokenizer_config(added_tokens_list: list[dict[str, Any]], model_max_length: int,
                     chat_template: str = CHAT_TEMPLATE) -> dict[str, Any]:
    decoder = {str(t["id"]): {"content": t["content"], "lstrip": False, "normalized": False, "rstrip": False,
                              "single_word": False, "special": t["special"]} for t in added_tokens_list}
    names = {t["content"] for t in added_tokens_list}
    return {
        "add_bos_token": False, "add_eos_token": False, "added_tokens_decoder": decoder,
        "additional_special_tokens": [t for t in ("<|im_start|>", "<|im_end|>") if t in names],
        "bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "unk_token": None,
        "clean_up_tokenization_spaces": False, "errors": "replace", "model_max_length": model_max_length,
        "split_special_tokens": False, "tokenizer_class": "Qwen2Tokenizer", "chat_template": chat_template,
    }


def write_tokenizer(folder: str, merges: Sequence[Sequence[str]], added_tokens: Sequence[str], model_max_length: int = 4096,
                    chat_template: str = CHAT_TEMPLATE, pattern: str = SPLIT_PATTERN) -> Tokenizer:
    """Writes both files into ``folder`` and returns the loaded :class:`Tokenizer`."""
    missing = [t for t in ("<|endoftext|>", "<|im_start|>", "<|im_end|>") if t not in added_tokens]
    if missing:
        from ..errors import config_error
        raise config_error(f"tokenizer.added_tokens must include {', '.join(missing)} (the chat template needs them).")
    os.makedirs(folder, exist_ok=True)
    tj = tokenizer_json(merges, added_tokens, pattern)
    tc = tokenizer_config(tj["added_tokens"], model_max_length, chat_template)
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False, indent=1)
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(tc, f, ensure_ascii=False, indent=1)
    return Tokenizer(tj["model"]["vocab"], tj["model"]["merges"], tj["added_tokens"], pattern, tc)
