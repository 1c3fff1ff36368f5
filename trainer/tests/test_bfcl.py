"""BFCL-v4 multi-turn graded as BFCL grades it: the studio's grader (trainer.bfcl.grade, its own
code) gives the verdict of BFCL's own ``multi_turn_checker``, run from the installed bfcl-eval, on
every record of the four multi-turn categories: the ground truth played as the model (it must pass),
and deliberately broken runs (a call dropped, an argument changed, an extra call, a turn left without
calls, a turn missing), which must mostly fail, for the same reason on both sides."""
import contextlib
import copy
import io
import itertools
import json
import os
import tempfile
import unittest
from typing import Any

from ..bfcl import backend
from ..bfcl.backend import World, answers_file, category_of, read_json_lines, records_file
from ..bfcl.calls import bind, format_call, parse_call
from ..bfcl.grade import grade, ground_truth_calls, irrelevance
from ..bfcl.importer import main as import_main
from ..errors import TrainerError

_names = itertools.count()


def bfcl_verdict(record: dict[str, Any], truth: list[list[str]], model: list[list[list[tuple[str, dict]]]]) -> bool:
    """BFCL's own verdict: its runner's turn-count check, then multi_turn_checker on the decoded calls."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
    if len(model) != len(truth):
        return False  # the runner's force_terminated
    name = f"studio_agreement_{next(_names)}"  # the checker caches instances under the model's name
    decoded = [[[format_call(n, a) for n, a in act] for act in turn if act] for turn in model]
    try:
        return bool(multi_turn_checker(decoded, truth, record, category_of(record["id"]), name)["valid"])
    finally:
        for key in [k for k in vars(multi_turn_utils) if k.startswith(name)]:
            del vars(multi_turn_utils)[key]


def variants(record: dict[str, Any], truth: list[list[str]]) -> dict[str, list]:
    """The ground truth as the model's calls (one act per turn), and broken copies of it."""
    world = World(record)
    reference = [[ground_truth_calls(world, turn)] for turn in truth]
    turns = [i for i, t in enumerate(truth) if t]
    out: dict[str, list] = {"reference": reference}
    split = copy.deepcopy(reference)
    for acts in split:  # every call its own act
        acts[:] = [[c] for c in acts[0]] or [[]]
    out["one call per act"] = split
    drop = copy.deepcopy(reference)
    drop[turns[-1]][0].pop()
    out["a call dropped"] = drop
    changed = copy.deepcopy(reference)
    for t in turns:
        hit = next(((i, k) for i, (_, a) in enumerate(changed[t][0]) for k, v in a.items() if isinstance(v, str)), None)
        if hit:
            i, k = hit
            changed[t][0][i][1][k] += "x"
            out["an argument changed"] = changed
            break
    extra = copy.deepcopy(reference)
    extra[turns[0]][0].append(copy.deepcopy(extra[turns[0]][0][-1]))
    out["an extra call"] = extra
    empty = copy.deepcopy(reference)
    empty[turns[0]] = []
    out["a turn without calls"] = empty
    out["a turn missing"] = copy.deepcopy(reference)[:-1]
    return out


