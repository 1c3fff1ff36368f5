"""``test-checkpoint``: a random-weight Hugging Face folder shaped like the ones EnvACE's
``scripts/model_merger.py`` writes (``save_pretrained``: config.json of a qwen3 or qwen2 model,
safetensors, sharded with an index when asked, tokenizer files, generation_config.json), for the
studio's own tests. It uses the embedded policy's small vocabulary (``models/default``) rather than
Qwen's 151k one; qwen3 folders give it Qwen's normalizer (NFC) and split pattern, and carry a
Qwen3-style chat template (``trainer/templates/qwen3_style.jinja``: tools in ``<tools>``,
``<tool_call>`` blocks, ``<think>`` and ``enable_thinking``)."""
from __future__ import annotations

import json
import os
import shutil
from typing import TYPE_CHECKING, Any

import torch

from ..errors import config_error
from ..model import LlamaForCausalLM, ModelConfig, safetensors
from ..model.folder import state_dict_for_save, write_json

if TYPE_CHECKING:
    import argparse

    from ..events import EventStream
    from ..model.llama import LlamaForCausalLM

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOKENIZER_DIR = os.path.join(REPO, "models", "default")
QWEN3_TEMPLATE = os.path.join(REPO, "trainer", "templates", "qwen3_style.jinja")
#: The Split pattern of Qwen2/Qwen2.5/Qwen3's tokenizer.json (written for Oniguruma).
QWEN_PATTERN = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""  # noqa: E501 - verbatim
#: Tiny shapes with grouped-query attention; qwen3's head_dim differs from hidden_size / heads, as in Qwen3.
SHAPES: dict[str, dict[str, Any]] = {
    "qwen3": {"hidden_size": 48, "intermediate_size": 96, "num_hidden_layers": 3, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 16, "rope_theta": 1000000.0, "max_position_embeddings": 4096},
    "qwen2": {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "rope_theta": 1000000.0, "max_position_embeddings": 4096},
}


def random_model(model_type: str, tied: bool, seed: int, vocab_size: int, eos: int | None, pad: int | None,
                 dtype: str = "float32") -> LlamaForCausalLM:
    """A model of ``SHAPES[model_type]`` whose every weight is random (norms and biases too, so that a
    q_norm or a bias read wrongly changes the logits)."""
    config = ModelConfig(model_type=model_type, tie_word_embeddings=tied, vocab_size=vocab_size, eos_token_id=eos,
                         pad_token_id=pad, torch_dtype=dtype, initializer_range=0.05, **SHAPES[model_type])
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
            elif name.endswith(".bias"):
                p.copy_(0.05 * torch.randn(p.shape, generator=g))
    return model


def write_qwen_shaped_tokenizer(folder: str, vocab: dict[str, Any] | None = None) -> None:
    """models/default's tokenizer with Qwen's normalizer and pre-tokenizer, into ``folder``."""
    if vocab is None:
        with open(os.path.join(TOKENIZER_DIR, "tokenizer.json"), encoding="utf-8") as f:
            vocab = json.load(f)
    data = {**vocab, "normalizer": {"type": "NFC"}}
    data["pre_tokenizer"] = {**vocab["pre_tokenizer"], "pretokenizers": [
        {**vocab["pre_tokenizer"]["pretokenizers"][0], "pattern": {"Regex": QWEN_PATTERN}},
        *vocab["pre_tokenizer"]["pretokenizers"][1:]]}
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False)


def make_test_checkpoint(folder: str, model_type: str = "qwen3", tied: bool = False, shards: int = 1, seed: int = 0,
                         dtype: str = "float32") -> tuple[LlamaForCausalLM, list[str]]:
    """Writes the folder; returns ``(model, files written)``."""
    if model_type not in SHAPES:
        raise config_error(f"--model-type must be one of {', '.join(SHAPES)}.")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(TOKENIZER_DIR, "tokenizer.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    added = {t["content"]: t["id"] for t in vocab["added_tokens"]}
    vocab_size = max(max(vocab["model"]["vocab"].values()), *added.values()) + 1
    model = random_model(model_type, tied, seed, vocab_size, added["<|im_end|>"], added["<|endoftext|>"], dtype)
    if model_type == "qwen3":
        write_qwen_shaped_tokenizer(folder, vocab)
    else:
        shutil.copyfile(os.path.join(TOKENIZER_DIR, "tokenizer.json"), os.path.join(folder, "tokenizer.json"))
    with open(os.path.join(TOKENIZER_DIR, "tokenizer_config.json"), encoding="utf-8") as f:
        tokenizer_config = json.load(f)
    if model_type == "qwen3":
        with open(QWEN3_TEMPLATE, encoding="utf-8") as f:
            tokenizer_config["chat_template"] = f.read()
    write_json(os.path.join(folder, "tokenizer_config.json"), tokenizer_config)
    write_json(os.path.join(folder, "config.json"), model.config.to_hf())
    write_json(os.path.join(folder, "generation_config.json"), {
        "bos_token_id": None, "eos_token_id": [added["<|im_end|>"], added["<|endoftext|>"]],
        "pad_token_id": added["<|endoftext|>"], "do_sample": True, "temperature": 0.6, "top_p": 0.95, "top_k": 20})
    weights = {k: v.to(getattr(torch, dtype)) for k, v in state_dict_for_save(model).items()}
    total = sum(t.numel() * t.element_size() for t in weights.values())
    files = safetensors.write_folder(folder, weights, total // shards + 1 if shards > 1 else safetensors.DEFAULT_SHARD_BYTES)
    return model, files


def run_test_checkpoint(args: argparse.Namespace, events: EventStream) -> None:
    if not args.out:
        raise config_error("`test-checkpoint` needs --out <folder>.")
    out = os.path.abspath(args.out)
    model, files = make_test_checkpoint(out, args.model_type, args.tied, args.shards, args.seed, args.dtype)
    events.emit("hf_folder", path=out, model_type=model.config.model_type, files=files, dtype=args.dtype,
                parameters=sum(p.numel() for p in model.parameters()))
    events.emit("done", command="test-checkpoint", path=out)
