"""Checkpoints both ways between EnvACE and the studio.

EnvACE merges its FSDP shards with ``scripts/model_merger.py`` into a Hugging Face folder
(``save_pretrained``: config.json of a Qwen3 model, ``model.safetensors`` or shards with their index,
the tokenizer files, generation_config.json). :func:`import_checkpoint` turns such a folder into a
policy folder the studio runs (the ONNX graphs, the normal and the cascade one, beside the weights);
:func:`export_checkpoint` turns a policy folder or a trainer checkpoint back into a Hugging Face folder
EnvACE can start from (``actor_rollout_ref.model.path``).
"""
from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any

import torch

from ..errors import TrainerError
from . import safetensors
from .folder import SIDECAR_FILES, load_model, read_json_object, read_model_config, state_dict_for_save, write_json

if TYPE_CHECKING:
    from ..config_types import ExportSection
    from ..events import EventStream
    from .config import ModelConfig
    from .llama import LlamaForCausalLM

#: Tokenizer files of a Hugging Face folder, copied when present (tokenizer.json is required).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
                   "vocab.json", "merges.txt", "chat_template.jinja")
MAX_TEMPLATE_BYTES = 2 ** 20
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def check_hf_folder(folder: str) -> ModelConfig:
    """The folder's model config, once it is known to be a Hugging Face folder with weights and a tokenizer."""
    if not os.path.isdir(folder):
        raise TrainerError("MODEL_MISSING", f"{folder} is not a folder; pass the Hugging Face folder EnvACE's "
                           "scripts/model_merger.py wrote (its --target_dir).")
    if not os.path.isfile(os.path.join(folder, "config.json")):
        raise TrainerError("MODEL_MISSING", f"{folder} is not a Hugging Face model folder: it has no config.json. "
                           "Pass the merged folder (model_merger.py --target_dir), not the FSDP checkpoint.")
    config = read_model_config(folder)
    if not (safetensors.has_weights(folder) or os.path.exists(os.path.join(folder, "pytorch_model.bin"))):
        raise TrainerError("MODEL_MISSING", f"{folder} has no weights: neither {safetensors.SINGLE_FILE}, "
                           f"{safetensors.INDEX_FILE} nor pytorch_model.bin. Run EnvACE's model_merger.py merge first.")
    if not os.path.isfile(os.path.join(folder, "tokenizer.json")):
        raise TrainerError("TOKENIZER_MISSING", f"{folder} has no tokenizer.json; save the tokenizer beside the "
                           "weights (model_merger.py does, from the checkpoint's huggingface/ folder).")
    return config


def copy_tokenizer(source: str, out: str) -> None:
    """The tokenizer files and the studio's sidecar; a ``chat_template.jinja`` (newer transformers) is also
    folded into tokenizer_config.json, where transformers.js and the trainer read the template."""
    for name in TOKENIZER_FILES + SIDECAR_FILES:
        if os.path.isfile(os.path.join(source, name)) and os.path.abspath(source) != os.path.abspath(out):
            shutil.copyfile(os.path.join(source, name), os.path.join(out, name))
    template = os.path.join(out, "chat_template.jinja")
    config_path = os.path.join(out, "tokenizer_config.json")
    config = read_json_object(config_path, "a tokenizer_config.json") if os.path.exists(config_path) else {}
    if os.path.exists(template) and not isinstance(config.get("chat_template"), str):
        if os.path.getsize(template) > MAX_TEMPLATE_BYTES:
            raise TrainerError("MODEL_CONFIG_INVALID",
                               f"{template} is larger than {MAX_TEMPLATE_BYTES} bytes; it cannot be a chat template.")
        with open(template, encoding="utf-8") as f:
            config["chat_template"] = f.read()
        write_json(config_path, config)


def _generation_config(source, config):
    path = os.path.join(source, "generation_config.json")
    if os.path.isfile(path):
        return read_json_object(path, "a generation_config.json")
    return {"bos_token_id": config.bos_token_id, "eos_token_id": config.eos_token_id, "pad_token_id": config.pad_token_id,
            "do_sample": False}


def _weights_in(model, dtype_name):
    dtype = DTYPES.get(dtype_name)
    if dtype is None:
        raise TrainerError("MODEL_UNSUPPORTED", f"torch_dtype {dtype_name!r} cannot be written; use one of {', '.join(DTYPES)}.")
    return {k: v.to(dtype) for k, v in state_dict_for_save(model).items()}


