"""A small JSON Schema (draft-07 subset) validator, so configs, rows and events are checked against
the same schema files the studio's TypeScript side uses (``schemas/*.schema.json``).

Only torch, onnx and jinja2 may be installed beside the standard library, so this covers the keywords
those schemas use: type, enum, const, properties, required, additionalProperties, items, minItems,
minimum, maximum, exclusiveMinimum, minLength, pattern, allOf, oneOf, anyOf, $ref (``#/definitions/..``)
and default (applied by :func:`apply_defaults`).
"""
import copy
import json
import os
import re
from typing import Any

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "schemas")


def load_schema(name: str) -> dict[str, Any]:
    """Loads ``schemas/<name>.schema.json`` from the repository beside the package."""
    path = os.path.join(SCHEMA_DIR, f"{name}.schema.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _type_ok(value, t):
    if t == "object":
        return isinstance(value, dict)
    if t == "array":
        return isinstance(value, list)
    if t == "string":
        return isinstance(value, str)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "null":
        return value is None
    if t == "integer":
        # Stricter than JSON Schema (which accepts 3.0): the trainer uses these values as Python ints.
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    raise ValueError(f"unsupported schema type {t}")


def _resolve(root, schema):
    while "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            raise ValueError(f"unsupported $ref {ref}")
        node = root
        for part in ref[2:].split("/"):
            node = node[part]
        schema = node
    return schema


def _where(path):
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) or "(top level)"


def validate(root: dict[str, Any], value: Any, schema: dict[str, Any] | None = None,
             path: tuple[str | int, ...] = ()) -> list[str]:
    """Every violation as ``"<json path>: <message>"`` (empty when valid)."""
    schema = _resolve(root, root if schema is None else schema)
    errors = []
    where = _where(path)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_type_ok(value, t) for t in types):
            return [f"{where}: expected {' or '.join(types)}, got {json.dumps(value)[:60]}"]
    if "const" in schema and value != schema["const"]:
        errors.append(f"{where}: must be {json.dumps(schema['const'])}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: must be one of {', '.join(json.dumps(e) for e in schema['enum'])}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{where}: must be >= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{where}: must be <= {schema['maximum']}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            errors.append(f"{where}: must be > {schema['exclusiveMinimum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{where}: must have at least {schema['minLength']} characters")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{where}: must match {schema['pattern']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{where}: must have at least {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{where}: must have at most {schema['maxItems']} items")
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                errors += validate(root, item, schema["items"], path + (i,))
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{_where(path + (key,))}: is required")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                errors += validate(root, item, props[key], path + (key,))
            elif extra is False:
                known = ", ".join(sorted(props)) or "none"
                errors.append(f"{_where(path + (key,))}: unknown field (known: {known})")
            elif isinstance(extra, dict):
                errors += validate(root, item, extra, path + (key,))
    for sub in schema.get("allOf", []):
        errors += validate(root, value, sub, path)
    for keyword in ("oneOf", "anyOf"):
        if keyword in schema:
            matches = [not validate(root, value, s, path) for s in schema[keyword]]
            count = sum(matches)
            if count == 0 or (keyword == "oneOf" and count > 1):
                errors += _best_branch_errors(root, value, schema[keyword], path, keyword, count)
    return errors


def _best_branch_errors(root, value, branches, path, keyword, count):
    """For a failed oneOf/anyOf, the errors of the branch whose `const` discriminator matches, if any."""
    if count > 1:
        return [f"{_where(path)}: matches more than one alternative"]
    for branch in branches:
        b = _resolve(root, branch)
        consts = {k: p["const"] for k, p in b.get("properties", {}).items() if "const" in p}
        if consts and isinstance(value, dict) and all(value.get(k) == c for k, c in consts.items()):
            return validate(root, value, branch, path)
    return [f"{_where(path)}: matches none of the allowed forms ({keyword})"]


def apply_defaults(root: dict[str, Any], value: Any, schema: dict[str, Any] | None = None) -> Any:
    """Fills in missing object properties that have a ``default``, recursively; returns ``value``."""
    schema = _resolve(root, root if schema is None else schema)
    if not isinstance(value, dict):
        return value
    for key, prop in schema.get("properties", {}).items():
        prop_r = _resolve(root, prop)
        if key not in value and "default" in prop_r:
            value[key] = copy.deepcopy(prop_r["default"])
        if key in value and isinstance(value[key], dict):
            apply_defaults(root, value[key], prop_r)
    return value
