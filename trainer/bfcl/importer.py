"""BFCL-v4 multi-turn records as studio tasks.

``python -m trainer.bfcl.importer <records file | category> --out <dir> [--answers <file>]
[--limit N]`` writes ``<dir>/tasks/<id>.task.json`` per record: its user turns (a ``miss_func`` turn
without a message says what BFCL's runner says, "I have updated some more functions...", and
``addTools`` offers the functions it held back), the built-in ``bfcl`` server of the record, one
``bfcl`` check with the ground truth (graded as BFCL grades it), and a reference solution from the
ground truth (positional arguments named by the method's signature). A category name reads the
installed bfcl-eval's own file and the server reads it there too; another records file is named to
the server and the check relative to the task (``--records``).

A record that cannot be imported (an id that is not one plain file name, ``INVALID_ID``; a class the
backend lacks, a ground-truth call that does not parse, or one that fails on the record's own initial
state; a file the write path refuses, ``PATH_OUTSIDE_WORKSPACE``) is skipped and reported on stderr as
one line, ``record <id>: skipped: <CODE>: <reason>`` (an id that is not valid is shown JSON-quoted),
and the others are imported. Every file is written through ``trainer.write_path``: inside ``--out``
judged by real paths, atomically. The last line on stdout is a JSON summary. Exit 1 when nothing was
imported, 2 when the input cannot be read or ``--out`` cannot be written.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..errors import TrainerError
from ..write_path import make_folder, safe_id, shown_name, write_file
from .backend import CATEGORIES, World, answers_file, category_of, read_json_lines, records_file, use_backend
from .grade import ground_truth_calls

#: What BFCL's runner says at a miss_func turn (``DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC``).
ADDED_FUNCTIONS_MESSAGE = "I have updated some more functions you can choose from. What about now?"
#: BFCL ends a user turn after this many steps (``MAXIMUM_STEP_LIMIT``).
STEPS_PER_TURN = 20


def user_text(turn: Any) -> str:
    """The user's words of one BFCL turn (its user messages, joined)."""
    if not isinstance(turn, list):
        raise TrainerError("BFCL_RECORD_INVALID", "a turn of question is not a list of messages")
    return "\n\n".join(str(m.get("content", "")) for m in turn if isinstance(m, dict) and m.get("role") == "user")


def task_for(record: dict[str, Any], truth: list[list[str]], records_arg: str | None,
             backend_arg: str | None = None) -> dict[str, Any]:
    """The task file of one record (``records_arg``, ``backend_arg``: relative to the task)."""
    rid = record["id"]
    question = record.get("question")
    if not isinstance(question, list) or not question:
        raise TrainerError("BFCL_RECORD_INVALID", "question is not a list of turns")
    if len(truth) != len(question):
        raise TrainerError("BFCL_RECORD_INVALID", f"{len(truth)} ground-truth turns for {len(question)} user turns")
    world = World(record)
    reference = []
    for t, calls_text in enumerate(truth):
        calls = ground_truth_calls(world, calls_text)
        for (name, args), text in zip(calls, calls_text, strict=True):
            result = world.call(name, args)
            if result.startswith("Error during execution: "):
                raise TrainerError("BFCL_TRUTH_FAILS", f"turn {t}: the ground-truth call {text!r} fails: {result[24:]}")
        reference.append({"calls": [{"name": n, "arguments": a} for n, a in calls], "answer": "Done."})
    missed = record.get("missed_function") or {}
    turns = []
    for t, turn in enumerate(question):
        added = missed.get(str(t)) if isinstance(missed, dict) else None
        text = user_text(turn) or (ADDED_FUNCTIONS_MESSAGE if added else "")
        if not text:
            raise TrainerError("BFCL_RECORD_INVALID", f"turn {t} has no user message")
        turns.append({"user": text, **({"addTools": [str(n) for n in added]} if added else {})})
    server_args = ["--id", rid, *(["--records", records_arg] if records_arg else []),
                   *(["--backend", backend_arg] if backend_arg else [])]
    check: dict[str, Any] = {"id": "bfcl", "kind": "bfcl", "record": rid, "groundTruth": truth,
                             **({"records": records_arg} if records_arg else {}),
                             **({"backend": backend_arg} if backend_arg else {})}
    return {
        "version": 1,
        "id": rid,
        "description": turns[0]["user"][:200],
        "domain": "bfcl",
        "split": "test",
        "tags": ["bfcl", category_of(rid)],
        "turns": turns,
        "servers": {"bfcl": {"builtin": "bfcl", "args": server_args,
                             **({"cwd": "."} if records_arg or backend_arg else {})}},
        "checks": [check],
        "limits": {"maxTurns": STEPS_PER_TURN * len(turns), "maxCallsPerTurn": 16},
        "reference": {"turns": reference},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trainer.bfcl.importer", description=__doc__.split("\n")[0])
    parser.add_argument("source", help=f"a records file, or a category of the installed bfcl-eval: {', '.join(CATEGORIES)}")
    parser.add_argument("--out", required=True, help="the folder to write tasks/ into")
    parser.add_argument("--answers", help="the ground truth (default: possible_answer/<same name> beside the records)")
    parser.add_argument("--limit", type=int, help="import the first N records only")
    parser.add_argument("--backend", help="a bfcl_eval package folder to use instead of the installed one (its "
                        "records, ground truth and backends); the tasks name it for their server and check")
    args = parser.parse_args(argv)
    try:
        backend = use_backend(args.backend) if args.backend else None
        packaged = args.source in CATEGORIES
        records = records_file(args.source) if packaged else os.path.abspath(args.source)
        answers_path = os.path.abspath(args.answers) if args.answers else answers_file(records)
        rows = read_json_lines(records, "records")
        answers = {a["id"]: a.get("ground_truth") for a in read_json_lines(answers_path, "answers")}
    except TrainerError as e:
        print(f"import bfcl: {e.code}: {e.message}", file=sys.stderr)
        return 2
    out = os.path.abspath(args.out)
    out_tasks = os.path.join(out, "tasks")
    try:
        make_folder(out, "tasks")
    except TrainerError as e:
        print(f"import bfcl: {e.code}: {e.message}", file=sys.stderr)
        return 2
    written, skipped = 0, 0
    # File names that differ only in case are one file on some systems: the second would replace the first.
    taken: set[str] = set()
    for record in rows[: args.limit] if args.limit else rows:
        rid = record["id"]
        try:
            safe_id(rid, "record")
            if rid.casefold() in taken:
                raise TrainerError("BFCL_RECORD_INVALID", "an earlier record has this id (file names may ignore case)")
            if not rid.startswith("multi_turn_"):
                raise TrainerError("BFCL_CATEGORY", f"{category_of(rid)} is not a multi-turn category")
            truth = answers.get(rid)
            if not isinstance(truth, list) or not all(isinstance(t, list) for t in truth):
                raise TrainerError("BFCL_RECORD_INVALID", f"no ground truth for it in {answers_path}")
            records_arg = None if packaged else os.path.relpath(records, out_tasks)
            task = task_for(record, truth, records_arg, backend and os.path.relpath(backend, out_tasks))
            write_file(out, ("tasks", f"{rid}.task.json"), json.dumps(task, indent=1, ensure_ascii=False) + "\n")
        except TrainerError as e:
            skipped += 1
            print(f"record {shown_name(rid)}: skipped: {e.code}: {e.message}", file=sys.stderr)
            continue
        taken.add(rid.casefold())
        written += 1
    print(json.dumps({"tasks": written, "skipped": skipped, "out": out_tasks, "records": records}))
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