def _write_hf(out, model, source, dtype_name, max_shard_bytes, extra_config=None):
    """config.json, generation_config.json, tokenizer files and the weights (safetensors) of ``model``."""
    os.makedirs(out, exist_ok=True)
    stale = os.path.join(out, "pytorch_model.bin")
    if os.path.exists(stale):  # it would be read before the safetensors written here
        os.remove(stale)
    model.config.torch_dtype = dtype_name
    hf = model.config.to_hf()
    hf.update(extra_config or {})
    write_json(os.path.join(out, "config.json"), hf)
    write_json(os.path.join(out, "generation_config.json"), _generation_config(source, model.config))
    copy_tokenizer(source, out)
    return safetensors.write_folder(out, _weights_in(model, dtype_name), max_shard_bytes)


def _progress(events, stage):
    def report(done: int, total: int, file: str) -> None:
        events.emit("progress", stage=stage, done=done, total=total, file=file)
        events.log(f"{stage}: {done}/{total} {file}")
    return report


def import_checkpoint(source: str, out: str, events: EventStream,
                      export_settings: ExportSection | None = None) -> dict[str, Any]:
    """A Hugging Face folder (an EnvACE merge) -> a policy folder: the weights in their own dtype, config,
    tokenizer and chat template, and the ONNX export (with the cascade graph). Returns the export summary."""
    from ..export.onnx_export import DEFAULT_SETTINGS, export_onnx
    config = check_hf_folder(source)
    if os.path.abspath(source) == os.path.abspath(out):
        raise TrainerError("USAGE", "--out must be another folder than the checkpoint; the import writes a new policy folder.")
    model = load_model(source, progress=_progress(events, "read"))
    files = _write_hf(out, model, source, config.torch_dtype if config.torch_dtype in DTYPES else "float32",
                      safetensors.DEFAULT_SHARD_BYTES)
    events.emit("progress", stage="write", done=len(files), total=len(files), file=files[-1])
    _rehearse_as_envace(out)
    settings = export_settings or DEFAULT_SETTINGS
    events.emit("progress", stage="export", done=0, total=2 if settings.cascade else 1, file="onnx/model.onnx")
    events.log("export: tracing the ONNX graphs (the normal one, then the cascade one)")
    size, external, cascade_bytes, slots_bytes = export_onnx(model.eval(), os.path.join(out, "onnx"), settings.opset,
                                                             settings.external_data, settings.cascade, settings.slots)
    if external:
        hf = read_json_object(os.path.join(out, "config.json"), "a config.json")
        hf["transformers.js_config"] = {"use_external_data_format": {"model.onnx": 1}}
        write_json(os.path.join(out, "config.json"), hf)
    summary = {"path": os.path.abspath(out), "onnx_bytes": size, "external_data": external,
               "parameters": sum(p.numel() for p in model.parameters())}
    if settings.cascade:
        summary["cascade_bytes"] = cascade_bytes
    if slots_bytes:
        summary["slots_bytes"] = slots_bytes
    return summary


def _rehearse_as_envace(out):
    """An EnvACE checkpoint was trained on EnvACE's simulator prompt, so its policy folder rehearses with
    the studio's ``envace`` prompt profile, unless the source brought its own rehearsal_config.json."""
    path = os.path.join(out, "rehearsal_config.json")
    if not os.path.exists(path):
        write_json(path, {"rehearsePrompt": {"profile": "envace"}})


def export_checkpoint(source: str, out: str, events: EventStream, dtype: str | None = None,
                      max_shard_bytes: int = safetensors.DEFAULT_SHARD_BYTES) -> tuple[list[str], LlamaForCausalLM]:
    """A policy folder or trainer checkpoint -> a Hugging Face folder (config.json with its model_type,
    safetensors in ``dtype`` (default: config.json's torch_dtype), tokenizer files, generation_config).
    Returns ``(files written, model)``."""
    if not os.path.isdir(source) or not os.path.isfile(os.path.join(source, "config.json")):
        raise TrainerError("MODEL_MISSING", f"{source} is not a policy folder or checkpoint (no config.json); pass a "
                           "folder made by `import checkpoint`, a training run's final/ or one of its checkpoints.")
    if not os.path.isfile(os.path.join(source, "tokenizer.json")):
        raise TrainerError("TOKENIZER_MISSING", f"{source} has no tokenizer.json; EnvACE needs the tokenizer beside the weights.")
    if os.path.abspath(source) == os.path.abspath(out):
        raise TrainerError("USAGE", "--out must be another folder than the one exported.")
    model = load_model(source, progress=_progress(events, "read"))
    dtype_name = dtype or (model.config.torch_dtype if model.config.torch_dtype in DTYPES else "float32")
    files = _write_hf(out, model, source, dtype_name, max_shard_bytes)
    events.emit("progress", stage="write", done=len(files), total=len(files), file=files[-1])
    return files, model
