"""Pieces shared by the sft and grpo loops: run folder, resuming, the final model."""
from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any, Union

from ..config_types import json_value
from ..errors import config_error
from ..export import export_model_folder
from ..model.folder import SIDECAR_FILES, TOKENIZER_FILES, load_model, write_model_folder
from ..model.hf_backend import HFPolicy, choose_backend, copy_tokenizer_files, load_hf_policy
from ..tokenizer import load_tokenizer
from .checkpoint import find_latest, load_state, set_rng_state

if TYPE_CHECKING:
    from ..config_types import TrainerConfig
    from ..events import EventStream
    from ..model.llama import LlamaForCausalLM
    from ..runtime import Runtime
    from ..tokenizer.tokenizer import Tokenizer


def attention_impl(cfg: TrainerConfig) -> str:
    choice = cfg.train.attention
    return "sdpa" if choice in ("auto", "sdpa") else "eager"


#: What the loops train: the studio's own model, or a transformers one (with LoRA adapters or not).
Policy = Union["LlamaForCausalLM", HFPolicy]


def open_run(cfg: TrainerConfig, events: EventStream, runtime: Runtime,
             command: str) -> tuple[Policy, Tokenizer, str, dict[str, Any] | None]:
    """``(model, tokenizer, tokenizer_dir, state or None)``: resumes from the newest checkpoint when allowed."""
    run_dir = cfg.out_dir
    if not run_dir:
        raise config_error(f"`{command}` needs out_dir (the run folder for checkpoints, events and the final model).")
    if not cfg.model.path:
        raise config_error(f"`{command}` needs model.path (a model folder from `init`, or a checkpoint).")
    os.makedirs(run_dir, exist_ok=True)
    latest = find_latest(run_dir) if cfg.train.resume else None
    source = latest or cfg.model.path
    tokenizer = load_tokenizer(source)
    backend = choose_backend(cfg, cfg.model.path)
    model: Policy
    if backend == "transformers":
        model = load_hf_policy(cfg, source, runtime.device, attention_impl(cfg))
    else:
        model = load_model(source, attention=attention_impl(cfg))
        model.gradient_checkpointing = cfg.train.gradient_checkpointing
    events.emit("model", path=source, parameters=sum(p.numel() for p in model.parameters()),
                config={"backend": backend, "lora_rank": cfg.lora.rank,
                        "trainable_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
                        "gradient_checkpointing": cfg.train.gradient_checkpointing})
    # The run keeps its own copy of the tokenizer: checkpoints it was read from get pruned.
    tokenizer_dir = os.path.join(run_dir, "tokenizer")
    if runtime.is_main:
        if backend == "transformers":
            copy_tokenizer_files(source, tokenizer_dir)
        else:
            os.makedirs(tokenizer_dir, exist_ok=True)
            for name in TOKENIZER_FILES + tuple(f for f in SIDECAR_FILES if os.path.exists(os.path.join(source, f))):
                shutil.copyfile(os.path.join(source, name), os.path.join(tokenizer_dir, name) + ".tmp")
                os.replace(os.path.join(tokenizer_dir, name) + ".tmp", os.path.join(tokenizer_dir, name))
    runtime.barrier()
    state = None
    if latest:
        state = load_state(latest)
        set_rng_state(state["rng"])
        events.emit("resume", path=latest, step=state["step"])
        events.log(f"resuming from {latest} (step {state['step']})")
    return model, tokenizer, tokenizer_dir, state


def fingerprint(cfg: TrainerConfig, keys: tuple[str, ...]) -> dict[str, Any]:
    """The config values that decide which rows each step sees, or its learning rate (compared when resuming)."""
    out = {}
    for k in keys:
        value = cfg
        for part in k.split("."):
            value = getattr(value, part)
        out[k] = json_value(value)
    return out