class AgreementTest(unittest.TestCase):
    def test_verdicts_equal_bfcl_multi_turn_checker_on_every_record(self):
        failed = {}
        for category in backend.CATEGORIES:
            path = records_file(category)
            records = read_json_lines(path, "records")
            answers = {a["id"]: a["ground_truth"] for a in read_json_lines(answers_file(path), "answers")}
            self.assertEqual(len(records), 200, category)
            for record in records:
                truth = answers[record["id"]]
                for name, model in variants(record, truth).items():
                    ours = grade(record, truth, model)
                    theirs = bfcl_verdict(record, truth, model)
                    self.assertEqual(ours["valid"], theirs, f"{record['id']}, {name}: ours {ours}")
                    if name in ("reference", "one call per act"):
                        self.assertTrue(ours["valid"], f"{record['id']} {name}: {ours}")
                    elif not ours["valid"]:
                        failed[name] = failed.get(name, 0) + 1
        # Breaking a run must be seen (an extra call often changes nothing a check reads).
        self.assertEqual(failed["a call dropped"], 800)
        self.assertEqual(failed["a turn missing"], 800)
        self.assertEqual(failed["a turn without calls"], 800)
        self.assertGreater(failed["an argument changed"], 700)
        self.assertGreater(failed["an extra call"], 100)

    def test_each_failure_says_why_and_where(self):
        path = records_file("base")
        record = read_json_lines(path, "records")[0]
        truth = next(a["ground_truth"] for a in read_json_lines(answers_file(path), "answers") if a["id"] == record["id"])
        v = variants(record, truth)
        self.assertEqual(grade(record, truth, v["a turn without calls"])["error_type"],
                         "multi_turn:empty_turn_model_response")
        dropped = grade(record, truth, v["a call dropped"])
        # The last call of the last turn is a diff: its result is what is missing.
        self.assertEqual((dropped["turn"], dropped["error_type"]), (3, "multi_turn:execution_response_mismatch"))
        self.assertEqual(len(dropped["details"]["missing"]), 1)
        changed = grade(record, truth, v["an argument changed"])
        self.assertEqual((changed["turn"], changed["error_type"]), (0, "multi_turn:instance_state_mismatch"))
        self.assertIn("GorillaFileSystem", changed["message"])
        self.assertEqual(grade(record, truth, v["a turn missing"])["error_type"], "multi_turn:force_terminated")

    def test_miss_func_turns_without_ground_truth_are_irrelevance_turns(self):
        path = records_file("miss_func")
        record = read_json_lines(path, "records")[0]
        truth = next(a["ground_truth"] for a in read_json_lines(answers_file(path), "answers") if a["id"] == record["id"])
        empty = [t for t, calls in enumerate(truth) if not calls]
        self.assertTrue(empty, "a miss_func record has a turn the model cannot do yet")
        model = variants(record, truth)["reference"]
        self.assertEqual(irrelevance(truth, model), [])
        model[empty[0]] = [[("ls", {})]]
        self.assertEqual(irrelevance(truth, model), [empty[0]])


class GraderProcessTest(unittest.TestCase):
    def test_the_grader_reads_json_and_says_the_verdict_and_irrelevant_turns(self):
        import json
        import subprocess
        import sys

        from .helpers import REPO, subprocess_env
        path = records_file("miss_func")
        record = read_json_lines(path, "records")[0]
        truth = next(a["ground_truth"] for a in read_json_lines(answers_file(path), "answers") if a["id"] == record["id"])
        model = [[[list(c) for c in act] for act in turn] for turn in variants(record, truth)["reference"]]
        empty = next(t for t, calls in enumerate(truth) if not calls)
        model[empty] = [[["ls", {}]]]

        def run(given: dict) -> dict:
            proc = subprocess.run([sys.executable, "-m", "trainer.bfcl.grade"], input=json.dumps(given), cwd=REPO,
                                  env=subprocess_env(), capture_output=True, text=True, timeout=120, check=True)
            return json.loads(proc.stdout.strip().splitlines()[-1])
        verdict = run({"record": record["id"], "ground_truth": truth, "model": model})
        self.assertEqual((verdict["valid"], verdict["irrelevance"]), (True, [empty]))
        self.assertTrue(run({"record": "multi_turn_base_999999", "ground_truth": [], "model": []})["error"]
                        .startswith("BFCL_RECORD_MISSING"))
        self.assertTrue(run({"ground_truth": []})["error"].startswith("BFCL_GRADE_INPUT"))


class CallsTest(unittest.TestCase):
    def test_call_strings_are_parsed_never_evaluated(self):
        self.assertEqual(parse_call("mv(source='a.txt', destination='b')"), ("mv", [], {"source": "a.txt", "destination": "b"}))
        self.assertEqual(parse_call("sort('final_report.pdf')"), ("sort", ["final_report.pdf"], {}))
        self.assertEqual(parse_call("f(x=-1.5, y=[1, (2, 3)], z={'k': None}, w=True)")[2],
                         {"x": -1.5, "y": [1, (2, 3)], "z": {"k": None}, "w": True})
        for bad in ["mv(source='a'", "os.system('ls')", "f(x=__import__('os'))", "f(x=g(1))", "f(**kw)", "[1, 2]", "x"]:
            with self.assertRaises(TrainerError, msg=bad) as e:
                parse_call(bad)
            self.assertEqual(e.exception.code, "BFCL_CALL_INVALID")

    def test_positional_arguments_are_named_by_the_signature(self):
        def method(file_name: str, lines: int = 10) -> None:
            pass
        self.assertEqual(bind(method, "tail", ["log.txt", 20], {}), {"file_name": "log.txt", "lines": 20})
        with self.assertRaises(TrainerError):
            bind(method, "tail", ["a", 1, 2], {})
        with self.assertRaises(TrainerError):
            bind(method, "tail", ["a"], {"file_name": "b"})


