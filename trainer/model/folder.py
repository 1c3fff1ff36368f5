"""Model folders in the Hugging Face layout: ``config.json``, ``generation_config.json``,
``tokenizer.json``, ``tokenizer_config.json``, ``pytorch_model.bin`` (and ``onnx/`` once exported).
Weights are read from ``pytorch_model.bin``, else from safetensors (``model.safetensors`` or shards
named by ``model.safetensors.index.json``: what transformers and EnvACE's merger write), else from the
ONNX export.

Checkpoints are model folders too (plus ``trainer_state.pt``), so any of them can be exported,
rendered with, or used to start another run.
"""
from __future__ import annotations

import json
import os
import shutil
from typing import TYPE_CHECKING, Any

import torch

from ..errors import TrainerError
from . import safetensors
from .config import ModelConfig
from .from_onnx import ONNX_FILE, state_dict_from_onnx
from .llama import LlamaForCausalLM

if TYPE_CHECKING:
    from ..tokenizer.tokenizer import Tokenizer
    from .safetensors import Progress

WEIGHTS = "pytorch_model.bin"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")
# The studio's own file beside them: how the policy was trained to be prompted (rehearse prompt layout,
# token limits). It travels with the tokenizer so that a fine-tuned policy is prompted as its base was.
SIDECAR_FILES = ("rehearsal_config.json",)


def generation_config(model_config: ModelConfig, tokenizer: Tokenizer, max_new_tokens: int = 512) -> dict[str, Any]:
    eos = [tokenizer.token_id(t) for t in (tokenizer.eos_token, "<|endoftext|>") if t in tokenizer.added]
    return {"bos_token_id": None, "eos_token_id": eos, "pad_token_id": model_config.pad_token_id,
            "do_sample": False, "max_new_tokens": max_new_tokens}


def write_json(path: str, data: Any) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
    os.replace(tmp, path)


def write_metadata(folder: str, model_config: ModelConfig, tokenizer: Tokenizer, tokenizer_dir: str,
                   max_new_tokens: int = 512, extra_config: dict[str, Any] | None = None) -> None:
    """config.json, generation_config.json and the tokenizer files (copied from ``tokenizer_dir``)."""
    os.makedirs(folder, exist_ok=True)
    hf = model_config.to_hf()
    hf.update(extra_config or {})
    write_json(os.path.join(folder, "config.json"), hf)
    write_json(os.path.join(folder, "generation_config.json"), generation_config(model_config, tokenizer, max_new_tokens))
    if os.path.abspath(tokenizer_dir) != os.path.abspath(folder):
        for name in TOKENIZER_FILES + SIDECAR_FILES:
            if name in TOKENIZER_FILES or os.path.exists(os.path.join(tokenizer_dir, name)):
                shutil.copyfile(os.path.join(tokenizer_dir, name), os.path.join(folder, name))


def write_model_folder(folder: str, model: Any, tokenizer: Tokenizer, tokenizer_dir: str,
                       max_new_tokens: int = 512) -> None:
    """The model folder of a policy, whichever code trains it: the studio's own (config.json,
    generation_config.json, tokenizer, pytorch_model.bin) or a transformers one (``save_pretrained``:
    a PEFT adapter folder with LoRA, else a Hugging Face folder; the tokenizer files beside it)."""
    from .hf_backend import HFPolicy, copy_tokenizer_files
    if isinstance(model, HFPolicy):
        os.makedirs(folder, exist_ok=True)
        model.save(folder)
        copy_tokenizer_files(tokenizer_dir, folder)
        return
    write_metadata(folder, model.config, tokenizer, tokenizer_dir, max_new_tokens)
    save_weights(folder, model)


def state_dict_for_save(model: LlamaForCausalLM) -> dict[str, torch.Tensor]:
    """CPU weights with Hugging Face names; a tied lm_head is left out, as transformers does."""
    sd = {k: v.detach().to("cpu") for k, v in model.state_dict().items()}
    if model.config.tie_word_embeddings:
        sd.pop("lm_head.weight", None)
    return sd


def save_weights(folder: str, model: LlamaForCausalLM) -> None:
    path = os.path.join(folder, WEIGHTS)
    torch.save(state_dict_for_save(model), path + ".tmp")
    os.replace(path + ".tmp", path)


MAX_CONFIG_BYTES = 4 * 2 ** 20


