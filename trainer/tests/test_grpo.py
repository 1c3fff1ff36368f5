"""The GRPO loop: export the policy, run the rollout command, train on its rows, repeat; resume from
an iteration checkpoint; grounding on and off; a failing rollout command."""
import json
import os
import shutil
import sys
import unittest

import torch

from .fixtures import rollout_rows, write_rows
from .helpers import REPO, TinyModel, event_errors, load_weights, of, run_cli

FIXTURE_SCRIPT = os.path.join(REPO, "trainer", "tests", "rollout_fixture.py")


class GrpoTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tiny = TinyModel()
        for i in range(3):
            write_rows(cls.tiny.path("rollouts", f"iter-{i}.jsonl"), rollout_rows(i))

    @classmethod
    def tearDownClass(cls):
        cls.tiny.cleanup()

    def config(self, name, rollouts, **grpo):
        cfg = {"out_dir": name, "threads": 1, "model": {"path": "init"}, "optim": {"lr": 0.003},
               "train": {"micro_batch_size": 8, "checkpoint_every": 1, "keep_checkpoints": 5, "export_at_end": False},
               "grpo": dict({"iterations": 3, "mini_batch_size": 12, "ppo_epochs": 2}, **grpo), "rollouts": rollouts}
        return self.tiny.config(name, cfg)

    def fixture_rows(self):
        return {"rows": os.path.join(self.tiny.dir, "rollouts", "iter-{iteration}.jsonl")}

    def test_each_iteration_exports_the_policy_runs_the_command_and_trains(self):
        command = [sys.executable, FIXTURE_SCRIPT, "{iteration}", "{out}", "{model_dir}", "rollouts"]
        cfg = self.config("loop", {"command": command}, iterations=2, kl_coef=0.01)
        code, events, err = run_cli(["grpo", "--config", cfg])
        self.assertEqual(code, 0, err)
        self.assertEqual(event_errors(events), [])
        with open(self.tiny.path("rollouts", "policies.txt"), encoding="utf-8") as f:
            policies = [line.split() for line in f]
        self.assertEqual([p[0] for p in policies], ["0", "1"])
        self.assertNotEqual(policies[0][1], policies[1][1], "iteration 1 must sample from the updated policy")
        self.assertEqual([e["iteration"] for e in of(events, "export")], [0, 1])
        rollouts = of(events, "rollouts")
        self.assertEqual([(r["rollout_rows"], r["actual_rows"], r["groups"]) for r in rollouts], [(24, 1, 2)] * 2)
        steps = of(events, "step")
        self.assertEqual(len(steps), 2 * 2 * 2)  # iterations x epochs x ceil(24 / 12)
        self.assertEqual(steps[0]["roles"]["act"]["kl"], 0.0)  # the reference is the initial policy
        self.assertAlmostEqual(steps[0]["roles"]["act"]["ppo_kl"], 0.0, places=5)  # old log-probs = current policy
        self.assertIsNone(steps[0]["grounding"])  # off by default
        self.assertGreater(steps[-1]["roles"]["act"]["kl"], 0.0)
        # Only the newest exported policy is kept unless rollouts.keep_models.
        self.assertFalse(os.path.exists(self.tiny.path("loop", "rollouts", "iter-0000", "model")))
        self.assertTrue(os.path.exists(self.tiny.path("loop", "rollouts", "iter-0001", "model", "onnx", "model.onnx")))

    def test_grounding_trains_on_actual_rows_only_when_enabled(self):
        cfg = self.config("grounded", self.fixture_rows(), iterations=1, ppo_epochs=1,
                          grounding={"coef": 1.0, "batch_size": 2})
        code, events, err = run_cli(["grpo", "--config", cfg])
        self.assertEqual(code, 0, err)
        g = of(events, "step")[0]["grounding"]
        # The pool holds the iteration's one actual rehearse row (weight 2): both grounding rows are it.
        self.assertEqual(of(events, "iteration")[0]["grounding_pool"], 1)
        self.assertEqual(g["rows"], 2)
        self.assertAlmostEqual(g["weighted_nll"], 2.0 * g["nll"], places=5)

    def test_resumes_from_an_iteration_checkpoint_bit_exactly(self):
        code, _, err = run_cli(["grpo", "--config", self.config("whole", self.fixture_rows())])
        self.assertEqual(code, 0, err)
        # A run that stopped after iteration 1: only its first checkpoint survives.
        os.makedirs(self.tiny.path("partial", "checkpoints"))
        first = sorted(d for d in os.listdir(self.tiny.path("whole", "checkpoints")) if d.startswith("step-"))[0]
        shutil.copytree(self.tiny.path("whole", "checkpoints", first), self.tiny.path("partial", "checkpoints", first))
        code, events, err = run_cli(["grpo", "--config", self.config("partial", self.fixture_rows())])
        self.assertEqual(code, 0, err)
        self.assertEqual([r["iteration"] for r in of(events, "rollouts")], [1, 2])
        a, b = load_weights(self.tiny.path("whole", "final")), load_weights(self.tiny.path("partial", "final"))
        for name in a:
            self.assertTrue(torch.equal(a[name], b[name]), name)

    def test_an_iteration_without_signal_is_a_warning_and_others_report_theirs(self):
        flat = []
        for row in rollout_rows(0):
            if row["source"] == "rollout":
                row = dict(row, reward=1.0)  # every episode of every group earned the same
            flat.append(row)
        write_rows(self.tiny.path("rollouts", "flat-0.jsonl"), flat)
        rows = {"rows": os.path.join(self.tiny.dir, "rollouts", "flat-{iteration}.jsonl")}
        code, events, err = run_cli(["grpo", "--config", self.config("flat", rows, iterations=1, ppo_epochs=1)])
        self.assertEqual(code, 0, err)
        signal = of(events, "rollouts")[0]["advantages"]
        self.assertEqual((signal["nonzero_rows"], signal["groups_with_signal"]), (0, 0))
        self.assertEqual(signal["rows"], 24)
        self.assertEqual([w["code"] for w in of(events, "warning")], ["GRPO_NO_SIGNAL"])
        code, events, err = run_cli(["grpo", "--config", self.config("live", self.fixture_rows(), iterations=1,
                                                                     ppo_epochs=1)])
        self.assertEqual(code, 0, err)
        signal = of(events, "rollouts")[0]["advantages"]
        self.assertGreater(signal["nonzero_rows"], 0)
        self.assertEqual(of(events, "warning"), [])

    def test_a_group_of_equal_rewards_leaves_the_update_and_its_denominator(self):
        rows = [dict(r, reward=1.0) if r["source"] == "rollout" and r["group"] == "task1/iter0" else r
                for r in rollout_rows(0)]
        write_rows(self.tiny.path("rollouts", "oneflat-0.jsonl"), rows)
        write_rows(self.tiny.path("rollouts", "noflat-0.jsonl"), [r for r in rows if r.get("group") != "task1/iter0"])
        flat_rows = sum(1 for r in rows if r.get("group") == "task1/iter0")

        def run(name, file, **grpo):
            source = {"rows": os.path.join(self.tiny.dir, "rollouts", file + "-{iteration}.jsonl")}
            code, events, err = run_cli(["grpo", "--config", self.config(name, source, iterations=1, ppo_epochs=1,
                                                                         mini_batch_size=None, **grpo)])
            self.assertEqual(code, 0, err)
            self.assertEqual(event_errors(events), [])
            return events, load_weights(self.tiny.path(name, "final"))

        dapo, with_flat = run("dapo", "oneflat", drop_zero_variance_groups=True)
        self.assertEqual(of(dapo, "rollouts")[0]["zero_variance_rows"], flat_rows)
        trained = of(dapo, "iteration")[0]["roles"]
        self.assertEqual(sum(r["rows"] for r in trained.values()), 24 - flat_rows)
        _, without_flat = run("noflat", "noflat", drop_zero_variance_groups=False)
        for name in with_flat:  # the flat group changes nothing: not even the token-mean's denominator
            self.assertTrue(torch.equal(with_flat[name], without_flat[name]), name)
        verl, diluted = run("verl", "oneflat", drop_zero_variance_groups=False)
        self.assertEqual(of(verl, "rollouts")[0]["zero_variance_rows"], 0)
        self.assertTrue(any(not torch.equal(diluted[n], without_flat[n]) for n in diluted),
                        "verl's token-mean counts the flat group's tokens")

    def test_signal_among_finished_episodes_leaves_out_episodes_that_failed(self):
        # Group task0: two finished episodes at 1.0 and two failed at 0.0 (all the spread is failure);
        # group task1: finished episodes at 1.0 and 0.5.
        rows = []
        for row in rollout_rows(0):
            if row["source"] == "rollout":
                ep = int(row["episode"].rsplit("ep", 1)[1])
                if row["group"] == "task0/iter0":
                    row = dict(row, reward=1.0 if ep < 2 else 0.0, finished=ep < 2)
                else:
                    row = dict(row, reward=1.0 if ep % 2 else 0.5, finished=True)
            rows.append(row)
        write_rows(self.tiny.path("rollouts", "failing-0.jsonl"), rows)
        source = {"rows": os.path.join(self.tiny.dir, "rollouts", "failing-{iteration}.jsonl")}
        code, events, err = run_cli(["grpo", "--config", self.config("failing", source, iterations=1, ppo_epochs=1)])
        self.assertEqual(code, 0, err)
        self.assertEqual(event_errors(events), [])
        signal = of(events, "rollouts")[0]["advantages"]
        roles = {r["role"] for r in rows if r["source"] == "rollout"}
        self.assertEqual((signal["groups_with_signal"], signal["groups"]), (2 * len(roles), 2 * len(roles)))
        self.assertEqual(signal["groups_with_finished_signal"], len(roles))  # task1's sets only
        self.assertEqual(signal["finished_group_share"], 0.5)
        task1 = sum(1 for r in rows if r.get("group") == "task1/iter0")
        finished = sum(1 for r in rows if r.get("finished"))
        self.assertEqual((signal["finished_nonzero_rows"], signal["finished_rows"]), (task1, finished))
        self.assertAlmostEqual(signal["finished_row_share"], round(task1 / finished, 6))

    def test_validation_scores_each_point_and_the_final_policy_is_the_best(self):
        # Scores by iteration: the best is the policy after iteration 1 (0 is the starting policy).
        script = ("import json, os, sys; it = int(sys.argv[1]); "
                  "assert os.path.exists(os.path.join(sys.argv[3], 'onnx', 'model.onnx')); "
                  "json.dump({'success': [0.2, 0.6, 0.6, 0.6][it], 'reward': [1, 0.5, 0.7, 0.4][it], 'note': 'x'}, "
                  "open(sys.argv[2], 'w'))")
        cfg = self.config("validated", self.fixture_rows())
        cfg_path = cfg
        with open(cfg_path, encoding="utf-8") as f:
            data = json.load(f)
        # Success ties from iteration 1 on; the tie metric (reward) makes 2 the best, and 3 does not beat it.
        data["validation"] = {"command": [sys.executable, "-c", script, "{iteration}", "{out}", "{model_dir}"],
                              "tie_metric": "reward"}
        with open(cfg_path, "w", encoding="utf-8") as f:
            json.dump(data, f)
        code, events, err = run_cli(["grpo", "--config", cfg_path])
        self.assertEqual(code, 0, err)
        validations = of(events, "validation")
        self.assertEqual([(v["iteration"], v["scores"]["success"], v["best_iteration"]) for v in validations],
                         [(0, 0.2, 0), (1, 0.6, 1), (2, 0.6, 2), (3, 0.6, 2)])
        self.assertEqual(validations[0]["scores"], {"success": 0.2, "reward": 1.0})  # numbers only
        self.assertEqual(validations[1]["best"], 0.6)
        self.assertEqual([(b["iteration"], b["value"]) for b in of(events, "best")], [(2, 0.6)])
        # The final policy is the one after iteration 2: the weights of that iteration's checkpoint.
        after_two = load_weights([c["path"] for c in of(events, "checkpoint") if c["iteration"] == 2][0])
        final, last = load_weights(self.tiny.path("validated", "final")), load_weights(of(events, "checkpoint")[-1]["path"])
        for name in final:
            self.assertTrue(torch.equal(final[name], after_two[name]), name)
        self.assertFalse(all(torch.equal(final[n], last[n]) for n in final), "the last iteration changed the weights")
        self.assertEqual(of(events, "done")[0]["best"], {"iteration": 2, "value": 0.6, "tie": 0.7})

    def test_a_resumed_run_keeps_the_best_point_its_checkpoint_recorded(self):
        script = ("import json, sys; it = int(sys.argv[1]); "
                  "json.dump({'success': [0.2, 0.6, 0.4, 0.3][it]}, open(sys.argv[2], 'w'))")
        validation = {"command": [sys.executable, "-c", script, "{iteration}", "{out}"]}

        def config(name):
            path = self.config(name, self.fixture_rows())
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            data["validation"] = validation
            with open(path, "w", encoding="utf-8") as f:
                json.dump(data, f)
            return path
        code, events, err = run_cli(["grpo", "--config", config("best-whole")])
        self.assertEqual(code, 0, err)
        self.assertEqual(sorted(os.listdir(self.tiny.path("best-whole", "best"))), ["best.json", "iter-0001"])
        # A run that stopped after iteration 2: its checkpoint and the best point it recorded survive.
        after_two = [c["path"] for c in of(events, "checkpoint") if c["iteration"] == 2][0]
        os.makedirs(self.tiny.path("best-partial", "checkpoints"))
        shutil.copytree(after_two, self.tiny.path("best-partial", "checkpoints", os.path.basename(after_two)))
        shutil.copytree(self.tiny.path("best-whole", "best"), self.tiny.path("best-partial", "best"))
        code, events, err = run_cli(["grpo", "--config", config("best-partial")])
        self.assertEqual(code, 0, err)
        self.assertEqual([v["iteration"] for v in of(events, "validation")], [3])
        self.assertEqual([b["iteration"] for b in of(events, "best")], [1])
        a, b = load_weights(self.tiny.path("best-whole", "final")), load_weights(self.tiny.path("best-partial", "final"))
        for name in a:
            self.assertTrue(torch.equal(a[name], b[name]), name)

    def test_a_validation_command_without_scores_is_one_clear_error(self):
        cfg = self.config("unscored", self.fixture_rows(), iterations=1)
        with open(cfg, encoding="utf-8") as f:
            data = json.load(f)
        writes_no_success = "import json, sys; json.dump({'reward': 1}, open(sys.argv[1], 'w'))"
        data["validation"] = {"command": [sys.executable, "-c", writes_no_success, "{out}"]}
        with open(cfg, "w", encoding="utf-8") as f:
            json.dump(data, f)
        code, events, _ = run_cli(["grpo", "--config", cfg])
        self.assertEqual(code, 1)
        error = of(events, "error")[0]
        self.assertEqual(error["code"], "VALIDATION_COMMAND_FAILED")
        self.assertIn("has no number 'success'", error["message"])

    def test_failing_rollout_command_is_one_clear_error(self):
        cfg = self.config("failing", {"command": [sys.executable, "-c", "import sys; sys.exit(7)"]}, iterations=1)
        code, events, _ = run_cli(["grpo", "--config", cfg])
        self.assertEqual(code, 1)
        errors = of(events, "error")
        self.assertEqual([e["code"] for e in errors], ["ROLLOUT_COMMAND_FAILED"])
        self.assertIn("status 7", errors[0]["message"])
        cfg = self.config("silent", {"command": [sys.executable, "-c", "pass"]}, iterations=1)
        code, events, _ = run_cli(["grpo", "--config", cfg])
        self.assertEqual((code, of(events, "error")[0]["code"]), (1, "ROLLOUT_COMMAND_FAILED"))
        self.assertIn("wrote no rows", of(events, "error")[0]["message"])


if __name__ == "__main__":
    unittest.main()
