"""Models trained through transformers, optionally with PEFT's LoRA adapters, behind the interface the
trainer's loops already use (``hidden_states``, ``lm_head``, ``config``, ``parameters``).

The studio's own Llama/Qwen code (:mod:`.llama`) stays the backend of the embedded default and of
every model it can export to ONNX. A run whose ``model.backend`` is ``transformers`` (or ``auto`` with
``lora.rank > 0``, or a ``config.json`` the studio's code refuses: rope scaling, sliding windows,
MoE, another ``model_type``) loads its base with ``AutoModelForCausalLM`` instead, so every
architecture transformers supports trains, with the tokenizer and chat template of its own folder.

Folders: with LoRA a checkpoint or ``final/`` is a PEFT adapter folder (``adapter_config.json``,
``adapter_model.safetensors``) with the tokenizer beside it, loadable by
``PeftModel.from_pretrained``; ``final-merged/`` is the base with the adapter merged in, a plain
Hugging Face folder. Without LoRA they are plain Hugging Face folders (``save_pretrained``).
"""
from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any

import torch
import torch.nn as nn

from ..errors import TrainerError, config_error
from .folder import SIDECAR_FILES, read_json_object
from .hf_checkpoint import TOKENIZER_FILES

if TYPE_CHECKING:
    from ..config_types import TrainerConfig

ADAPTER_CONFIG = "adapter_config.json"


def _missing_packages(what: str, error: ImportError) -> TrainerError:
    return TrainerError("TRAINER_PACKAGES_MISSING",
                        f"{what} needs the Python packages transformers and peft ({error}); run "
                        "`rehearse trainer setup`, which installs the pinned versions of trainer/requirements.txt.")


def is_adapter_folder(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, ADAPTER_CONFIG))


def adapter_base(folder: str) -> str:
    """The base model folder a PEFT adapter folder names (``base_model_name_or_path``)."""
    config = read_json_object(os.path.join(folder, ADAPTER_CONFIG), "a PEFT adapter_config.json")
    base = config.get("base_model_name_or_path")
    if not isinstance(base, str) or not base:
        raise TrainerError("MODEL_MISSING", f"{folder}/{ADAPTER_CONFIG} names no base_model_name_or_path: set it to "
                           "the Hugging Face folder the adapter was trained on.")
    if not os.path.isabs(base):
        base = os.path.normpath(os.path.join(folder, base)) if os.path.isdir(os.path.join(folder, base)) else base
    if not os.path.isdir(base):
        raise TrainerError("MODEL_MISSING", f"The adapter in {folder} was trained on {base}, which is not a folder "
                           "here; nothing is downloaded at run time. Point base_model_name_or_path in its "
                           f"{ADAPTER_CONFIG} at a local copy of that model.")
    return base


def choose_backend(cfg: TrainerConfig, folder: str) -> str:
    """``studio`` or ``transformers`` for a run starting from ``folder`` (see ``model.backend``)."""
    choice = cfg.model.backend
    if choice == "studio" and cfg.lora.rank > 0:
        raise config_error("lora.rank > 0 needs model.backend transformers (or auto): the studio's own model code "
                           "trains every weight.")
    if choice != "auto":
        return choice
    if cfg.lora.rank > 0 or is_adapter_folder(folder):
        return "transformers"
    from .folder import read_model_config
    try:
        read_model_config(folder)
    except TrainerError as e:
        if e.code == "MODEL_UNSUPPORTED":
            return "transformers"
        raise
    return "studio"


