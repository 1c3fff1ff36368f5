"""τ²-bench's own user simulator, asked for one next message.

``python -m trainer.tau2.user`` reads one JSON object on stdin::

    {"domain": "telecom", "task": "<τ² id>", "tasks": "<file>"?,
     "conversation": [{"role": "user" | "assistant", "content": "..."}
                      | {"role": "user", "content": "..."?, "tool_calls": [{"id", "name", "arguments"}]}
                      | {"role": "tool", "id": "...", "content": "...", "error": false}, ...],
     "user_tools": ["toggle_airplane_mode", ...]?,
     "endpoint": {"base_url": "http://host:port/v1", "model": "<name>", "api_key_env": "VAR"?}}

and prints one JSON line: ``{"message": "<the user's next message>"}``, ``{"tool_calls": [{"id",
"name", "arguments"}], "message": "<text beside them>"?}`` (the user acts on its own device first:
the caller runs the calls in the user's environment and asks again with their results), or
``{"error": {"code": ..., "message": ...}}`` (exit 0 either way). The user is τ²'s
``UserSimulator`` built as τ²'s ``run`` builds it (``instructions=str(task.user_scenario)``: τ²'s
guidelines and the task's scenario in its system prompt; ``tools``: the domain's user tools,
``Environment.get_user_tools``, those of ``user_tools`` that the caller can run, or none, as for a
domain without them, and then τ²'s guidelines without tools), on ``openai/<model>`` through litellm
at the endpoint (its key read from the environment variable named, never from the input). Its
history is what τ²'s user state holds: τ²'s greeting (or the task's earlier conversation, its text
messages and the user's own calls), then the conversation (the user's messages, its own calls and
their results, the agent's answers), the last message (the agent's answer or the result of the
user's last call) the one it replies to. Whether the reply ends the conversation (τ²'s stop tokens)
is for the caller to see: the task names them.

Codes: ``USER_UNREACHABLE`` (the endpoint cannot be reached), ``USER_FAILED`` (it answered an error
or nothing, or the input is not what this reads), or the τ² task's own (``TAU2_TASK_UNKNOWN``...).
"""
from __future__ import annotations

import json
import sys
from typing import Any

from ..errors import TrainerError
from .domain import find_task, fresh_environment, initial_messages, load_tau2
from .endpoint import llm_args, llm_model, unreachable

#: Most bytes of input read (a conversation of a few hundred long messages).
MAX_INPUT_BYTES = 16 * 1024 * 1024
#: Most messages of a conversation.
MAX_MESSAGES = 10_000
#: Seconds one request to the endpoint may take (litellm's ``timeout``).
REQUEST_TIMEOUT_S = 120


def _message(m: dict[str, Any]) -> Any:
    """One message of the conversation as τ²'s message: a text of the user or the agent, the user's
    own calls (a ``UserMessage`` with ``tool_calls`` of requestor ``user``), or a call's result (a
    ``ToolMessage`` of requestor ``user``)."""
    from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage
    if m["role"] == "tool":
        return ToolMessage(id=str(m["id"]), role="tool", content=str(m["content"]), requestor="user",
                           error=bool(m.get("error")))
    if m["role"] == "user" and m.get("tool_calls"):
        calls = [ToolCall(id=str(c["id"]), name=str(c["name"]), requestor="user",
                          arguments=c["arguments"] if isinstance(c.get("arguments"), dict) else {})
                 for c in m["tool_calls"]]
        content = m.get("content")
        return UserMessage(role="user", content=str(content) if content else None, tool_calls=calls)
    cls = UserMessage if m["role"] == "user" else AssistantMessage
    return cls(role=m["role"], content=str(m["content"]))


def history(task: Any, conversation: list[dict[str, Any]]) -> list[Any]:
    """τ²'s messages the user has seen: τ²'s greeting or the earlier conversation's messages that a
    user's history holds (τ²'s ``is_valid_user_history_message``: texts, the user's own calls and
    their results), then ``conversation``."""
    from tau2.orchestrator.orchestrator import DEFAULT_FIRST_AGENT_MESSAGE
    from tau2.user.base import is_valid_user_history_message
    earlier = [m for m in initial_messages(task) if is_valid_user_history_message(m)]
    out: list[Any] = [m.model_copy() for m in earlier] or [DEFAULT_FIRST_AGENT_MESSAGE.model_copy()]
    out.extend(_message(m) for m in conversation)
    return out


