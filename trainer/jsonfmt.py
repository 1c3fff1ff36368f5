"""JSON text exactly as JavaScript writes it, for the chat template's ``tojson`` filter.

transformers.js renders chat templates with @huggingface/jinja, whose ``tojson`` writes numbers with
``JSON.stringify`` (``1e-7``, ``1e+21``, ``100`` for 100.0) where Python's ``json.dumps`` writes
``1e-07`` and ``100.0``. Rows come from the studio (JavaScript), so writing numbers the JavaScript way
makes Python's rendering byte-identical to what the policy host renders. Everything else follows
``json.dumps(ensure_ascii=False)``, which is what transformers' Python ``tojson`` does.
"""
import json
from decimal import Decimal
from typing import Any


def js_number(x: int | float) -> str:
    """The text ``Number.prototype.toString`` gives for ``x`` (ECMA-262 Number::toString)."""
    if isinstance(x, bool):
        raise TypeError("booleans are not numbers here")
    if isinstance(x, int):
        return str(x)
    if x != x or x in (float("inf"), float("-inf")):
        return "null"  # JSON.stringify writes non-finite numbers as null
    if x == 0:
        return "0"  # also -0.0, as JSON.stringify writes it
    sign = "-" if x < 0 else ""
    # Python's repr and JavaScript both pick the shortest digit string that round-trips.
    digits_tuple = Decimal(repr(abs(x))).as_tuple()
    digits = "".join(map(str, digits_tuple.digits)).rstrip("0") or "0"
    k = len(digits)
    assert isinstance(digits_tuple.exponent, int)  # not 'n', 'N' nor 'F': NaN and infinity returned above
    n = digits_tuple.exponent + len(digits_tuple.digits)  # value = 0.digits * 10^n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    exp = ("+" if e >= 0 else "-") + str(abs(e))
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return sign + mantissa + "e" + exp


def js_json(value: Any, indent: int | None = None, separators: tuple[str, str] | None = None, sort_keys: bool = False,
            _depth: int = 0) -> str:
    """Like ``json.dumps(value, ensure_ascii=False, ...)`` but with JavaScript's number formatting."""
    if separators is not None:
        item_sep, key_sep = separators
    elif indent:
        item_sep, key_sep = ",", ": "
    else:
        item_sep, key_sep = ", ", ": "
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    pad = " " * indent if isinstance(indent, int) else (indent or "")
    inner = "\n" + pad * (_depth + 1) if indent else ""
    outer = "\n" + pad * _depth if indent else ""
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        items = [js_json(v, indent, separators, sort_keys, _depth + 1) for v in value]
        return "[" + inner + (item_sep + inner).join(items) + outer + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        keys = sorted(value) if sort_keys else list(value)
        items = [json.dumps(str(k), ensure_ascii=False) + key_sep +
                 js_json(value[k], indent, separators, sort_keys, _depth + 1) for k in keys]
        return "{" + inner + (item_sep + inner).join(items) + outer + "}"
    raise TypeError(f"not JSON: {type(value).__name__}")
