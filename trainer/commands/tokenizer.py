"""``tokenizer``: trains a byte-level BPE tokenizer on text files and dataset rows and writes
``tokenizer.json`` + ``tokenizer_config.json`` (with the chat template) into out_dir."""
from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..chat_template import TEMPLATES, render_chat
from ..config import require
from ..data.rows import read_rows
from ..errors import config_error
from ..tokenizer.bytelevel import SPECIAL_TOKENS, split_pattern
from ..tokenizer.files import write_tokenizer
from ..tokenizer.train import train_bpe

if TYPE_CHECKING:
    from ..config_types import TokenizerSection, TrainerConfig
    from ..events import EventStream
    from ..runtime import Runtime
    from ..tokenizer.tokenizer import Tokenizer


def row_text(row: dict[str, Any], template: str = TEMPLATES["full"]) -> str:
    """A row's full training text, rendered with the template the tokenizer will carry."""
    variables = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "bos_token": None, "unk_token": None}
    prompt = render_chat(template, row["messages"], row.get("tools"), True, variables)
    return prompt + row["target"] + "<|im_end|>"


def corpus(tok_cfg: TokenizerSection) -> list[str]:
    texts = []
    for path in tok_cfg.text_files:
        try:
            with open(path, encoding="utf-8") as f:
                texts.append(f.read())
        except FileNotFoundError as e:
            raise config_error(f"tokenizer.text_files: {path} does not exist.") from e
    if tok_cfg.row_files:
        template = TEMPLATES[tok_cfg.chat_template]
        texts.extend(row_text(r, template) for r in read_rows(tok_cfg.row_files))
    return texts


def build(texts: list[str], vocab_size: int, added_tokens: Sequence[str], min_frequency: int, folder: str,
          model_max_length: int, chat_template: str = "full", digit_group: int = 1) -> tuple[Tokenizer, dict[str, Any]]:
    """Trains and writes a tokenizer; returns ``(tokenizer, summary)``."""
    t0 = time.monotonic()
    backend = train_bpe(texts, vocab_size, added_tokens, min_frequency, split_pattern(digit_group))
    tok = write_tokenizer(folder, backend, model_max_length, TEMPLATES[chat_template])
    merges = json.loads(backend.to_str())["model"]["merges"]
    return tok, {"path": folder, "vocab_size": len(tok), "merges": len(merges), "added_tokens": len(added_tokens),
                 "corpus_chars": sum(len(t) for t in texts), "seconds": round(time.monotonic() - t0, 3)}


def run(cfg: TrainerConfig, events: EventStream, runtime: Runtime) -> None:
    folder = require(cfg, "out_dir", "tokenizer", "It is the folder that receives tokenizer.json.")
    tok_cfg = cfg.tokenizer
    texts = corpus(tok_cfg)
    if not any(texts):
        raise config_error("`tokenizer` needs a corpus: tokenizer.text_files and/or tokenizer.row_files.")
    added = tok_cfg.added_tokens
    if len(set(added)) != len(added):
        raise config_error("tokenizer.added_tokens has duplicates.")
    _, summary = build(texts, tok_cfg.vocab_size, added, tok_cfg.min_frequency, folder, tok_cfg.model_max_length,
                       tok_cfg.chat_template, tok_cfg.digit_group)
    summary["chat_template"] = tok_cfg.chat_template
    summary["special_tokens"] = sorted(SPECIAL_TOKENS & set(added))
    events.emit("tokenizer", **summary)
    events.emit("done", command="tokenizer", path=folder)
