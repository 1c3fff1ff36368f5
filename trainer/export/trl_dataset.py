"""Training rows as the Hugging Face dataset TRL loads as is: one parquet file in TRL's conversational
prompt-completion format.

Each row (act or rehearse) becomes ``prompt`` (its messages, ``role`` and ``content``), ``completion``
(one assistant message: the target), ``tools`` (the tools' JSON schemas as a JSON string, which TRL's
SFTTrainer parses and hands the chat template; null for a rehearse row without tools) and the studio's
own fields beside them (``id``, ``role``, ``source``, ``weight``, ``reward``, ``group``, ``task``,
``episode``, ``temperature``, ``eos``), which TRL leaves alone and a reward function or a filter may
read. ``datasets.load_dataset("parquet", data_files=...)`` loads it; ``SFTTrainer(train_dataset=...)``
trains it (it always appends the end token: a row with ``eos: false`` is trained with one).
"""
from __future__ import annotations

import json
import os
from typing import Any

from ..errors import TrainerError
from ..write_path import write_file

#: The parquet columns, in order, and what each row gives them.
COLUMNS = ("prompt", "completion", "tools", "id", "role", "source", "weight", "reward", "group", "task", "episode",
           "temperature", "eos")


def trl_record(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "prompt": [{"role": m["role"], "content": m.get("content") or ""} for m in row["messages"]],
        "completion": [{"role": "assistant", "content": row["target"]}],
        "tools": json.dumps(row["tools"], ensure_ascii=False) if row.get("tools") else None,
        "id": row["id"], "role": row["role"], "source": row["source"], "weight": float(row.get("weight", 1.0)),
        "reward": row.get("reward"), "group": row.get("group"), "task": row.get("task"),
        "episode": None if row.get("episode") is None else str(row["episode"]),
        "temperature": row.get("temperature"), "eos": bool(row.get("eos", True)),
    }


def write_trl_dataset(rows: list[dict[str, Any]], out: str) -> int:
    """Writes ``rows`` to the parquet file ``out`` through the trainer's one write path (inside the
    folder ``out`` names, atomically, never through a link); returns its size in bytes."""
    try:
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError as e:
        raise TrainerError("TRAINER_PACKAGES_MISSING", f"export-trl writes parquet through pyarrow ({e}); run "
                           "`rehearse trainer setup`, which installs trainer/requirements.txt.") from e
    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    schema = pa.schema([("prompt", pa.list_(message)), ("completion", pa.list_(message)), ("tools", pa.string()),
                        ("id", pa.string()), ("role", pa.string()), ("source", pa.string()), ("weight", pa.float64()),
                        ("reward", pa.float64()), ("group", pa.string()), ("task", pa.string()),
                        ("episode", pa.string()), ("temperature", pa.float64()), ("eos", pa.bool_())])
    table = pa.Table.from_pylist([trl_record(r) for r in rows], schema=schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    data = sink.getvalue().to_pybytes()
    write_file(os.path.dirname(os.path.abspath(out)), [os.path.basename(out)], data)
    return len(data)
