"""``export``: a model folder or checkpoint -> the ONNX folder the policy host loads (out_dir, or the
model folder itself when out_dir is not set)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..config import require
from ..export import export_model_folder
from ..model.folder import load_model
from ..tokenizer import load_tokenizer

if TYPE_CHECKING:
    from ..config_types import TrainerConfig
    from ..events import EventStream
    from ..runtime import Runtime


def run(cfg: TrainerConfig, events: EventStream, runtime: Runtime) -> None:
    source = require(cfg, "model.path", "export", "It is the model folder or checkpoint to export.")
    folder = cfg.out_dir or source
    model = load_model(source)
    tokenizer = load_tokenizer(source)
    summary = export_model_folder(model, tokenizer, source, folder, cfg.export)
    summary["parameters"] = sum(p.numel() for p in model.parameters())
    events.emit("export", **summary)
    events.emit("done", command="export", path=folder)
