"""The GRPO loop: export the policy, run the rollout command, train on its rows, repeat; resume from
an iteration checkpoint; grounding on and off; a failing rollout command."""
import json
import os
import shutil
import sys
import unittest
from types import SimpleNamespace

import torch

from ..config_types import GrpoSection
from ..data.batches import Batch
from ..data.encode import Example
from ..train.grpo import GrpoRun
from ..train.grpo_objective import policy_loss, role_tokens, step_report
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
        code, whole, err = run_cli(["grpo", "--config", self.config("whole", self.fixture_rows())])
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
        # The act updates of the iteration before the resume come from its checkpoint.
        counts = [(d["act_updates"], d["act_tokens"]) for d in of(whole, "done") + of(events, "done")]
        self.assertEqual(counts[0], counts[1])
        self.assertEqual(counts[0][0], len(of(whole, "step")))

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


def examples_of(rows):
    """Rollout rows as examples, with as many target tokens as their target has characters / 8."""
    return [Example(i, r, [1, 2], [3] * max(1, len(r["target"]) // 8)) for i, r in enumerate(rows)]


def act_only(rows):
    """The rows a real rollout of the same episodes writes: act rows only."""
    return [r for r in rows if r["role"] == "act"]


class FairComparisonTest(unittest.TestCase):
    """What lets imagined rollouts (act and rehearse rows) and real ones (act rows only) be compared
    at equal act updates: mini-batches of episodes, and each role's own token-mean."""

    def rows(self):
        return [r for r in rollout_rows(0, tasks=2, episodes=5) if r["source"] == "rollout"]

    def plan(self, examples, unit, size=3, epochs=2):
        run = SimpleNamespace(grpo=GrpoSection(mini_batch_size=size, mini_batch_unit=unit, ppo_epochs=epochs),
                              cfg=SimpleNamespace(seed=4))
        return GrpoRun.plan(run, examples, 1)

    def test_episode_mini_batches_keep_episodes_whole_and_give_both_row_sets_the_same_steps(self):
        both, acts = examples_of(self.rows()), examples_of(act_only(self.rows()))
        plan, act_plan = self.plan(both, "episode"), self.plan(acts, "episode")
        self.assertEqual(len(plan), 2 * 4)  # 10 episodes in mini-batches of 3, two epochs
        self.assertEqual(len(act_plan), len(plan))
        for (epoch, mb), (act_epoch, act_mb) in zip(plan, act_plan, strict=True):
            episodes = {e.episode for e in mb}
            self.assertIn(len(episodes), (3, 1))  # 3, 3, 3 and the last one
            # Every row of each episode in the mini-batch is in it: nothing of an episode is left out.
            self.assertEqual(sorted(e.index for e in mb), sorted(e.index for e in both if e.episode in episodes))
            # The same act rows train in the same step whether or not rehearse rows come with them.
            self.assertEqual(epoch, act_epoch)
            self.assertEqual([e.id for e in mb if e.role == "act"], [e.id for e in act_mb])
        for epoch in (0, 1):  # each epoch trains every row once
            self.assertEqual(sorted(e.index for ep, mb in plan if ep == epoch for e in mb), list(range(len(both))))
        order = [[e.index for e in mb] for _, mb in plan]
        self.assertNotEqual(order[:4], order[4:], "each epoch shuffles the episodes again")
        self.assertEqual([[e.index for e in mb] for _, mb in self.plan(both, "episode")], order,
                         "a pure function of seed, iteration and epoch")
        # By rows, the rehearse rows make more steps, and episodes are cut apart.
        self.assertGreater(len(self.plan(both, "row", size=9)), len(self.plan(acts, "row", size=9)))

    def test_a_row_without_an_episode_is_an_episode_of_its_own(self):
        rows = [{k: v for k, v in r.items() if k != "episode"} for r in self.rows()[:6]]
        plan = self.plan(examples_of(rows), "episode", size=2, epochs=1)
        self.assertEqual([len(mb) for _, mb in plan], [2, 2, 2])

    def loss_and_act_gradient(self, examples, agg, micro=None, world=1):
        """The loss of one mini-batch on fixed log-probs (summed over its micro-batches; with ``world``
        ranks, each a share of them, averaged as DDP averages gradients) and its gradient with respect
        to each act row's log-probs."""
        grpo = GrpoSection(loss_agg=agg)
        for e in examples:  # by the row, whatever rows come with it
            e.advantage = (e.reward - 0.4) * (1 + sum(map(ord, e.id)) % 3)
        old = {e.index: torch.linspace(-2.0, -1.0, e.loss_tokens) for e in examples}
        new = {e.index: (old[e.index] + 0.05 * torch.arange(e.loss_tokens)).requires_grad_(True) for e in examples}
        tokens = role_tokens(examples)
        fn = policy_loss(grpo, tokens, world, old, None)
        total, sums = torch.zeros(()), {}
        for part in micro or [examples]:
            b = Batch(part, 0, torch.device("cpu"))
            loss, values = fn(b, torch.cat([new[e.index] for e in part]))
            total = total + loss
            for k, v in values.items():
                sums[k] = sums.get(k, 0.0) + v
        total = total / world
        total.backward()
        grads = {e.id: new[e.index].grad.clone() for e in examples if e.role == "act"}
        sums.update({f"{r}.kl": 0.0 for r in ("act", "rehearse")})
        reported = step_report(sums, examples, grpo, tokens, 0)[2]
        self.assertAlmostEqual(reported, float(total.detach()), places=5)  # the step event's loss is the objective
        return float(total.detach()), grads

    def test_role_token_mean_gives_an_act_token_the_same_gradient_with_or_without_rehearse_rows(self):
        both, acts = examples_of(self.rows()), examples_of(act_only(self.rows()))
        self.assertGreater(sum(e.loss_tokens for e in both if e.role == "rehearse"), 0)
        _, with_rehearse = self.loss_and_act_gradient(both, "role-token-mean")
        _, alone = self.loss_and_act_gradient(acts, "role-token-mean")
        for row_id, grad in alone.items():
            self.assertTrue(torch.allclose(grad, with_rehearse[row_id], atol=1e-7), row_id)
        # verl's token-mean divides by every token: rehearse rows shrink each act token's weight.
        _, diluted = self.loss_and_act_gradient(both, "token-mean")
        _, undiluted = self.loss_and_act_gradient(acts, "token-mean")
        share = sum(e.loss_tokens for e in acts) / sum(e.loss_tokens for e in both)
        row_id = next(iter(alone))
        self.assertTrue(torch.allclose(diluted[row_id], undiluted[row_id] * share, atol=1e-7))
        # With act rows only, the two aggregations are the same loss.
        self.assertAlmostEqual(self.loss_and_act_gradient(acts, "token-mean")[0],
                               self.loss_and_act_gradient(acts, "role-token-mean")[0], places=6)

    def test_role_token_mean_does_not_depend_on_micro_batches(self):
        both = examples_of(self.rows())
        whole, grads = self.loss_and_act_gradient(both, "role-token-mean")
        # Micro-batches that hold one role only, or both: the denominators are the mini-batch's.
        split = [[e for e in both if e.role == "act"][:5], [e for e in both if e.role == "rehearse"],
                 [e for e in both if e.role == "act"][5:]]
        again = examples_of(self.rows())
        by_id = {e.id: e for e in again}
        micro_total, micro_grads = self.loss_and_act_gradient(
            again, "role-token-mean", micro=[[by_id[e.id] for e in part] for part in split])
        self.assertAlmostEqual(whole, micro_total, places=6)
        for row_id, grad in grads.items():
            self.assertTrue(torch.allclose(grad, micro_grads[row_id], atol=1e-7), row_id)
        # Two ranks, each with every other row of the mini-batch (rank_share), as DDP runs them.
        ranks = examples_of(self.rows())
        ddp_total, ddp_grads = self.loss_and_act_gradient(ranks, "role-token-mean", micro=[ranks[0::2], ranks[1::2]],
                                                          world=2)
        self.assertAlmostEqual(whole, ddp_total, places=6)
        for row_id, grad in grads.items():
            self.assertTrue(torch.allclose(grad, ddp_grads[row_id], atol=1e-7), row_id)


class FairGrpoRunTest(unittest.TestCase):
    """The grpo command with episode mini-batches and the role token-mean: imagined rows (act and
    rehearse) and real ones (act only) of the same episodes make the same act updates, counted."""

    @classmethod
    def setUpClass(cls):
        cls.tiny = TinyModel()
        rows = rollout_rows(0)
        write_rows(cls.tiny.path("rollouts", "imagined-0.jsonl"), rows)
        write_rows(cls.tiny.path("rollouts", "real-0.jsonl"), [r for r in rows if r["role"] == "act"])

    @classmethod
    def tearDownClass(cls):
        cls.tiny.cleanup()

    def run_arm(self, arm):
        cfg = {"out_dir": arm, "threads": 1, "model": {"path": "init"}, "optim": {"lr": 0.003},
               "train": {"micro_batch_size": 4, "checkpoint_every": 1, "export_at_end": False},
               "grpo": {"iterations": 1, "mini_batch_size": 3, "mini_batch_unit": "episode",
                        "loss_agg": "role-token-mean", "ppo_epochs": 2},
               "rollouts": {"rows": os.path.join(self.tiny.dir, "rollouts", arm + "-{iteration}.jsonl")}}
        code, events, err = run_cli(["grpo", "--config", self.tiny.config(arm, cfg)])
        self.assertEqual(code, 0, err)
        self.assertEqual(event_errors(events), [])
        return events

    def test_both_arms_make_the_same_act_updates_and_count_them(self):
        imagined, real = self.run_arm("imagined"), self.run_arm("real")
        for events in (imagined, real):
            steps = of(events, "step")
            self.assertEqual(len(steps), 2 * 3)  # 8 episodes in mini-batches of 3, two epochs
            act_tokens = sum(s["roles"]["act"]["tokens"] for s in steps)
            iteration, done = of(events, "iteration")[0], of(events, "done")[0]
            self.assertEqual((iteration["act_updates"], iteration["act_tokens"]), (len(steps), act_tokens))
            self.assertEqual((done["act_updates"], done["act_tokens"]), (len(steps), act_tokens))
        act = [[s["roles"]["act"]["tokens"] for s in of(events, "step")] for events in (imagined, real)]
        self.assertEqual(act[0], act[1], "the same act rows in each step")
        self.assertTrue(all("rehearse" in s["roles"] for s in of(imagined, "step")))


if __name__ == "__main__":
    unittest.main()
