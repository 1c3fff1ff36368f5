"""``generate``: greedy decoding with PyTorch *without* a KV cache, recomputing the whole sequence
for every token: the reference the exported model's cached decoding must reproduce."""
from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import torch

from ..chat_template import render_chat
from ..config import require
from ..data.encode import chat_template, special_tokens
from ..errors import config_error
from ..model.folder import load_model
from ..tokenizer import load_tokenizer

if TYPE_CHECKING:
    from ..config_types import TrainerConfig
    from ..events import EventStream
    from ..model.llama import LlamaForCausalLM
    from ..runtime import Runtime
    from ..tokenizer.tokenizer import Tokenizer


def prompt_input(prompt: dict[str, Any], tokenizer: Tokenizer) -> tuple[list[int], str | None]:
    """``(ids, text)`` of a prompt given as ids, text, or chat messages (+ tools) rendered by the template."""
    if "ids" in prompt:
        return [int(i) for i in prompt["ids"]], None
    if "text" in prompt:
        return tokenizer.encode(prompt["text"]), prompt["text"]
    if "messages" in prompt:
        text = render_chat(chat_template(tokenizer), prompt["messages"], prompt.get("tools"), True, special_tokens(tokenizer))
        return tokenizer.encode(text), text
    raise config_error("Each prompt of generate.prompts needs ids, text or messages.")


def stop_ids(folder: str, model: LlamaForCausalLM) -> set[int]:
    path = os.path.join(folder, "generation_config.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            eos = json.load(f).get("eos_token_id")
    else:
        eos = model.config.eos_token_id
    return set(eos if isinstance(eos, list) else [eos] if eos is not None else [])


@torch.no_grad()
def greedy(model: LlamaForCausalLM, ids: list[int], max_new_tokens: int,
           stop: set[int], min_new_tokens: int = 0) -> tuple[torch.Tensor | None, list[int]]:
    """First-forward logits ``[S, V]`` and the greedy continuation, which stops after an end token
    once it holds more than ``min_new_tokens`` tokens (an earlier end token is kept and decoding goes
    on, as the policy host's ``minTokens``: parity tests fix the count of tokens they compare).
    An empty prompt has neither."""
    if not ids:
        return None, []
    def forward(seq: list[int]) -> torch.Tensor:
        x = torch.tensor([seq])
        return model(x, torch.ones_like(x), torch.arange(len(seq))[None])[0][0]
    first = forward(ids)
    seq, out = list(ids), []
    logits = first
    for _ in range(max_new_tokens):
        nxt = int(logits[-1].argmax())
        out.append(nxt)
        seq.append(nxt)
        if nxt in stop and len(out) > min_new_tokens:
            break
        logits = forward(seq)
    return first, out


def run(cfg: TrainerConfig, events: EventStream, runtime: Runtime) -> None:
    folder = require(cfg, "model.path", "generate")
    path = require(cfg, "generate.prompts", "generate", "A JSON file with a list of prompts.")
    with open(path, encoding="utf-8") as f:
        prompts = json.load(f)
    tokenizer = load_tokenizer(folder)
    model = load_model(folder).eval()
    stop = stop_ids(folder, model)
    gen = cfg.generate
    for i, prompt in enumerate(prompts):
        ids, text = prompt_input(prompt, tokenizer)
        first, out = greedy(model, ids, gen.max_new_tokens, stop, gen.min_new_tokens)
        fields = {"id": str(prompt.get("id", i)), "prompt_ids": ids, "ids": out, "text": tokenizer.decode(out)}
        if text is not None:
            fields["prompt_text"] = text
        if first is not None and prompt.get("logits", gen.logits):
            fields["logits_shape"] = list(first.shape)
            fields["logits"] = [round(v, 7) for v in first.flatten().tolist()]
        events.emit("generation", **fields)
    events.emit("done", command="generate", prompts=len(prompts))
