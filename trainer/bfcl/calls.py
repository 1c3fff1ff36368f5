"""BFCL's call strings, parsed, never evaluated.

Ground truth calls are Python call expressions (``mv(source='a', destination='b')``,
``sort('final_report.pdf')``). :func:`parse_call` reads one with :mod:`ast`: the callee must be a
plain name and every argument a literal (``ast.literal_eval``: strings, numbers, booleans, None,
lists, tuples, dicts, sets, negative numbers); anything else is a coded error. :func:`bind` names
positional arguments by the method's signature (40 of the base category's ground-truth calls are
positional).
"""
from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from typing import Any

from ..errors import TrainerError

#: The longest call string read (a long_context ground truth stays far below it).
MAX_CALL_CHARS = 1_000_000


def parse_call(text: str) -> tuple[str, list[Any], dict[str, Any]]:
    """``(name, positional values, keyword values)`` of one call string."""
    if not isinstance(text, str) or len(text) > MAX_CALL_CHARS:
        raise TrainerError("BFCL_CALL_INVALID", f"Not a call string: {str(text)[:80]!r}.")
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise TrainerError("BFCL_CALL_INVALID", f"{text[:200]!r} is not a call: {e.msg}.") from e
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise TrainerError("BFCL_CALL_INVALID", f"{text[:200]!r} is not a call of a function by its name.")
    try:
        args = [ast.literal_eval(a) for a in node.args]
        kwargs: dict[str, Any] = {}
        for k in node.keywords:
            if k.arg is None:
                raise ValueError("**arguments")
            kwargs[k.arg] = ast.literal_eval(k.value)
    except ValueError as e:
        raise TrainerError("BFCL_CALL_INVALID", f"{text[:200]!r}: an argument is not a literal ({e}).") from e
    return node.func.id, args, kwargs


def bind(method: Callable[..., Any], name: str, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments of a call: positional ones named by ``method``'s parameters, in order."""
    if not args:
        return dict(kwargs)
    params = [p for p in inspect.signature(method).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(args) > len(params):
        raise TrainerError("BFCL_CALL_INVALID", f"{name} takes {len(params)} positional arguments, not {len(args)}.")
    named = {p.name: v for p, v in zip(params, args, strict=False)}
    clash = set(named) & set(kwargs)
    if clash:
        raise TrainerError("BFCL_CALL_INVALID", f"{name}: {', '.join(sorted(clash))} given twice.")
    return {**named, **kwargs}


def format_call(name: str, arguments: dict[str, Any]) -> str:
    """A call as BFCL writes one (keyword arguments, Python literals): what its checker decodes."""
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"
