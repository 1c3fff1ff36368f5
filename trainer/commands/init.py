"""``init``: a random-weight model of a given shape -> a model folder (config.json, tokenizer,
pytorch_model.bin), deterministic from ``seed``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ..config import require
from ..model import LlamaForCausalLM, ModelConfig
from ..model.folder import save_weights, write_metadata
from ..tokenizer import load_tokenizer

if TYPE_CHECKING:
    from ..config_types import ArchitectureConfig, TrainerConfig
    from ..events import EventStream
    from ..runtime import Runtime
    from ..tokenizer.tokenizer import Tokenizer


def make_model(architecture: ArchitectureConfig, tokenizer: Tokenizer, seed: int) -> LlamaForCausalLM:
    fields = architecture.to_dict()
    if fields.get("vocab_size") is None:
        fields["vocab_size"] = len(tokenizer)
    config = ModelConfig(eos_token_id=tokenizer.token_id(tokenizer.eos_token),
                         pad_token_id=tokenizer.token_id("<|endoftext|>") if "<|endoftext|>" in tokenizer.added else None,
                         **fields)
    torch.manual_seed(seed)
    return LlamaForCausalLM(config)


def write_model_folder(folder: str, model: LlamaForCausalLM, tokenizer: Tokenizer, tokenizer_dir: str,
                       max_new_tokens: int = 512) -> None:
    write_metadata(folder, model.config, tokenizer, tokenizer_dir, max_new_tokens)
    save_weights(folder, model)


def run(cfg: TrainerConfig, events: EventStream, runtime: Runtime) -> None:
    folder = require(cfg, "out_dir", "init", "It is the model folder to create.")
    tokenizer_dir = require(cfg, "model.tokenizer", "init", "Train one with `python3 -m trainer tokenizer`.")
    tokenizer = load_tokenizer(tokenizer_dir)
    model = make_model(cfg.model.architecture, tokenizer, cfg.seed)
    write_model_folder(folder, model, tokenizer, tokenizer_dir, cfg.export.max_new_tokens)
    params = sum(p.numel() for p in model.parameters())
    events.emit("model", path=folder, parameters=params, config=model.config.to_hf())
    events.emit("done", command="init", path=folder)