def check_fingerprint(events: EventStream, state: dict[str, Any], current: dict[str, Any]) -> None:
    saved = (state.get("loop") or {}).get("fingerprint")
    if saved is not None and saved != current:
        changed = sorted(k for k in current if saved.get(k) != current[k])
        events.emit("warning", code="RESUME_CONFIG_CHANGED",
                    message=f"Resuming with changed settings ({', '.join(changed)}): the run will not replay the "
                            "interrupted one exactly.")


def finish(cfg: TrainerConfig, events: EventStream, runtime: Runtime, model: Policy, tokenizer: Tokenizer,
           tokenizer_dir: str) -> dict[str, str]:
    """Writes ``<out_dir>/final`` (weights and metadata) and exports it when train.export_at_end.
    Returns the folders written: ``final``; with LoRA and lora.merge_at_end also ``merged``."""
    assert cfg.out_dir, "open_run requires out_dir"
    final = os.path.join(cfg.out_dir, "final")
    written = {"final": final}
    # Decided before the merge (which leaves rank 0's model without adapters), the same on every rank.
    merging = isinstance(model, HFPolicy) and model.lora and cfg.lora.merge_at_end
    if runtime.is_main:
        write_model_folder(final, model, tokenizer, tokenizer_dir, cfg.export.max_new_tokens)
        if isinstance(model, HFPolicy):
            written.update(_finish_hf(cfg, events, model, tokenizer_dir))
        elif cfg.train.export_at_end:
            summary = export_model_folder(model, tokenizer, tokenizer_dir, final, cfg.export)
            events.emit("export", **summary)
    runtime.barrier()
    if merging:
        written["merged"] = os.path.join(cfg.out_dir, "final-merged")
    return written


def _finish_hf(cfg: TrainerConfig, events: EventStream, model: HFPolicy, tokenizer_dir: str) -> dict[str, str]:
    """A transformers run's extra folders: the merged model (LoRA), and the studio's policy folder
    (ONNX) when the studio's own code can run the architecture, else a warning that says why not."""
    assert cfg.out_dir, "open_run requires out_dir"
    plain = os.path.join(cfg.out_dir, "final")
    written: dict[str, str] = {}
    if model.lora and cfg.lora.merge_at_end:
        plain = os.path.join(cfg.out_dir, "final-merged")
        tmp = plain + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        model.save_merged(tmp)
        copy_tokenizer_files(tokenizer_dir, tmp)
        shutil.rmtree(plain, ignore_errors=True)
        os.replace(tmp, plain)
        written["merged"] = plain
    if not cfg.train.export_at_end:
        return written
    if model.lora and not cfg.lora.merge_at_end:
        events.emit("warning", code="EXPORT_SKIPPED", message="train.export_at_end needs the merged model of a LoRA "
                    "run; set lora.merge_at_end to export it as a policy folder.")
        return written
    from ..errors import TrainerError
    from ..model.folder import read_model_config
    from ..model.hf_checkpoint import import_checkpoint
    try:
        read_model_config(plain)
    except TrainerError as e:
        events.emit("warning", code="EXPORT_SKIPPED", message=f"{plain} is not exported to ONNX: {e.message} "
                    "Serve the Hugging Face folder with an OpenAI-compatible server (vLLM, SGLang) instead.")
        return written
    policy = os.path.join(cfg.out_dir, "final-policy")
    summary = import_checkpoint(plain, policy, events, cfg.export)
    events.emit("export", **summary)
    written["policy"] = policy
    return written


def replicas_identical(model: Policy, runtime: Runtime) -> bool | None:
    """Under torchrun: whether every rank holds bit-identical weights (None with one process)."""
    if not runtime.distributed:
        return None
    import torch
    import torch.distributed as dist
    same = True
    for p in model.parameters():
        reference = p.detach().clone()
        dist.broadcast(reference, src=0)
        same = same and torch.equal(reference, p.detach())
    flag = torch.tensor([1.0 if same else 0.0], device=runtime.device)
    runtime.all_reduce_sum(flag)
    return int(flag.item()) == runtime.world