def user_tools(domain: str, names: list[str] | None) -> list[Any] | None:
    """The domain's user tools (τ²'s ``Environment.get_user_tools``, as τ²'s ``run`` gives them to the
    simulator) that the caller can run (``names``); None when there are none (airline's, retail's)."""
    if not names:
        return None
    env = fresh_environment(domain)
    if env.user_tools is None:
        return None
    wanted = set(names)
    tools = [t for t in env.get_user_tools() if t.name in wanted]
    return tools or None


def next_message(task: Any, conversation: list[dict[str, Any]], endpoint: dict[str, Any],
                 domain: str = "", tool_names: list[str] | None = None) -> dict[str, Any]:
    """The user's reply to the last message (the agent's answer, or the result of the user's own last
    call) from τ²'s ``UserSimulator`` on the endpoint: ``{"message"}`` or ``{"tool_calls", "message"?}``."""
    load_tau2()
    from tau2.config import DEFAULT_LLM_ARGS_USER
    from tau2.user.user_simulator import UserSimulator
    user = UserSimulator(tools=user_tools(domain, tool_names) if domain else None,
                         instructions=str(task.user_scenario), llm=llm_model(endpoint),
                         llm_args=llm_args(endpoint, DEFAULT_LLM_ARGS_USER, REQUEST_TIMEOUT_S))
    messages = history(task, conversation)
    if messages[-1].role not in ("assistant", "tool"):
        raise TrainerError("USER_FAILED", "the conversation does not end with the agent's answer or a result of the user's call")
    state = user.get_init_state(message_history=messages[:-1])
    reply, _ = user.generate_next_message(messages[-1], state)
    if reply.tool_calls:
        calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls]
        return {"tool_calls": calls, **({"message": str(reply.content)} if reply.content else {})}
    if not reply.content:
        raise TrainerError("USER_FAILED", f"the user endpoint gave no text (model {endpoint['model']})")
    return {"message": str(reply.content)}


def _error_code(e: BaseException) -> str:
    """``USER_UNREACHABLE`` for a connection that could not be made or timed out, else ``USER_FAILED``."""
    return "USER_UNREACHABLE" if unreachable(e) else "USER_FAILED"


def main() -> int:
    given_text = sys.stdin.read(MAX_INPUT_BYTES + 1)
    try:
        if len(given_text) > MAX_INPUT_BYTES:
            raise TrainerError("USER_FAILED", f"the input is longer than {MAX_INPUT_BYTES} bytes")
        given = json.loads(given_text)
        conversation = given["conversation"]
        if (not isinstance(conversation, list) or len(conversation) > MAX_MESSAGES
                or not all(isinstance(m, dict) and m.get("role") in ("user", "assistant", "tool") for m in conversation)):
            raise TrainerError("USER_FAILED", "conversation is not a list of user, assistant and tool messages")
        names = given.get("user_tools") or []
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise TrainerError("USER_FAILED", "user_tools is not a list of tool names")
        domain = str(given["domain"])
        task = find_task(domain, str(given["task"]), given.get("tasks"))
        print(json.dumps(next_message(task, conversation, dict(given["endpoint"]), domain, names)))
    except TrainerError as e:
        print(json.dumps({"error": {"code": e.code, "message": e.message}}))
    except (KeyError, TypeError, ValueError) as e:
        print(json.dumps({"error": {"code": "USER_FAILED", "message": f"the input is not what this reads ({e!r})"}}))
    except Exception as e:  # noqa: BLE001 - litellm's and the endpoint's faults, reported with their kind
        print(json.dumps({"error": {"code": _error_code(e), "message": f"{type(e).__name__}: {str(e)[:500]}"}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
