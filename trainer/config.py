"""Loading the trainer's JSON configuration: parse, apply ``--set`` overrides, validate against
``schemas/trainer-config.schema.json``, fill defaults, resolve paths against the config's folder."""
from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .errors import config_error
from .schema import apply_defaults, load_schema, validate

if TYPE_CHECKING:
    from .config_types import TrainerConfig

# Fields holding a path or a list of paths, resolved against the folder of the config file.
_PATH_FIELDS = [
    ("out_dir",), ("model", "path"), ("model", "tokenizer"), ("tokenizer", "text_files"),
    ("tokenizer", "row_files"), ("data", "train"), ("grpo", "grounding", "rows"), ("rollouts", "rows"),
    ("generate", "prompts"), ("probe", "rows"),
]


def parse_override(text: str) -> tuple[list[str], Any]:
    """``a.b.c=value`` -> (["a","b","c"], value); the value is JSON when it parses, else a string."""
    if "=" not in text:
        raise config_error(f"--set expects key.path=value, got {text!r}.")
    key, raw = text.split("=", 1)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.split("."), value


def _set_path(obj, keys, value):
    for k in keys[:-1]:
        obj = obj.setdefault(k, {})
        if not isinstance(obj, dict):
            raise config_error(f"--set {'.'.join(keys)}: {k} is not an object.")
    obj[keys[-1]] = value


def load_config(path: str | None = None, overrides: Sequence[str] = (),
                base: dict[str, Any] | None = None) -> dict[str, Any]:
    """The validated config with defaults and absolute paths. ``path`` None starts from ``base`` or {}."""
    if path is not None:
        try:
            with open(path, encoding="utf-8") as f:
                raw = json.load(f)
        except FileNotFoundError as e:
            raise config_error(f"Config file not found: {path}. Pass an existing JSON file to --config.") from e
        except json.JSONDecodeError as e:
            raise config_error(f"Config file {path} is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg}).") from e
        if not isinstance(raw, dict):
            raise config_error(f"Config file {path} must hold a JSON object.")
        folder = os.path.dirname(os.path.abspath(path))
    else:
        raw = dict(base or {})
        folder = os.getcwd()
    for text in overrides:
        keys, value = parse_override(text)
        _set_path(raw, keys, value)
    schema = load_schema("trainer-config")
    errors = validate(schema, raw)
    if errors:
        shown = "; ".join(errors[:6]) + (f"; and {len(errors) - 6} more" if len(errors) > 6 else "")
        where = path or "the configuration"
        raise config_error(f"{where} is invalid: {shown}. See docs/trainer-config.md.", errors=errors)
    cfg = apply_defaults(schema, raw)
    for path_keys in _PATH_FIELDS:
        _resolve_path_field(cfg, path_keys, folder)
    cfg["config_dir"] = folder
    return cfg


def _resolve_path_field(cfg, keys, folder):
    node = cfg
    for k in keys[:-1]:
        node = node.get(k, {})
    value = node.get(keys[-1])
    if isinstance(value, str):
        node[keys[-1]] = os.path.join(folder, value)
    elif isinstance(value, list):
        node[keys[-1]] = [os.path.join(folder, v) for v in value]


def require(cfg: TrainerConfig, dotted: str, command: str, hint: str = "") -> Any:
    """The value at ``dotted`` (e.g. "model.path"), or a config error naming the command that needs it."""
    node: Any = cfg
    for k in dotted.split("."):
        node = getattr(node, k, None)
    if node in (None, (), ""):
        raise config_error(f"`{command}` needs {dotted} in the config.{(' ' + hint) if hint else ''}")
    return node
