"""One BFCL-v4 multi-turn record as an MCP stdio server, on the ``mcp`` SDK.

``python -m trainer.bfcl.server --id multi_turn_base_0 [--category base | --records <file>]``
builds the record's involved classes from its ``initial_config`` (a :class:`~.backend.World`) and
offers their methods as tools, described by BFCL's function docs (``multi_turn_func_doc``) with their
parameter types turned into JSON Schema (``dict`` → ``object``, ``float`` → ``number``, ``tuple`` →
``array``, ``any`` → any value). A call runs the method and answers with its result as BFCL renders
it (text); a failing call answers ``Error during execution: ...`` as BFCL's executor does, flagged as
an error. Arguments reach the method as they came, unvalidated, as BFCL evaluates a model's call.
Every tool of the classes is listed, those ``missed_function`` holds back too: the task hides them
until their turn (``turns[i].addTools``).

Admin tools (the studio never offers them to a policy): ``rehearsal__reset`` builds the world anew
(the seed is not used: a record has one initial state), ``rehearsal__snapshot`` gives each instance's
public attributes as JSON, what BFCL's state check compares.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import sys
from typing import Any

from ..errors import TrainerError
from .backend import World, find_record, package_dir, read_json_lines, records_file, use_backend

RESET_TOOL = "rehearsal__reset"
SNAPSHOT_TOOL = "rehearsal__snapshot"
_TYPES = {"dict": "object", "float": "number", "tuple": "array", "list": "array", "integer": "integer",
          "string": "string", "boolean": "boolean", "array": "array", "object": "object", "number": "number"}
#: Deepest nesting of a doc's schema or of a snapshot that is converted (deeper: left as it is / text).
MAX_DEPTH = 64


def json_schema(doc: Any, depth: int = 0) -> dict[str, Any]:
    """A BFCL parameter doc as JSON Schema."""
    if not isinstance(doc, dict) or depth > MAX_DEPTH:
        return {}
    out: dict[str, Any] = {}
    kind = doc.get("type")
    if isinstance(kind, str) and kind in _TYPES:
        out["type"] = _TYPES[kind]
    for key in ("description", "enum", "default"):
        if key in doc:
            out[key] = doc[key]
    if isinstance(doc.get("properties"), dict):
        out["properties"] = {k: json_schema(v, depth + 1) for k, v in doc["properties"].items()}
    if isinstance(doc.get("items"), dict):
        out["items"] = json_schema(doc["items"], depth + 1)
    if isinstance(doc.get("required"), list):
        out["required"] = [r for r in doc["required"] if isinstance(r, str)]
    return out


def function_docs(classes: list[str]) -> list[dict[str, Any]]:
    """BFCL's function docs of the classes, in its order (one JSON object per line per class)."""
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING
    folder = os.path.join(package_dir(), "data", "multi_turn_func_doc")
    docs: list[dict[str, Any]] = []
    for name in classes:
        if name not in MULTI_TURN_FUNC_DOC_FILE_MAPPING:
            raise TrainerError("BFCL_CLASS_UNKNOWN", f"No function docs for the class {name!r} in the installed bfcl-eval.")
        docs.extend(read_json_lines(os.path.join(folder, MULTI_TURN_FUNC_DOC_FILE_MAPPING[name]), "function docs",
                                    key="name"))
    return docs


def snapshot_value(value: Any, depth: int = 0, path: tuple[int, ...] = ()) -> Any:
    """Instance state as JSON: objects by their public attributes, sets sorted, times as ISO text.
    A reference back to an object on the way down (a directory's ``parent``) is left out."""
    if depth > MAX_DEPTH:
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    inner = (*path, id(value))
    if isinstance(value, dict):
        return {str(k): snapshot_value(v, depth + 1, inner) for k, v in value.items() if id(v) not in inner}
    if isinstance(value, (list, tuple)):
        return [snapshot_value(v, depth + 1, inner) for v in value if id(v) not in inner]
    if isinstance(value, (set, frozenset)):
        return sorted((snapshot_value(v, depth + 1, inner) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if hasattr(value, "__dict__"):
        return {k: snapshot_value(v, depth + 1, inner) for k, v in vars(value).items()
                if not k.startswith("_") and id(v) not in inner}
    return str(value)


async def serve(record: dict[str, Any]) -> None:
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    world = World(record)
    tools = [types.Tool(name=d["name"], description=d.get("description"),
                        input_schema={**json_schema(d.get("parameters")), "type": "object"})
             for d in function_docs(list(record["involved_classes"]))]
    tools += [types.Tool(name=RESET_TOOL, description="Builds the record's world anew.",
                         input_schema={"type": "object", "properties": {"seed": {"type": "integer"}}}),
              types.Tool(name=SNAPSHOT_TOOL, description="Each instance's public attributes.",
                         input_schema={"type": "object", "properties": {}})]

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        nonlocal world
        args = params.arguments or {}
        if params.name == RESET_TOOL:
            world = World(record)
            return types.CallToolResult(content=[types.TextContent(type="text", text="reset")])
        if params.name == SNAPSHOT_TOOL:
            state = {name: snapshot_value(inst) for name, inst in world.instances.items()}
            return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(state))],
                                        structured_content=state)
        text = world.call(params.name, dict(args))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    is_error=text.startswith("Error during execution: "))

    server = Server("bfcl", version="1", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trainer.bfcl.server", description=__doc__.split("\n")[0])
    parser.add_argument("--id", required=True, help="the record's id, e.g. multi_turn_base_0")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--category", help="read the record from the installed bfcl-eval's data (default: from its id)")
    where.add_argument("--records", help="read the record from this records file (JSON lines)")
    parser.add_argument("--backend", help="a bfcl_eval package folder to use instead of the installed one")
    args = parser.parse_args(argv)
    try:
        if args.backend:
            use_backend(args.backend)
        category = args.category or args.id.rsplit("_", 1)[0].removeprefix("multi_turn_")
        record = find_record(args.records or records_file(category), args.id)
        asyncio.run(serve(record))
    except TrainerError as e:
        print(f"bfcl server: {e.code}: {e.message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
