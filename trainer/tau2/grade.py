"""An episode's reward as τ²-bench's own evaluator computes it.

The episode is rebuilt as τ²'s messages: the task's earlier conversation (``message_history``) or,
without one, τ²'s greeting (``DEFAULT_FIRST_AGENT_MESSAGE``, which τ²'s orchestrator opens with);
then per user turn the user's message, each call that reached the environment as an assistant
message with one tool call followed by its tool message (the text the server answered, which is
τ²'s own), and the agent's final answer as an assistant message. The user's own calls (telecom's
phone) are a user message with one tool call of requestor ``user`` followed by its tool message of
requestor ``user``, where they were made: before the user's message (``at`` 0), after the agent's
``at``-th call, or after the agent's answer (``after_answer``). ``evaluate_simulation`` of
``tau2.evaluator.evaluator`` (``EvaluationType.ALL``) grades it: the database check and environment
assertions (τ²'s ``EnvironmentEvaluator`` replays the calls on a fresh environment and compares its
database hash with that of the expected actions), the expected actions, and the information the
agent had to communicate, combined by the task's ``reward_basis`` as τ² combines them. An episode
that ended on an error is τ²'s premature termination (reward 0).

Natural-language assertions need a judge model. Given one (``judge``: an OpenAI-compatible
endpoint, :mod:`.endpoint`), τ²'s own ``NLAssertionsEvaluator`` asks it (``EvaluationType.
ALL_WITH_NL_ASSERTIONS``; τ² names its judge's model and arguments in module constants, which are
pointed at the endpoint for the call) and each assertion's verdict is listed; they count in the
reward when the task's basis names them. A judge that cannot be reached or answers what τ²'s
evaluator cannot read is ``TAU2_JUDGE_UNREACHABLE`` or ``TAU2_JUDGE_FAILED`` (not evaluated).
Without a judge, a task whose reward counts them gets no reward and says so; otherwise they are
listed as not part of τ²'s reward for the task.
"""
from __future__ import annotations

import contextlib
import datetime
import traceback
from collections.abc import Iterator
from typing import Any

from ..errors import TrainerError
from .domain import find_task, initial_messages, load_tau2
from .endpoint import llm_args, llm_model, unreachable

#: Episode end codes of the studio that τ² calls running out of steps (the user's turn limit among
#: them: τ² counts the user's messages in its steps).
LIMIT_CODES = frozenset({"TURN_LIMIT", "EPISODE_TIMEOUT", "USER_TURN_LIMIT", "USER_TOOL_LIMIT"})
#: Episode end codes of the user in the loop failing (τ²'s user error); the rest: an agent error.
USER_ERROR_CODES = frozenset({"USER_UNREACHABLE", "USER_FAILED"})
#: Seconds one request to the judge may take when the input names no limit (litellm's ``timeout``).
JUDGE_TIMEOUT_S = 60.0
#: Retries of a judge's request that failed or timed out (the studio's own judge retries once too).
JUDGE_RETRIES = 1


def messages_of(task: Any, turns: list[dict[str, Any]]) -> list[Any]:
    """The episode as τ²'s messages (see the module's doc)."""
    from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage
    from tau2.orchestrator.orchestrator import DEFAULT_FIRST_AGENT_MESSAGE
    out: list[Any] = list(initial_messages(task)) or [DEFAULT_FIRST_AGENT_MESSAGE.model_copy()]
    n = 0

    def add(c: dict[str, Any], requestor: str) -> None:
        nonlocal n
        if c.get("response") is None:
            return  # never reached the environment (a parse error, an unknown tool, a timeout)
        n += 1
        arguments = c.get("arguments")
        tool_call = ToolCall(id=f"call_{n}", name=str(c["name"]),
                             arguments=arguments if isinstance(arguments, dict) else {}, requestor=requestor)
        cls = UserMessage if requestor == "user" else AssistantMessage
        out.append(cls(role=requestor, tool_calls=[tool_call]))
        out.append(ToolMessage(id=tool_call.id, role="tool", content=str(c["response"]), requestor=requestor,
                               error=bool(c.get("error"))))

    for turn in turns:
        calls = list(turn.get("calls", []))
        user_calls = [c for c in turn.get("user_calls", []) if isinstance(c, dict)]
        after = [c for c in user_calls if c.get("after_answer")]
        before = [c for c in user_calls if not c.get("after_answer")]
        for c in before:
            if int(c.get("at", 0)) <= 0 or not calls:
                add(c, "user")
        out.append(UserMessage(role="user", content=str(turn.get("user", ""))))
        for i, c in enumerate(calls):
            add(c, "assistant")
            for u in before:
                at = int(u.get("at", 0))
                if at == i + 1 or (i == len(calls) - 1 and at > i + 1):
                    add(u, "user")
        if turn.get("answer"):
            out.append(AssistantMessage(role="assistant", content=str(turn["answer"])))
        for c in after:
            add(c, "user")
    return out


