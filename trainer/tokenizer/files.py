"""Writing ``tokenizer.json`` (by Hugging Face tokenizers) and ``tokenizer_config.json``."""
from __future__ import annotations

import json
import os
from typing import Any

import tokenizers

from ..chat_template import CHAT_TEMPLATE
from ..errors import config_error
from .tokenizer import Tokenizer


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


def write_tokenizer(folder: str, backend: tokenizers.Tokenizer, model_max_length: int = 4096,
                    chat_template: str = CHAT_TEMPLATE) -> Tokenizer:
    """Writes both files into ``folder`` and returns the :class:`Tokenizer` of ``backend``."""
    added = [{"id": i, "content": t.content, "special": t.special} for i, t in sorted(backend.get_added_tokens_decoder().items())]
    missing = [t for t in ("<|endoftext|>", "<|im_start|>", "<|im_end|>") if t not in {a["content"] for a in added}]
    if missing:
        raise config_error(f"tokenizer.added_tokens must include {', '.join(missing)} (the chat template needs them).")
    os.makedirs(folder, exist_ok=True)
    backend.save(os.path.join(folder, "tokenizer.json"))
    config = tokenizer_config(added, model_max_length, chat_template)
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False, indent=1)
    return Tokenizer(backend, config)
