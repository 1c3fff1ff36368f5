"""The installed ``bfcl-eval`` package as data and backends: multi-turn records, ground truth,
function docs and the classes they name.

A :class:`World` is the instances of one record, built from its ``initial_config`` as BFCL builds
them (a deep copy of the class's scenario, ``long_context`` for that category); :meth:`World.call`
runs one method by name with keyword arguments and renders its result as BFCL's executor does: a
``str`` as it is, a ``dict`` as ``json.dumps`` (else ``str``), anything else as ``str``; an exception
as ``Error during execution: <message>``. Nothing is evaluated: a name that is not a public method
of the record's classes is an error result, as an undefined name is in BFCL.
"""
from __future__ import annotations

import copy
import importlib
import inspect
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from ..errors import TrainerError

#: The multi-turn categories of BFCL-v4 (records ``BFCL_v4_multi_turn_<category>.json``).
CATEGORIES = ("base", "miss_param", "miss_func", "long_context")
#: Bounds on what is read from a records or answers file.
MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_LINE_BYTES = 16 * 1024 * 1024
MAX_RECORDS = 100_000

#: What to run when the package is missing (the trainer environment installs it: requirements-bfcl.txt).
INSTALL_HINT = "rehearse trainer setup (it installs bfcl-eval), or pip install --no-deps bfcl-eval mpmath"


#: What a BFCL package folder holds (``--backend``): its backends, their config and its data.
_PACKAGE_PARTS = ("__init__.py", os.path.join("constants", "executable_backend_config.py"),
                  os.path.join("eval_checker", "multi_turn_eval", "func_source_code"), "data")


def use_backend(folder: str) -> str:
    """Makes ``import bfcl_eval`` find the package at ``folder`` (a ``bfcl_eval`` folder, such as a
    checkout's ``berkeley-function-call-leaderboard/bfcl_eval``) instead of the installed one; returns
    its real path. A folder that is not BFCL's package is a coded error."""
    real = os.path.realpath(folder)
    missing = [p for p in _PACKAGE_PARTS if not os.path.exists(os.path.join(real, p))]
    if os.path.basename(real) != "bfcl_eval" or missing:
        why = f"it lacks {', '.join(missing)}" if missing else "it is not named bfcl_eval"
        raise TrainerError("BFCL_BACKEND_INVALID", f"{folder} is not BFCL's package folder (bfcl_eval, with constants/, "
                           f"eval_checker/multi_turn_eval/func_source_code/ and data/): {why}.")
    loaded = sys.modules.get("bfcl_eval")
    if loaded is not None:
        if os.path.realpath(os.path.dirname(loaded.__file__ or "")) != real:
            raise TrainerError("BFCL_BACKEND_INVALID", f"Another bfcl_eval is already loaded here ({loaded.__file__}).")
        return real
    sys.path.insert(0, os.path.dirname(real))
    return real


def package_dir() -> str:
    """The folder of the installed ``bfcl_eval`` package."""
    try:
        import bfcl_eval
    except ImportError as e:
        raise TrainerError("BFCL_MISSING", f"The bfcl-eval package is not installed here ({e}): {INSTALL_HINT}.") from e
    return os.path.dirname(os.path.abspath(bfcl_eval.__file__))


def records_file(category: str) -> str:
    """The package's records file of a multi-turn category."""
    if category not in CATEGORIES:
        raise TrainerError("BFCL_CATEGORY", f"{category!r} is not a multi-turn category: {', '.join(CATEGORIES)}.")
    return os.path.join(package_dir(), "data", f"BFCL_v4_multi_turn_{category}.json")


def answers_file(records: str) -> str:
    """The ground truth beside a records file (BFCL's ``possible_answer/<same name>``)."""
    return os.path.join(os.path.dirname(os.path.abspath(records)), "possible_answer", os.path.basename(records))


