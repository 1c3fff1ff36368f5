"""``import-checkpoint`` and ``export-checkpoint``: Hugging Face folders (EnvACE's merged checkpoints)
to policy folders and back (:mod:`trainer.model.hf_checkpoint`)."""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from ..config_types import ExportSection
from ..errors import TrainerError, config_error
from ..model import safetensors
from ..model.hf_backend import is_adapter_folder, merge_adapter
from ..model.hf_checkpoint import DTYPES, export_checkpoint, import_checkpoint

if TYPE_CHECKING:
    import argparse

    from ..events import EventStream


def _paths(args, command):
    if not args.source or not args.out:
        raise config_error(f"`{command}` needs --source <folder> and --out <folder>.")
    return os.path.abspath(args.source), os.path.abspath(args.out)


def run_import(args: argparse.Namespace, events: EventStream) -> None:
    source, out = _paths(args, "import-checkpoint")
    if is_adapter_folder(source):
        raise TrainerError("MODEL_IS_ADAPTER", f"{source} is a LoRA adapter (adapter_config.json), not a model: import "
                           "its run's final-merged/ folder, or merge it first with `rehearse export checkpoint "
                           f"{source} --out <folder>` and import that folder.")
    t0 = time.monotonic()
    summary = import_checkpoint(source, out, events, ExportSection(external_data=args.external_data))
    events.emit("export", seconds=round(time.monotonic() - t0, 3), **summary)
    events.emit("done", command="import-checkpoint", path=out)


def run_export(args: argparse.Namespace, events: EventStream) -> None:
    source, out = _paths(args, "export-checkpoint")
    if args.dtype and args.dtype not in DTYPES:
        raise config_error(f"--dtype must be one of {', '.join(DTYPES)}.")
    if is_adapter_folder(source):
        # A LoRA run's final/ or checkpoint: merged onto its base, a plain folder any server loads.
        if source == out:
            raise TrainerError("USAGE", "--out must be another folder than the adapter merged.")
        info = merge_adapter(source, out, DTYPES[args.dtype] if args.dtype else None)
        events.emit("hf_folder", path=out, **info)
        events.emit("done", command="export-checkpoint", path=out)
        return
    files, model = export_checkpoint(source, out, events, args.dtype, args.max_shard_bytes or safetensors.DEFAULT_SHARD_BYTES)
    events.emit("hf_folder", path=out, model_type=model.config.model_type, files=files, dtype=model.config.torch_dtype,
                parameters=sum(p.numel() for p in model.parameters()))
    events.emit("done", command="export-checkpoint", path=out)