class BackendTest(unittest.TestCase):
    def test_results_render_as_bfcl_and_unknown_names_are_errors(self):
        path = records_file("base")
        world = World(read_json_lines(path, "records")[0])
        self.assertEqual(world.call("pwd", {}), '{"current_working_directory": "/workspace"}')
        self.assertEqual(world.call("rm_rf", {}), "Error during execution: name 'rm_rf' is not defined")
        self.assertTrue(world.call("cd", {"nope": 1}).startswith("Error during execution: "))

    def test_bad_records_are_clear_errors(self):
        with self.assertRaises(TrainerError) as e:
            World({"id": "multi_turn_base_0", "involved_classes": ["NoSuchAPI"], "initial_config": {}})
        self.assertEqual(e.exception.code, "BFCL_CLASS_UNKNOWN")
        self.assertIn("GorillaFileSystem", e.exception.message)
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "records.json")
            with open(bad, "w", encoding="utf-8") as f:
                f.write('{"id": "multi_turn_base_0"}\nnot json\n')
            with self.assertRaises(TrainerError) as e:
                read_json_lines(bad, "records")
            self.assertEqual((e.exception.code, e.exception.message.split(":")[1]), ("BFCL_RECORD_INVALID", "2"))
        with self.assertRaises(TrainerError) as e:
            records_file("web_search")
        self.assertEqual(e.exception.code, "BFCL_CATEGORY")


class ImporterTest(unittest.TestCase):
    def test_hostile_record_ids_are_one_coded_line_each_and_the_good_records_are_imported(self):
        base = read_json_lines(records_file("base"), "records")[:2]
        truth = {a["id"]: a for a in read_json_lines(answers_file(records_file("base")), "answers")}
        hostile = ["multi_turn_base_1\n../x", "multi_turn_x/../../escaped", "/tmp/multi_turn_abs", ".multi_turn_dot",
                   "multi_turn_" + "m" * 200, "multi_turn_nul\0", "multi_turn_BASE_0"]
        ids = [base[0]["id"], *hostile, base[1]["id"]]
        with tempfile.TemporaryDirectory() as d:
            records, answers = os.path.join(d, "records.json"), os.path.join(d, "answers.json")
            with open(records, "w", encoding="utf-8") as r, open(answers, "w", encoding="utf-8") as a:
                for i, rid in enumerate(ids):
                    source = base[0 if i < len(ids) - 1 else 1]
                    r.write(json.dumps({**source, "id": rid}) + "\n")
                    a.write(json.dumps({**truth[source["id"]], "id": rid}) + "\n")
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = import_main([records, "--answers", answers, "--out", os.path.join(d, "out")])
            self.assertEqual(code, 0)
            self.assertEqual(json.loads(out.getvalue().splitlines()[-1])["tasks"], 2)
            lines = err.getvalue().splitlines()
            self.assertEqual(len(lines), len(hostile), lines)
            for line, rid in zip(lines, hostile, strict=True):
                shown = rid if rid == "multi_turn_BASE_0" else json.dumps(rid)[:20]
                self.assertTrue(line.startswith(f"record {shown}"), line)
            self.assertEqual([line.split(": ")[2] for line in lines], ["INVALID_ID"] * 6 + ["BFCL_RECORD_INVALID"])
            self.assertIn("an earlier record has this id", lines[-1])
            written = sorted(os.path.relpath(os.path.join(at, n), d) for at, dirs, files in os.walk(d) for n in dirs + files)
            self.assertEqual(written, ["answers.json", "out", os.path.join("out", "tasks"),
                                       os.path.join("out", "tasks", "multi_turn_base_0.task.json"),
                                       os.path.join("out", "tasks", "multi_turn_base_1.task.json"), "records.json"])


if __name__ == "__main__":
    unittest.main()
