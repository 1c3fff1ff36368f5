"""A record's verdict from the calls a model made, as BFCL's ``multi_turn_checker`` decides it.

For each user turn: the model's calls of that turn run, act by act, on one world; the turn's
ground-truth calls run on another. A turn whose ground truth is empty is not checked (the model is
expected to say it cannot, with no call; BFCL's runner of this version does not grade that, and
neither does this: :func:`irrelevance` says it separately). Otherwise the turn fails when the model
made no call in it (``empty_turn_model_response``), when any public attribute of any instance
differs between the two worlds (``instance_state_mismatch``), or when the turn's ground-truth
results are not a sub-multiset of every result the model got so far, in all turns
(``execution_response_mismatch``). The first failing turn decides; a record with fewer or more
model turns than user turns fails as ``force_terminated``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .backend import World
from .calls import bind, parse_call

#: A model's calls: per user turn, per act, the calls ``(name, arguments)`` it made.
ModelTurns = Sequence[Sequence[Sequence[tuple[str, dict[str, Any]]]]]


def ground_truth_calls(world: World, turn: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """A turn's ground-truth call strings as ``(name, keyword arguments)`` on ``world``'s methods."""
    out = []
    for text in turn:
        name, args, kwargs = parse_call(text)
        method = world.methods.get(name)
        out.append((name, bind(method, name, args, kwargs) if method else kwargs))
    return out


def _missing(expected: list[str], got: list[str]) -> list[str]:
    pool = list(got)
    missing = []
    for item in expected:
        if item in pool:
            pool.remove(item)
        else:
            missing.append(item)
    return missing


def grade(record: dict[str, Any], ground_truth: Sequence[Sequence[str]], model: ModelTurns) -> dict[str, Any]:
    """``{"valid": bool, "error_type"?, "turn"?, "message"?, "details"?}`` for one record."""
    if len(model) != len(ground_truth):
        return {"valid": False, "error_type": "multi_turn:force_terminated",
                "message": f"{len(model)} model turns for {len(ground_truth)} user turns."}
    model_world, truth_world = World(record), World(record)
    so_far: list[str] = []
    for turn, truth_turn in enumerate(ground_truth):
        acts = [act for act in model[turn] if act]
        for act in acts:
            so_far.extend(model_world.call(name, args) for name, args in act)
        truth_results = [truth_world.call(name, args) for name, args in ground_truth_calls(truth_world, truth_turn)]
        if not truth_turn:
            continue
        if not acts:
            return {"valid": False, "error_type": "multi_turn:empty_turn_model_response", "turn": turn,
                    "message": f"No call in turn {turn}, whose ground truth has {len(truth_turn)}."}
        for name, truth_instance in truth_world.instances.items():
            ours = model_world.instances[name]
            differences = {k: {"model": getattr(ours, k, None), "ground_truth": v}
                           for k, v in vars(truth_instance).items()
                           if not k.startswith("_") and getattr(ours, k, None) != v}
            if differences:
                return {"valid": False, "error_type": "multi_turn:instance_state_mismatch", "turn": turn,
                        "message": f"After turn {turn}, {name} differs from the ground truth's: "
                                   f"{', '.join(sorted(differences))}.",
                        "details": {"class": name, "attributes": sorted(differences)}}
        missing = _missing(truth_results, so_far)
        if missing:
            return {"valid": False, "error_type": "multi_turn:execution_response_mismatch", "turn": turn,
                    "message": f"After turn {turn}, {len(missing)} ground-truth result(s) are missing from the "
                               "model's results so far.",
                    "details": {"missing": missing}}
    return {"valid": True}


def irrelevance(ground_truth: Sequence[Sequence[str]], model: ModelTurns) -> list[int]:
    """The turns with an empty ground truth in which the model still made calls."""
    return [t for t, truth in enumerate(ground_truth)
            if not truth and t < len(model) and any(act for act in model[t])]


def main() -> int:
    """``python -m trainer.bfcl.grade``: reads ``{record, records?, ground_truth, model}`` as JSON on
    stdin (``model``: per user turn, per act, ``[name, arguments]``), prints the verdict as one JSON
    line; a fault in what was given prints ``{"error": ...}`` (exit 0: the item is not evaluated)."""
    import json
    import sys

    from ..errors import TrainerError
    from .backend import find_record, records_file, use_backend
    try:
        given = json.loads(sys.stdin.read())
        if given.get("backend"):
            use_backend(given["backend"])
        record_id = given["record"]
        category = record_id.rsplit("_", 1)[0].removeprefix("multi_turn_")
        path = given.get("records") or records_file(category)
        record = find_record(path, record_id)
        model = [[[(str(name), args) for name, args in act] for act in turn] for turn in given["model"]]
        verdict = grade(record, given["ground_truth"], model)
        # BFCL's irrelevance check, which its runner does not apply: said, not graded.
        extra = irrelevance(given["ground_truth"], model)
        if extra:
            verdict["irrelevance"] = extra
    except TrainerError as e:
        print(json.dumps({"error": f"{e.code}: {e.message}"}))
        return 0
    except (KeyError, TypeError, ValueError) as e:
        print(json.dumps({"error": f"BFCL_GRADE_INPUT: the grader's input is not what it reads ({e!r})."}))
        return 0
    print(json.dumps(verdict, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