def grade(domain: str, task: Any, turns: list[dict[str, Any]], ended: str | None = None,
          judge: dict[str, Any] | None = None) -> dict[str, Any]:
    """τ²'s verdict: ``reward`` (None when it needs a judge and ``judge`` names none), ``reward_basis``,
    ``breakdown`` by component, and each component's checks."""
    load_tau2()
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.data_model.tasks import RewardType
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    criteria = task.evaluation_criteria
    basis = [b.value for b in criteria.reward_basis] if criteria is not None else []
    nl = list(criteria.nl_assertions or []) if criteria is not None else []
    graded_task, kind = task, EvaluationType.ALL
    if judge is not None and nl:
        kind = EvaluationType.ALL_WITH_NL_ASSERTIONS
    elif RewardType.NL_ASSERTION.value in basis:
        # τ²'s ALL raises when the basis counts NL assertions; the others are graded all the same.
        graded_task = task.model_copy(deep=True)
        graded_task.evaluation_criteria.reward_basis = [b for b in criteria.reward_basis
                                                        if b != RewardType.NL_ASSERTION]
    reason = TerminationReason.AGENT_STOP if ended is None else (
        TerminationReason.MAX_STEPS if ended in LIMIT_CODES else
        TerminationReason.USER_ERROR if ended in USER_ERROR_CODES else TerminationReason.AGENT_ERROR)
    now = datetime.datetime.now(datetime.timezone.utc).isoformat()
    simulation = SimulationRun(id="rehearsal", task_id=task.id, timestamp=now, start_time=now, end_time=now,
                               duration=0.0, termination_reason=reason, messages=messages_of(task, turns))
    with _judged_by(judge):
        info = evaluate_simulation(simulation, graded_task, kind, solo_mode=False, domain=domain)
    verdict: dict[str, Any] = {
        "reward": info.reward,
        "reward_basis": basis,
        "breakdown": {(k.value if hasattr(k, "value") else str(k)): v for k, v in (info.reward_breakdown or {}).items()},
    }
    if isinstance(info.info, dict) and "note" in info.info:
        verdict["note"] = str(info.info["note"])
    if info.db_check is not None:
        verdict["db_match"] = info.db_check.db_match
    if info.action_checks is not None:
        verdict["actions"] = [{"name": a.action.name, "matched": a.action_match} for a in info.action_checks]
    if info.communicate_checks is not None:
        verdict["communicate"] = [{"info": c.info, "met": c.met} for c in info.communicate_checks]
    if info.env_assertions is not None:
        verdict["env_assertions"] = [{"function": a.env_assertion.func_name, "met": a.met} for a in info.env_assertions]
    if nl:
        counted = RewardType.NL_ASSERTION.value in basis
        verdict["nl_assertions"] = {"count": len(nl), "counted": counted}
        if info.nl_assertions is not None:
            verdict["nl_assertions"]["checks"] = [
                {"assertion": c.nl_assertion, "met": c.met, "justification": c.justification}
                for c in info.nl_assertions]
        elif counted and judge is None and reason == TerminationReason.AGENT_STOP:
            # (An episode τ² calls ended prematurely gets 0 whatever its assertions.)
            verdict["reward"] = None
    return verdict


