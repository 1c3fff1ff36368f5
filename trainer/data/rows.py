"""Reading dataset rows (JSONL) and validating them against ``schemas/dataset-row.schema.json``."""
import json
import sys
from collections.abc import Iterable
from typing import Any

from ..errors import data_error
from ..schema import load_schema, validate

_MAX_REPORTED = 5


def read_rows(paths: Iterable[str]) -> list[dict[str, Any]]:
    """Every row of ``paths`` (in order), each with ``_where`` = "file:line" for messages."""
    schema = load_schema("dataset-row")
    rows, problems = [], []
    for path in paths:
        try:
            # "-": the rows come on stdin (`rehearse export --format trl` pipes them, writing no other file).
            f = open(sys.stdin.fileno(), encoding="utf-8", closefd=False) if path == "-" else open(path, encoding="utf-8")
        except FileNotFoundError as e:
            raise data_error(f"Dataset file not found: {path}.") from e
        with f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                where = f"{path}:{number}"
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    problems.append(f"{where}: not valid JSON ({e.msg})")
                    continue
                errors = validate(schema, row)
                if errors:
                    problems.append(f"{where}: {errors[0]}")
                    continue
                row["_where"] = where
                rows.append(row)
    if problems:
        shown = "; ".join(problems[:_MAX_REPORTED])
        more = f" (and {len(problems) - _MAX_REPORTED} more)" if len(problems) > _MAX_REPORTED else ""
        raise data_error(f"{len(problems)} invalid dataset rows: {shown}{more}. See docs/dataset-format.md.",
                         problems=problems[:50])
    return rows