def read_json_object(path: str, what: str) -> dict[str, Any]:
    """A JSON object file of at most 4 MiB; ``MODEL_CONFIG_INVALID`` naming ``what`` when it is not one."""
    if os.path.getsize(path) > MAX_CONFIG_BYTES:
        raise TrainerError("MODEL_CONFIG_INVALID", f"{path} is larger than {MAX_CONFIG_BYTES} bytes; it cannot be {what}.")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (UnicodeDecodeError, ValueError) as e:
        raise TrainerError("MODEL_CONFIG_INVALID", f"{path} is not valid JSON ({e}); it must be {what}.") from e
    if not isinstance(data, dict):
        raise TrainerError("MODEL_CONFIG_INVALID", f"{path} is not a JSON object; it must be {what}.")
    return data


def read_model_config(folder: str) -> ModelConfig:
    path = os.path.join(folder, "config.json")
    if not os.path.isfile(path):
        raise TrainerError("MODEL_MISSING", f"No config.json in {folder}: model.path must be a model folder "
                           "(made by `init`, a checkpoint, a training run's final/ folder, or a Hugging Face model folder).")
    return ModelConfig.from_hf(read_json_object(path, "a Hugging Face config.json"))


def read_state_dict(folder: str, progress: Progress | None = None) -> tuple[dict[str, torch.Tensor], str]:
    """``(state dict in stored dtypes, the file it came from)``: pytorch_model.bin, safetensors, or the ONNX export."""
    path = os.path.join(folder, WEIGHTS)
    if os.path.exists(path):
        return torch.load(path, map_location="cpu", weights_only=True), path
    if safetensors.has_weights(folder):
        return safetensors.read_folder(folder, progress), os.path.join(folder, "*.safetensors")
    if os.path.exists(os.path.join(folder, ONNX_FILE)):
        # an exported policy only (the embedded default, say)
        return state_dict_from_onnx(folder), os.path.join(folder, ONNX_FILE)
    raise TrainerError("MODEL_MISSING", f"No {WEIGHTS}, {safetensors.SINGLE_FILE}, {safetensors.INDEX_FILE} nor {ONNX_FILE} "
                       f"in {folder}: the folder has no weights to train or export.")


def match_weights(model: LlamaForCausalLM, sd: dict[str, torch.Tensor], path: str) -> dict[str, torch.Tensor]:
    """The state dict ``model`` loads strictly, or ``WEIGHTS_MISMATCH`` naming the first tensor that differs
    from what its config.json makes (missing, extra, or of another shape)."""
    config = model.config
    sd = {k: v for k, v in sd.items() if not k.endswith("rotary_emb.inv_freq")}  # older transformers saved it
    if config.tie_word_embeddings:
        tied = sd.get("model.embed_tokens.weight", sd.get("lm_head.weight"))
        if tied is not None:  # neither: reported as missing below
            sd["lm_head.weight"] = tied
    expected = model.state_dict()
    where = f"The weights in {path} do not match its config.json ({config.model_type}, {config.num_hidden_layers} layers)"
    missing = sorted(k for k in expected if sd.get(k) is None)
    if missing:
        raise TrainerError("WEIGHTS_MISMATCH", f"{where}: {missing[0]} is missing ({len(missing)} tensors in all). "
                           "Check model_type and the layer count in config.json, or copy the missing shards.")
    extra = sorted(set(sd) - set(expected))
    if extra:
        raise TrainerError("WEIGHTS_MISMATCH", f"{where}: {extra[0]} is not a weight of this architecture ({len(extra)} in all). "
                           "Check model_type in config.json (qwen3 has q_norm/k_norm, qwen2 q/k/v biases).")
    for name, tensor in expected.items():
        if tuple(sd[name].shape) != tuple(tensor.shape):
            raise TrainerError("WEIGHTS_MISMATCH", f"{where}: {name} is {list(sd[name].shape)}, config.json makes it "
                               f"{list(tensor.shape)}. Fix hidden_size, heads, head_dim or vocab_size in config.json.")
    return {k: sd[k].float() if sd[k].is_floating_point() else sd[k] for k in expected}


def load_model(folder: str, attention: str = "eager", progress: Progress | None = None) -> LlamaForCausalLM:
    """The model of ``folder`` on the CPU, weights loaded (float32)."""
    config = read_model_config(folder)
    model = LlamaForCausalLM(config, attention=attention)
    sd, path = read_state_dict(folder, progress)
    model.load_state_dict(match_weights(model, sd, path), strict=True)
    return model