@contextlib.contextmanager
def _judged_by(judge: dict[str, Any] | None) -> Iterator[None]:
    """τ²'s ``NLAssertionsEvaluator`` asking ``judge`` for the block: τ² names its judge's model and
    arguments in its module's constants (``DEFAULT_LLM_NL_ASSERTIONS[_ARGS]``), set here and restored
    after. A fault raised by τ²'s NL evaluator (the request, or reading the judge's answer) is the
    judge's: ``TAU2_JUDGE_UNREACHABLE`` or ``TAU2_JUDGE_FAILED``."""
    if judge is None:
        yield
        return
    from tau2.config import DEFAULT_LLM_NL_ASSERTIONS_ARGS
    from tau2.evaluator import evaluator_nl_assertions as evaluator
    saved = evaluator.DEFAULT_LLM_NL_ASSERTIONS, evaluator.DEFAULT_LLM_NL_ASSERTIONS_ARGS
    evaluator.DEFAULT_LLM_NL_ASSERTIONS = llm_model(judge)
    evaluator.DEFAULT_LLM_NL_ASSERTIONS_ARGS = {
        **llm_args(judge, DEFAULT_LLM_NL_ASSERTIONS_ARGS, float(judge.get("timeout_s") or JUDGE_TIMEOUT_S)),
        "max_retries": JUDGE_RETRIES}
    try:
        yield
    except Exception as e:
        if not any(frame.f_code.co_filename == evaluator.__file__ for frame, _ in traceback.walk_tb(e.__traceback__)):
            raise
        where = f"the judge at {judge['base_url']} (model {judge['model']})"
        if unreachable(e):
            raise TrainerError("TAU2_JUDGE_UNREACHABLE", f"{where} cannot be reached ({type(e).__name__}: "
                               f"{str(e)[:300]}): start the server or fix the judge endpoint") from e
        raise TrainerError("TAU2_JUDGE_FAILED", f"τ²'s natural-language assertions: {where} failed or answered "
                           f"what τ²'s evaluator cannot read ({type(e).__name__}: {str(e)[:300]})") from e
    finally:
        evaluator.DEFAULT_LLM_NL_ASSERTIONS, evaluator.DEFAULT_LLM_NL_ASSERTIONS_ARGS = saved


def main() -> int:
    """``python -m trainer.tau2.grade``: reads ``{domain, task, tasks?, turns, ended?, judge?}`` as JSON
    on stdin (``turns``: per user turn ``{user, calls: [{name, arguments, response?, error?}], answer?,
    user_calls?: [{name, arguments, response?, error?, at, after_answer?}]}``, ``response`` the text the
    server answered, ``user_calls`` the user's own; ``ended``: the code an episode stopped on; ``judge``:
    ``{base_url, model, api_key_env?, timeout_s?}``, the endpoint of the NL assertions), prints the
    verdict as one JSON line; a fault in what was given prints ``{"error": ...}`` (exit 0: the item
    is not evaluated)."""
    import json
    import sys

    try:
        given = json.loads(sys.stdin.read())
        task = find_task(str(given["domain"]), str(given["task"]), given.get("tasks"))
        turns = given["turns"]
        if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
            raise TypeError("turns is not a list of objects")
        judge = given.get("judge")
        if judge is not None and not (isinstance(judge, dict) and judge.get("base_url") and judge.get("model")):
            raise TypeError("judge is not {base_url, model, ...}")
        verdict = grade(str(given["domain"]), task, turns, given.get("ended"), judge)
    except TrainerError as e:
        print(json.dumps({"error": f"{e.code}: {e.message}"}))
        return 0
    except (KeyError, TypeError) as e:
        print(json.dumps({"error": f"TAU2_GRADE_INPUT: the grader's input is not what it reads ({e!r})."}))
        return 0
    except ValueError as e:
        # τ²'s environment evaluator replays the calls and refuses a trajectory whose recorded answers
        # differ from its own (answers that did not come from τ²'s environment: imagined ones).
        print(json.dumps({"error": f"TAU2_REPLAY_MISMATCH: τ²'s evaluator refused the episode: {str(e)[:500]}"}))
        return 0
    print(json.dumps(verdict, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