class HFPolicy(nn.Module):
    """A transformers causal LM (a ``PeftModel`` around one with LoRA) seen as the trainer's policy."""

    def __init__(self, inner: nn.Module, lora: bool) -> None:
        super().__init__()
        self.inner = inner
        self.lora = lora
        self.config = self.causal_lm.config

    @property
    def causal_lm(self) -> Any:
        """The transformers model (with LoRA layers injected in place when there are adapters)."""
        return self.inner.get_base_model() if self.lora else self.inner  # type: ignore[operator]

    @property
    def lm_head(self) -> nn.Module:
        head = self.causal_lm.get_output_embeddings()
        assert head is not None, "a causal LM has an output layer"
        return head

    def hidden_states(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Final-norm hidden states ``[B, S, H]`` of right-padded rows (causal attention: a position never
        sees the padding after it), no cache."""
        decoder = self.causal_lm.get_decoder()
        return decoder(input_ids=input_ids, use_cache=False).last_hidden_state

    def trainable_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)

    def save(self, folder: str) -> None:
        """The adapter (LoRA) or the whole model as safetensors, in ``folder``."""
        self.inner.save_pretrained(folder, safe_serialization=True)  # type: ignore[operator]

    def save_merged(self, folder: str) -> None:
        """The base with the adapter merged in, as a plain Hugging Face folder. It merges in place (no
        second copy of an 8B base on the GPU): the last thing a run does with its model, after the
        adapter itself was saved."""
        merged = self.inner.merge_and_unload()  # type: ignore[operator]
        merged.save_pretrained(folder, safe_serialization=True)
        self.inner, self.lora = merged, False


class AdapterOff(nn.Module):
    """A LoRA policy with its adapters switched off: the base it started from (GRPO's KL reference)."""

    def __init__(self, policy: HFPolicy) -> None:
        super().__init__()
        self.policy = policy

    @property
    def lm_head(self) -> nn.Module:
        return self.policy.lm_head

    def hidden_states(self, input_ids: torch.Tensor) -> torch.Tensor:
        with self.policy.inner.disable_adapter():  # type: ignore[operator]
            return self.policy.hidden_states(input_ids)


def copy_tokenizer_files(source: str, folder: str) -> None:
    """The tokenizer files (and the studio's sidecar) of ``source`` into ``folder`` (atomic per file)."""
    os.makedirs(folder, exist_ok=True)
    if os.path.abspath(source) == os.path.abspath(folder):
        return
    for name in TOKENIZER_FILES + SIDECAR_FILES:
        if os.path.isfile(os.path.join(source, name)):
            shutil.copyfile(os.path.join(source, name), os.path.join(folder, name) + ".tmp")
            os.replace(os.path.join(folder, name) + ".tmp", os.path.join(folder, name))


def load_hf_policy(cfg: TrainerConfig, source: str, device: torch.device, attention: str) -> HFPolicy:
    """The policy of ``source``: a Hugging Face folder, a PEFT adapter folder (its base is loaded and the
    adapter put on it, trainable), or one of this backend's checkpoints. ``lora.rank > 0`` on a plain
    folder adds new adapters. Weights on the CPU; the frozen base in bf16 when the run is bf16 on CUDA."""
    try:
        from peft import LoraConfig, PeftModel, get_peft_model
        from transformers import AutoModelForCausalLM
    except ImportError as e:
        raise _missing_packages("model.backend transformers", e) from e
    from transformers.utils import logging as hf_logging
    hf_logging.disable_progress_bar()  # the trainer reports its own progress as events
    adapter = is_adapter_folder(source)
    lora = cfg.lora.rank > 0 or adapter
    base_path = adapter_base(source) if adapter else source
    bf16_base = lora and cfg.train.precision == "bf16" and device.type == "cuda"
    try:
        base = AutoModelForCausalLM.from_pretrained(
            base_path, dtype=torch.bfloat16 if bf16_base else torch.float32,
            attn_implementation="sdpa" if attention == "sdpa" else "eager", local_files_only=True)
    except (OSError, ValueError, KeyError) as e:
        import transformers
        raise TrainerError("MODEL_UNSUPPORTED", f"transformers {transformers.__version__} cannot load {base_path}: "
                           f"{e}. It needs a Hugging Face folder (config.json, safetensors or pytorch_model.bin) of "
                           "an architecture this transformers version knows.") from e
    if cfg.train.gradient_checkpointing:
        base.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    inner: nn.Module
    if adapter:
        inner = PeftModel.from_pretrained(base, source, is_trainable=True)
    elif lora:
        missing = [m for m in cfg.lora.target_modules if not any(n.split(".")[-1] == m for n, _ in base.named_modules())]
        if missing:
            raise config_error(f"lora.target_modules names {', '.join(missing)}, which {base_path} "
                               f"({base.config.model_type}) has no layer of; its linear layers are "
                               f"{', '.join(linear_names(base))}.")
        lora_config = LoraConfig(
            r=cfg.lora.rank, lora_alpha=cfg.lora.alpha if cfg.lora.alpha is not None else 2 * cfg.lora.rank,  # type: ignore[arg-type]
            lora_dropout=cfg.lora.dropout, target_modules=list(cfg.lora.target_modules), task_type="CAUSAL_LM")
        # New adapters start from the run's seed (LoRA's A is random, B zero): the same run file makes the same start.
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(cfg.seed)
            inner = get_peft_model(base, lora_config)
    else:
        inner = base
    return HFPolicy(inner, lora)


def linear_names(model: nn.Module) -> list[str]:
    """The distinct last names of ``model``'s linear layers (what lora.target_modules may name)."""
    return sorted({n.split(".")[-1] for n, m in model.named_modules() if isinstance(m, nn.Linear)})


def merge_adapter(source: str, out: str, dtype: torch.dtype | None = None) -> dict[str, Any]:
    """A PEFT adapter folder merged onto its base, written to ``out`` as a plain Hugging Face folder
    (``save_pretrained``, the tokenizer beside it; in ``dtype``, default the base's). Returns what the
    ``hf_folder`` event reports: ``model_type``, ``files``, ``dtype``, ``parameters``."""
    try:
        from peft import PeftModel
        from transformers import AutoModelForCausalLM
        from transformers.utils import logging as hf_logging
    except ImportError as e:
        raise _missing_packages("Merging a LoRA adapter", e) from e
    hf_logging.disable_progress_bar()
    base_path = adapter_base(source)
    base = AutoModelForCausalLM.from_pretrained(base_path, dtype=torch.float32, local_files_only=True)
    merged = PeftModel.from_pretrained(base, source).merge_and_unload()
    target = dtype or _config_dtype(base_path)
    merged = merged.to(target)
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    merged.save_pretrained(tmp, safe_serialization=True)
    copy_tokenizer_files(source, tmp)
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    return {"model_type": merged.config.model_type, "files": sorted(os.listdir(out)),
            "dtype": str(target).removeprefix("torch."), "parameters": sum(p.numel() for p in merged.parameters())}


def _config_dtype(folder: str) -> torch.dtype:
    config = read_json_object(os.path.join(folder, "config.json"), "a Hugging Face config.json")
    name = config.get("dtype") or config.get("torch_dtype")
    return {"bfloat16": torch.bfloat16, "float16": torch.float16}.get(str(name), torch.float32)
