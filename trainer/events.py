"""The JSON event stream: one JSON object per line on stdout, human logs on stderr.

The studio reads stdout line by line (documented in ``docs/trainer-events.md``, schema in
``schemas/trainer-events.schema.json``). Under ``torchrun`` only rank 0 emits, and the same lines are
appended to ``<out_dir>/events.jsonl`` because torchrun prefixes the workers' stdout.
"""
import json
import math
import os
import sys
import time
from typing import Any, TextIO

#: Version of the event stream; bumped when an event changes incompatibly.
EVENTS_VERSION = 1


def _finite(value):
    """JSON has no NaN or infinity: they become null so every line stays valid JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


class EventStream:
    """Writes events (stdout and an optional file) and logs (stderr). Silent on ranks other than 0."""

    def __init__(self, stdout: TextIO | None = None, stderr: TextIO | None = None, enabled: bool = True) -> None:
        self._stdout = stdout or sys.stdout
        self._stderr = stderr or sys.stderr
        self._file: TextIO | None = None
        self._t0 = time.monotonic()
        self.enabled = enabled

    @property
    def stderr(self) -> TextIO:
        """Where logs go (child processes' output is forwarded there too)."""
        return self._stderr

    def attach_file(self, path: str) -> None:
        """Also append every event to ``path`` (created with its folder)."""
        if not self.enabled:
            return
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self._file = open(path, "a", encoding="utf-8")

    def emit(self, event: str, **fields: Any) -> None:
        """One event line: ``{"event": <name>, "t": <seconds since start>, ...fields}``."""
        if not self.enabled:
            return
        record = {"event": event, "t": round(time.monotonic() - self._t0, 3)}
        record.update(_finite(fields))
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        self._stdout.write(line + "\n")
        self._stdout.flush()
        if self._file is not None:
            self._file.write(line + "\n")
            self._file.flush()

    def log(self, message: str) -> None:
        """A human-readable line on stderr."""
        if not self.enabled:
            return
        self._stderr.write(f"[trainer {time.monotonic() - self._t0:7.1f}s] {message}\n")
        self._stderr.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
