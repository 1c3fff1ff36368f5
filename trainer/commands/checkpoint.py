"""``import-checkpoint`` and ``export-checkpoint``: Hugging Face folders (EnvACE's merged checkpoints)
to policy folders and back (:mod:`trainer.model.hf_checkpoint`)."""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from ..config_types import ExportSection
from ..errors import config_error
from ..model import safetensors
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
    t0 = time.monotonic()
    summary = import_checkpoint(source, out, events, ExportSection(external_data=args.external_data))
    events.emit("export", seconds=round(time.monotonic() - t0, 3), **summary)
    events.emit("done", command="import-checkpoint", path=out)


def run_export(args: argparse.Namespace, events: EventStream) -> None:
    source, out = _paths(args, "export-checkpoint")
    if args.dtype and args.dtype not in DTYPES:
        raise config_error(f"--dtype must be one of {', '.join(DTYPES)}.")
    files, model = export_checkpoint(source, out, events, args.dtype, args.max_shard_bytes or safetensors.DEFAULT_SHARD_BYTES)
    events.emit("hf_folder", path=out, model_type=model.config.model_type, files=files, dtype=model.config.torch_dtype,
                parameters=sum(p.numel() for p in model.parameters()))
    events.emit("done", command="export-checkpoint", path=out)
