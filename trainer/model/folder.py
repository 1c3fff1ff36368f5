"""Model folders in the Hugging Face layout: ``config.json``, ``generation_config.json``,
``tokenizer.json``, ``tokenizer_config.json``, ``pytorch_model.bin`` (and ``onnx/`` once exported).

Checkpoints are model folders too (plus ``trainer_state.pt``), so any of them can be exported,
rendered with, or used to start another run.
"""
import json
import os
import shutil

import torch

from ..errors import TrainerError
from .config import ModelConfig
from .from_onnx import ONNX_FILE, state_dict_from_onnx
from .llama import LlamaForCausalLM

WEIGHTS = "pytorch_model.bin"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")
# The studio's own file beside them: how the policy was trained to be prompted (rehearse prompt layout,
# token limits). It travels with the tokenizer so that a fine-tuned policy is prompted as its base was.
SIDECAR_FILES = ("rehearsal_config.json",)


def generation_config(model_config, tokenizer, max_new_tokens=512):
    eos = [tokenizer.token_id(t) for t in (tokenizer.eos_token, "<|endoftext|>") if t in tokenizer.added]
    return {"bos_token_id": None, "eos_token_id": eos, "pad_token_id": model_config.pad_token_id,
            "do_sample": False, "max_new_tokens": max_new_tokens}


def write_json(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
    os.replace(tmp, path)


def write_metadata(folder, model_config, tokenizer, tokenizer_dir, max_new_tokens=512, extra_config=None):
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


def state_dict_for_save(model):
    """CPU weights with Hugging Face names; a tied lm_head is left out, as transformers does."""
    sd = {k: v.detach().to("cpu") for k, v in model.state_dict().items()}
    if model.config.tie_word_embeddings:
        sd.pop("lm_head.weight", None)
    return sd


def save_weights(folder, model):
    path = os.path.join(folder, WEIGHTS)
    torch.save(state_dict_for_save(model), path + ".tmp")
    os.replace(path + ".tmp", path)


def read_model_config(folder):
    path = os.path.join(folder, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            hf = json.load(f)
    except FileNotFoundError:
        raise TrainerError("MODEL_MISSING", f"No config.json in {folder}: model.path must be a model folder "
                           "(made by `init`, a checkpoint, or a training run's final/ folder).")
    return ModelConfig.from_hf(hf)


def load_model(folder, attention="eager"):
    """The model of ``folder`` on the CPU, weights loaded (float32)."""
    config = read_model_config(folder)
    model = LlamaForCausalLM(config, attention=attention)
    path = os.path.join(folder, WEIGHTS)
    if os.path.exists(path):
        sd = torch.load(path, map_location="cpu", weights_only=True)
    elif os.path.exists(os.path.join(folder, ONNX_FILE)):
        path = os.path.join(folder, ONNX_FILE)  # an exported policy only (the embedded default, say)
        sd = state_dict_from_onnx(folder)
    else:
        raise TrainerError("MODEL_MISSING", f"No {WEIGHTS} nor {ONNX_FILE} in {folder}: the folder has no weights to train or export.")
    if config.tie_word_embeddings:
        sd["lm_head.weight"] = sd["model.embed_tokens.weight"]
    try:
        model.load_state_dict(sd, strict=True)
    except RuntimeError as e:
        raise TrainerError("MODEL_MISSING", f"The weights in {path} do not match its config.json: {str(e).splitlines()[0]}")
    return model
