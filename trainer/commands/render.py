"""``render``: dataset rows -> the exact training text and token ids, one ``row`` event per row
(debugging, and the parity tests against transformers.js)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..config import require
from ..data.encode import render_row
from ..data.rows import read_rows
from ..errors import config_error
from ..tokenizer import load_tokenizer

if TYPE_CHECKING:
    from ..config_types import TrainerConfig
    from ..events import EventStream
    from ..runtime import Runtime


def run(cfg: TrainerConfig, events: EventStream, runtime: Runtime) -> None:
    source = cfg.model.path or cfg.model.tokenizer
    if not source:
        raise config_error("`render` needs model.path (or model.tokenizer): "
                           "the folder whose chat template and tokenizer render rows.")
    paths = require(cfg, "data.train", "render", "List the row files to render.")
    tokenizer = load_tokenizer(source)
    count = 0
    for row in read_rows(paths):
        prompt, target = render_row(row, tokenizer)
        prompt_ids, target_ids = tokenizer.encode(prompt), tokenizer.encode(target)
        events.emit("row", id=row["id"], role=row["role"], source=row["source"], prompt=prompt, target=target,
                    text=prompt + target, prompt_ids=prompt_ids, target_ids=target_ids)
        count += 1
    events.emit("done", command="render", rows=count)
