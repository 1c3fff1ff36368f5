"""One τ²-bench task's environment as an MCP stdio server, on the ``mcp`` SDK.

``python -m trainer.tau2.server --domain mock --task create_task_1 [--tasks <file>]`` builds the
domain's environment with τ²'s own code (the function τ²'s registry registers for the domain,
imported without the registry, which imports litellm: seconds at every start), in the task's initial
state as τ²'s orchestrator sets it, and offers the agent's tools as τ² describes them to a model
(``Tool.openai_schema``). A call runs through ``Environment.get_response``, as τ²'s orchestrator
runs it: the answer is the text τ² records (its ``ToolMessage.content``), and a call τ² answers with
``Error: ...`` is flagged as an error. Arguments reach the tool as they came.

Admin tools (the studio never offers them to a policy): ``rehearsal__reset`` builds the environment
anew, its database read afresh (the seed is not used: a task has one initial state);
``rehearsal__snapshot`` gives τ²'s hashes of the agent's and the user's databases (what τ²'s DB
check compares) and, when they are small, the databases themselves.

The user's own tools (telecom's phone: τ²'s dual control, ``Environment.get_user_tools``) are offered
as ``rehearsal__user__<name>``, which the studio never offers to a policy: the runner calls them for
τ²'s user simulator. They run in the same environment as the agent's calls, as τ²'s orchestrator runs
a user's call (``get_response`` of a ``ToolCall`` whose requestor is ``user``), so the agent's and the
user's states stay synced as τ²'s ``sync_tools`` syncs them. After every call the environment is
synced, as τ²'s orchestrator does after every step (``get_response`` syncs only after a call that
succeeded).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from ..errors import TrainerError
from .domain import environment, find_task

RESET_TOOL = "rehearsal__reset"
SNAPSHOT_TOOL = "rehearsal__snapshot"
#: The user's own tools are offered under this prefix (src/core/env/adminTools.ts USER_TOOL_PREFIX).
USER_TOOL_PREFIX = "rehearsal__user__"
#: A database whose JSON is larger than this is left out of the snapshot (its hash stays): airline's
#: is 7 MB, and the studio takes a snapshot after every episode.
MAX_SNAPSHOT_DB_CHARS = 256 * 1024


def tool_list(env: Any, requestor: str = "assistant") -> list[dict[str, Any]]:
    """The agent's tools (or, with ``requestor="user"``, the user's: none where the domain has none) as
    τ² shows them to a model: name, description, JSON Schema of arguments."""
    if requestor == "user":
        tools = env.get_user_tools() if env.user_tools is not None else []
    else:
        tools = env.get_tools()
    out = []
    for tool in tools:
        function = tool.openai_schema["function"]
        out.append({"name": function["name"], "description": function.get("description"),
                    "parameters": function.get("parameters") or {"type": "object", "properties": {}}})
    return out


def call(env: Any, name: str, arguments: dict[str, Any], call_id: str = "",
         requestor: str = "assistant") -> tuple[str, bool]:
    """Runs one call of the agent (or of the user: ``requestor="user"``) as τ²'s orchestrator does,
    the environment synced after it; ``(τ²'s recorded text, whether it failed)``."""
    from tau2.data_model.message import ToolCall
    message = env.get_response(ToolCall(id=call_id, name=name, arguments=arguments, requestor=requestor))
    if message.error:
        env.sync_tools()  # the orchestrator's sync at the end of the step (get_response synced a success)
    return message.content or "", bool(message.error)


def snapshot(env: Any) -> dict[str, Any]:
    """τ²'s database hashes, and the agent's and the user's databases (telecom's phone) when small."""
    state: dict[str, Any] = {"db_hash": env.get_db_hash(), "user_db_hash": env.get_user_db_hash()}
    for key, toolkit in (("db", env.tools), ("user_db", env.user_tools)):
        db = getattr(toolkit, "db", None) if toolkit is not None else None
        if db is not None:
            text = db.model_dump_json()
            if len(text) <= MAX_SNAPSHOT_DB_CHARS:
                state[key] = json.loads(text)
            else:
                state[f"{key}_size"] = len(text)
    return state


async def serve(domain: str, task: Any) -> None:
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    env = environment(domain, task)
    tools = [types.Tool(name=t["name"], description=t["description"], input_schema=t["parameters"])
             for t in tool_list(env)]
    tools += [types.Tool(name=USER_TOOL_PREFIX + t["name"], description=t["description"], input_schema=t["parameters"])
              for t in tool_list(env, "user")]
    tools += [types.Tool(name=RESET_TOOL, description="Builds the task's environment anew.",
                         input_schema={"type": "object", "properties": {"seed": {"type": "integer"}}}),
              types.Tool(name=SNAPSHOT_TOOL, description="τ²'s database hashes (and a small database).",
                         input_schema={"type": "object", "properties": {}})]
    calls = 0

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        nonlocal env, calls
        if params.name == RESET_TOOL:
            env = environment(domain, task)
            return types.CallToolResult(content=[types.TextContent(type="text", text="reset")])
        if params.name == SNAPSHOT_TOOL:
            state = snapshot(env)
            return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(state))],
                                        structured_content=state)
        calls += 1
        user = params.name.startswith(USER_TOOL_PREFIX)
        name = params.name[len(USER_TOOL_PREFIX):] if user else params.name
        text, failed = call(env, name, dict(params.arguments or {}), f"call_{calls}", "user" if user else "assistant")
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=failed)

    server = Server("tau2", version="1", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trainer.tau2.server", description=__doc__.split("\n")[0])
    parser.add_argument("--domain", required=True, help="airline, retail, telecom or mock")
    parser.add_argument("--task", required=True, help="the task's τ² id")
    parser.add_argument("--tasks", help="a task file in τ²'s format (default: the installed package's)")
    args = parser.parse_args(argv)
    try:
        task = find_task(args.domain, args.task, args.tasks)
        asyncio.run(serve(args.domain, task))
    except TrainerError as e:
        print(f"tau2 server: {e.code}: {e.message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
