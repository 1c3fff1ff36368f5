"""τ²-bench's own user simulator, asked for one next message.

``python -m trainer.tau2.user`` reads one JSON object on stdin::

    {"domain": "retail", "task": "<τ² id>", "tasks": "<file>"?,
     "conversation": [{"role": "user" | "assistant", "content": "..."}, ...],
     "endpoint": {"base_url": "http://host:port/v1", "model": "<name>", "api_key_env": "VAR"?}}

and prints one JSON line: ``{"message": "<the user's next message>"}``, or
``{"error": {"code": ..., "message": ...}}`` (exit 0 either way). The user is τ²'s
``UserSimulator`` built as τ²'s ``run`` builds it (``instructions=str(task.user_scenario)``: τ²'s
guidelines and the task's scenario in its system prompt), on ``openai/<model>`` through litellm at
the endpoint (its key read from the environment variable named, never from the input). Its history
is what τ²'s user sees: τ²'s greeting (or the task's earlier conversation, its text messages), then
the conversation, the agent's last answer the message it replies to. Whether the reply ends the
conversation (τ²'s stop tokens) is for the caller to see: the task names them.

Codes: ``USER_UNREACHABLE`` (the endpoint cannot be reached), ``USER_FAILED`` (it answered an error
or no text, or the input is not what this reads), or the τ² task's own (``TAU2_TASK_UNKNOWN``...).
The user's own tools (telecom's phone) are not offered: that domain's user cannot act yet.
"""
from __future__ import annotations

import json
import sys
from typing import Any

from ..errors import TrainerError
from .domain import find_task, initial_messages, load_tau2
from .endpoint import llm_args, llm_model, unreachable

#: Most bytes of input read (a conversation of a few hundred long messages).
MAX_INPUT_BYTES = 16 * 1024 * 1024
#: Most messages of a conversation.
MAX_MESSAGES = 10_000
#: Seconds one request to the endpoint may take (litellm's ``timeout``).
REQUEST_TIMEOUT_S = 120


def history(task: Any, conversation: list[dict[str, Any]]) -> list[Any]:
    """τ²'s messages the user has seen: τ²'s greeting or the earlier conversation's text messages,
    then ``conversation``."""
    from tau2.data_model.message import AssistantMessage, UserMessage
    from tau2.orchestrator.orchestrator import DEFAULT_FIRST_AGENT_MESSAGE
    earlier = [m for m in initial_messages(task)
               if m.role in ("user", "assistant") and m.content and not getattr(m, "tool_calls", None)]
    out: list[Any] = [m.model_copy() for m in earlier] or [DEFAULT_FIRST_AGENT_MESSAGE.model_copy()]
    for m in conversation:
        cls = UserMessage if m["role"] == "user" else AssistantMessage
        out.append(cls(role=m["role"], content=str(m["content"])))
    return out


def next_message(task: Any, conversation: list[dict[str, Any]], endpoint: dict[str, Any]) -> str:
    """The user's reply to the agent's last answer, from τ²'s ``UserSimulator`` on the endpoint."""
    load_tau2()
    from tau2.config import DEFAULT_LLM_ARGS_USER
    from tau2.user.user_simulator import UserSimulator
    user = UserSimulator(tools=None, instructions=str(task.user_scenario), llm=llm_model(endpoint),
                         llm_args=llm_args(endpoint, DEFAULT_LLM_ARGS_USER, REQUEST_TIMEOUT_S))
    messages = history(task, conversation)
    if messages[-1].role != "assistant":
        raise TrainerError("USER_FAILED", "the conversation does not end with the agent's answer")
    state = user.get_init_state(message_history=messages[:-1])
    reply, _ = user.generate_next_message(messages[-1], state)
    if not reply.content:
        raise TrainerError("USER_FAILED", f"the user endpoint gave no text (model {endpoint['model']})")
    return str(reply.content)


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
                or not all(isinstance(m, dict) and m.get("role") in ("user", "assistant") for m in conversation)):
            raise TrainerError("USER_FAILED", "conversation is not a list of user and assistant messages")
        task = find_task(str(given["domain"]), str(given["task"]), given.get("tasks"))
        print(json.dumps({"message": next_message(task, conversation, dict(given["endpoint"]))}))
    except TrainerError as e:
        print(json.dumps({"error": {"code": e.code, "message": e.message}}))
    except (KeyError, TypeError, ValueError) as e:
        print(json.dumps({"error": {"code": "USER_FAILED", "message": f"the input is not what this reads ({e!r})"}}))
    except Exception as e:  # noqa: BLE001 - litellm's and the endpoint's faults, reported with their kind
        print(json.dumps({"error": {"code": _error_code(e), "message": f"{type(e).__name__}: {str(e)[:500]}"}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
