"""τ²-bench tasks as studio tasks.

``python -m trainer.tau2.importer --domain airline|retail|telecom|mock [--split base] [--tasks <file>]
--out <dir>`` writes ``<dir>/tasks/<id>.task.json`` per τ² task of the split (default ``base``, τ²'s
own default: every task of airline, retail and mock, telecom's 114): the domain's policy in the
system prompt τ²'s agent gets (``LLMAgent.system_prompt``), the built-in ``tau2`` server of the
task (τ²'s environment in the task's initial state), one ``tau2`` check (graded by τ²'s evaluator),
and a reference solution from the task's expected actions (``evaluation_criteria.actions`` in order,
those of the user, telecom's, marked ``"by": "user"``, then an answer that says the information the
task expects communicated).

The task's one fixed user turn is the scenario's opening (see :func:`opening`); its ``user`` is τ²'s
user simulator (:func:`user_for`), who writes the first message itself and goes on when a run names
an endpoint to play it. ``--tasks`` reads a file in τ²'s task format instead of the package's (the
task files then name it, relative to themselves).

A domain or split that does not exist, or a task file that does not parse, is one coded error on
stderr (exit 2). A task that cannot be imported (an id that does not make a file name, a file the
write path refuses) is skipped and reported as ``task <id>: skipped: <CODE>: <reason>``. Every file
is written through ``trainer.write_path``. The last line on stdout is a JSON summary; exit 1 when
nothing was imported.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from typing import Any

from ..errors import TrainerError
from ..write_path import ID_PATTERN, make_folder, shown_name, write_file
from .domain import DOMAINS, environment, initial_messages, read_tasks, splits

#: Most acts of one episode: τ²'s orchestrator stops at 100 messages (``max_steps``), about half
#: of them the agent's.
MAX_TURNS = 50
#: The reference answer when the task expects nothing communicated.
DONE = "Done."
#: Most messages of the simulated user after its opening: each takes at least one act of the agent.
USER_MAX_TURNS = MAX_TURNS // 2


def user_for(domain: str, task: Any, tools: list[str], tasks_arg: str | None) -> dict[str, Any]:
    """The task's user in the loop: τ²'s user simulator for the task's scenario, which writes the first
    message (in answer to τ²'s greeting, as in τ²) and ends the conversation as τ²'s does: its stop
    tokens (read from the installed package), the agent's transfer to a human agent (when the domain
    has that tool), or the turn limit."""
    from tau2.agent.llm_agent import LLMSoloAgent
    from tau2.user.base import OUT_OF_SCOPE, STOP, TRANSFER
    transfer = LLMSoloAgent.TRANSFER_TOOL_NAME
    # τ²'s user speaks first, in answer to the greeting; after an earlier conversation, the opening
    # quotes it (the simulator then goes on from the agent's first answer).
    opens = not initial_messages(task)
    return {"kind": "tau2", "domain": domain, "task": task.id, **({"tasks": tasks_arg} if tasks_arg else {}),
            **({"opens": True} if opens else {}), "stop": [STOP, TRANSFER, OUT_OF_SCOPE],
            **({"endTools": [transfer]} if transfer in tools else {}), "maxTurns": USER_MAX_TURNS}


def studio_id(domain: str, task_id: str) -> str:
    """The studio's id of a τ² task: ``tau2_<domain>_<id>``, characters a file name cannot hold as
    ``_``, a long one cut and made unique by a hash of the τ² id (telecom's ids are long)."""
    name = re.sub(r"[^A-Za-z0-9._:-]", "_", f"tau2_{domain}_{task_id}")
    if len(name) > 100:
        name = f"{name[:90]}-{hashlib.sha256(task_id.encode()).hexdigest()[:8]}"
    if not ID_PATTERN.fullmatch(name):
        raise TrainerError("INVALID_ID", f"the τ² id {shown_name(task_id)} does not make a studio id")
    return name


def opening(task: Any) -> str:
    """The user's first message: the scenario's reason for the call and what the user knows
    (``reason_for_call``, ``known_info``, in the scenario's own words, addressed to the simulated user);
    a scenario of plain text: the task's ticket (τ²'s one-message form of it) or that text. An earlier
    conversation (``message_history``) is quoted before it, since the studio's task has no place for
    earlier assistant messages."""
    instructions = task.user_scenario.instructions
    if isinstance(instructions, str):
        text = task.ticket or instructions
    else:
        text = "\n\n".join(p.strip() for p in (instructions.reason_for_call, instructions.known_info) if p)
    history = initial_messages(task)
    if history:
        said = []
        for m in history:
            if m.role in ("user", "assistant") and m.content:
                said.append(f"{m.role}: {m.content}")
            for c in getattr(m, "tool_calls", None) or []:
                said.append(f"{m.role} called {c.name}({json.dumps(c.arguments, ensure_ascii=False)})")
        text = "Earlier in this conversation:\n" + "\n".join(said) + "\n\n" + text
    return text


def system_prompt(domain: str, task: Any) -> str:
    """The system prompt τ²'s agent (``LLMAgent``) gets in this domain: its instructions and the policy."""
    from tau2.agent.llm_agent import LLMAgent
    env = environment(domain, task)
    return str(LLMAgent(tools=env.get_tools(), domain_policy=env.get_policy()).system_prompt)


def reference(task: Any) -> dict[str, Any]:
    """The expected actions in order, the user's own (telecom's dual control: ``requestor`` ``user``)
    marked ``"by": "user"`` (``rehearse verify`` makes them in the user's environment; the reference
    policy, which plays the agent, leaves them to the user), then an answer with what the task expects
    communicated."""
    criteria = task.evaluation_criteria
    actions = list(criteria.actions or []) if criteria else []
    said = [str(s) for s in (criteria.communicate_info or [])] if criteria else []
    return {"turns": [{"calls": [{"name": a.name, "arguments": a.arguments, **({"by": "user"} if a.requestor == "user" else {})}
                                 for a in actions],
                       "answer": "\n".join(said) if said else DONE}]}


def task_for(domain: str, task: Any, system: str, split_of: dict[str, list[str]], tasks_arg: str | None,
             tools: list[str]) -> dict[str, Any]:
    """The task file of one τ² task (``tasks_arg``: its task file, relative to the task; ``tools``: the
    names of the agent's tools in the domain)."""
    sid = studio_id(domain, task.id)
    text = opening(task)
    in_splits = sorted(s for s, ids in split_of.items() if task.id in ids)
    purpose = task.description.purpose if task.description is not None and task.description.purpose else None
    server_args = ["--domain", domain, "--task", task.id, *(["--tasks", tasks_arg] if tasks_arg else [])]
    check: dict[str, Any] = {"id": "tau2", "kind": "tau2", "domain": domain, "task": task.id,
                             **({"tasks": tasks_arg} if tasks_arg else {})}
    return {
        "version": 1,
        "id": sid,
        "description": (purpose or text)[:200],
        "domain": f"tau2-{domain}",
        "split": "train" if "train" in in_splits else "test",
        "tags": ["tau2", domain, *in_splits],
        "system": system,
        "turns": [{"user": text}],
        "user": user_for(domain, task, tools, tasks_arg),
        "servers": {"tau2": {"builtin": "tau2", "args": server_args, **({"cwd": "."} if tasks_arg else {})}},
        "checks": [check],
        "limits": {"maxTurns": MAX_TURNS, "maxCallsPerTurn": 16},
        "reference": reference(task),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trainer.tau2.importer", description=__doc__.split("\n")[0])
    parser.add_argument("--domain", required=True, help=", ".join(DOMAINS))
    parser.add_argument("--split", default="base", help="a split of the domain (default: base)")
    parser.add_argument("--tasks", help="a task file in τ²'s format (default: the installed package's)")
    parser.add_argument("--out", required=True, help="the folder to write tasks/ into")
    args = parser.parse_args(argv)
    out = os.path.abspath(args.out)
    out_tasks = os.path.join(out, "tasks")
    tasks_path = os.path.abspath(args.tasks) if args.tasks else None
    try:
        split_of = splits(args.domain)
        # A file of one's own is imported whole (its ids are not those of the package's splits).
        tasks = read_tasks(args.domain, None if tasks_path else args.split, tasks_path)
        make_folder(out, "tasks")
    except TrainerError as e:
        print(f"import tau2: {e.code}: {e.message}", file=sys.stderr)
        return 2
    written, skipped = 0, 0
    taken: set[str] = set()
    system: str | None = None
    tools: list[str] | None = None
    for task in tasks:
        try:
            sid = studio_id(args.domain, task.id)
            if sid.casefold() in taken:
                raise TrainerError("TAU2_TASK_INVALID", "an earlier task has this id (file names may ignore case)")
            # One system prompt per domain: the policy does not depend on the task.
            system = system or system_prompt(args.domain, task)
            tools = tools if tools is not None else [t.name for t in environment(args.domain, task).get_tools()]
            tasks_arg = os.path.relpath(tasks_path, out_tasks) if tasks_path else None
            record = task_for(args.domain, task, system, split_of, tasks_arg, tools)
            write_file(out, ("tasks", f"{sid}.task.json"), json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        except TrainerError as e:
            skipped += 1
            print(f"task {shown_name(task.id)}: skipped: {e.code}: {e.message}", file=sys.stderr)
            continue
        taken.add(sid.casefold())
        written += 1
    print(json.dumps({"tasks": written, "skipped": skipped, "out": out_tasks, "domain": args.domain,
                      "split": None if tasks_path else args.split}))
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