def read_json_lines(path: str, what: str, key: str = "id") -> list[dict[str, Any]]:
    """A BFCL data file (one JSON object per line, each with a string ``key``), bounded in size; a
    bad line is a coded error."""
    try:
        size = os.path.getsize(path)
    except OSError as e:
        raise TrainerError("BFCL_FILE_UNREADABLE", f"Cannot read the {what} {path}: {e.strerror}.") from e
    if size > MAX_FILE_BYTES:
        raise TrainerError("BFCL_FILE_TOO_LARGE", f"The {what} {path} holds {size} bytes, more than {MAX_FILE_BYTES}.")
    out: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            if len(line) > MAX_LINE_BYTES:
                raise TrainerError("BFCL_RECORD_INVALID", f"{path}:{number}: a line longer than {MAX_LINE_BYTES} bytes.")
            try:
                value = json.loads(line)
            except json.JSONDecodeError as e:
                raise TrainerError("BFCL_RECORD_INVALID", f"{path}:{number}: not JSON ({e.msg}).") from e
            if not isinstance(value, dict) or not isinstance(value.get(key), str):
                raise TrainerError("BFCL_RECORD_INVALID", f"{path}:{number}: not a BFCL {what} line (an object with "
                                   f"a {key}).")
            out.append(value)
            if len(out) > MAX_RECORDS:
                raise TrainerError("BFCL_FILE_TOO_LARGE", f"{path} holds more than {MAX_RECORDS} records.")
    return out


def find_record(records: str, record_id: str) -> dict[str, Any]:
    """The record of that id in a records file; its absence is a coded error."""
    for record in read_json_lines(records, "records"):
        if record["id"] == record_id:
            return record
    raise TrainerError("BFCL_RECORD_MISSING", f"No record {record_id!r} in {records}.")


def category_of(record_id: str) -> str:
    """``multi_turn_base`` for ``multi_turn_base_12`` (BFCL's test category of a record)."""
    return record_id.rsplit("_", 1)[0]


def _backend_config() -> tuple[dict[str, str], set[str]]:
    package_dir()
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING, STATELESS_CLASSES
    return dict(CLASS_FILE_PATH_MAPPING), set(STATELESS_CLASSES)


def backend_class(name: str) -> type:
    """The backend class a record names (``GorillaFileSystem``)."""
    modules, _ = _backend_config()
    if name not in modules:
        raise TrainerError("BFCL_CLASS_UNKNOWN", f"The record names the class {name!r}, which the installed bfcl-eval "
                           f"does not have (it has {', '.join(sorted(modules))}).")
    return getattr(importlib.import_module(modules[name]), name)


def render_result(value: object) -> str:
    """A method's return value as BFCL's executor turns it into the model's tool result."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


class World:
    """The instances of one record's involved classes, in their initial state."""

    def __init__(self, record: dict[str, Any]) -> None:
        classes = record.get("involved_classes")
        if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
            raise TrainerError("BFCL_RECORD_INVALID", f"Record {record.get('id')}: involved_classes is not a list of names.")
        config = record.get("initial_config") or {}
        if not isinstance(config, dict):
            raise TrainerError("BFCL_RECORD_INVALID", f"Record {record.get('id')}: initial_config is not an object.")
        category = category_of(str(record.get("id", "")))
        long_context = "long_context" in category or "composite" in category
        _, stateless = _backend_config()
        self.instances: dict[str, Any] = {}
        self.methods: dict[str, Callable[..., Any]] = {}
        for name in classes:
            instance = backend_class(name)()
            if name not in stateless:
                instance._load_scenario(copy.deepcopy(config.get(name, {})), long_context=long_context)
            self.instances[name] = instance
            for method_name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not method_name.startswith("_"):
                    self.methods[method_name] = method

    def call(self, name: str, arguments: Any) -> str:
        """Runs one call; its result as the model reads it (an error is a result too)."""
        method = self.methods.get(name)
        if method is None:
            return f"Error during execution: name '{name}' is not defined"
        if not isinstance(arguments, dict):
            return "Error during execution: the arguments are not an object"
        try:
            # A copy, as BFCL's evaluated string makes new values: a method may keep or change them.
            return render_result(method(**copy.deepcopy(arguments)))
        except Exception as e:  # noqa: BLE001 - a failing call is the model's result, as in BFCL
            return f"Error during execution: {e}"

    def state(self) -> dict[str, dict[str, Any]]:
        """Each instance's public attributes (what BFCL's state check compares)."""
        return {name: {k: v for k, v in vars(inst).items() if not k.startswith("_")}
                for name, inst in self.instances.items()}
