"""The small JSON Schema validator behind config, row and event checks: it must reject what the
schemas forbid (a validator that accepts everything would make the other tests meaningless)."""
import unittest

from ..config import load_config
from ..config_types import TrainerConfig
from ..errors import TrainerError
from ..schema import apply_defaults, load_schema, validate


class SchemaTest(unittest.TestCase):
    def test_events_schema_rejects_malformed_events(self):
        schema = load_schema("trainer-events")
        good = {"event": "checkpoint", "t": 1.0, "step": 3, "path": "/x"}
        self.assertEqual(validate(schema, good), [])
        self.assertTrue(validate(schema, dict(good, step=-1)))
        self.assertTrue(validate(schema, {"event": "checkpoint", "t": 1.0, "path": "/x"}))
        self.assertTrue(validate(schema, {"event": "nonsense", "t": 0}))
        sft_step = {"event": "step", "t": 2.0, "command": "sft", "step": 1, "steps": 5, "epoch": 0.1, "lr": 0.001,
                    "loss": 2.0, "grad_norm": 1.0, "tokens": 100, "seconds": 0.1, "tokens_per_s": 1000.0,
                    "roles": {"act": {"rows": 1, "tokens": 10, "loss": 2.0}}}
        self.assertEqual(validate(schema, sft_step), [])
        self.assertTrue(validate(schema, dict(sft_step, roles={"critic": {}})))
        errors = validate(schema, dict(sft_step, lr="fast"))
        self.assertTrue(any(".lr" in e for e in errors), errors)

    def test_rows_schema(self):
        schema = load_schema("dataset-row")
        row = {"id": "a", "role": "act", "messages": [{"role": "user", "content": "x"}], "target": "y", "source": "rollout"}
        self.assertEqual(validate(schema, row), [])
        self.assertEqual(validate(schema, dict(row, extra_bookkeeping=1)), [])
        self.assertTrue(validate(schema, dict(row, messages=[{"role": "user", "content": None}])))
        self.assertTrue(validate(schema, dict(row, weight=-1)))
        self.assertTrue(validate(schema, dict(row, source="imagined")))

    def test_defaults_and_strict_integers(self):
        cfg = load_config(None, ["train.steps=7"])
        self.assertEqual(cfg["train"]["steps"], 7)
        self.assertEqual(cfg["grpo"]["clip_ratio"], 0.2)
        self.assertEqual(cfg["grpo"]["grounding"]["coef"], 0.0)
        self.assertEqual(cfg["model"]["architecture"]["hidden_size"], 128)
        with self.assertRaises(TrainerError):
            load_config(None, ["train.steps=7.5"])
        with self.assertRaises(TrainerError):
            load_config(None, ["train.steps=true"])
        schema = load_schema("trainer-config")
        self.assertEqual(apply_defaults(schema, {"optim": {"lr": 0.5}})["optim"]["lr"], 0.5)

    def test_typed_config_round_trips(self):
        """The dataclasses read every field of the dict and give back the same JSON (resume fingerprints)."""
        plain = load_config(None, [])
        self.assertEqual(TrainerConfig.from_dict(plain).to_dict(), plain)
        self.assertEqual(dict(TrainerConfig().to_dict(), config_dir=plain["config_dir"]), plain)
        full = load_config(None, ['$schema="x.json"', "seed=3", 'rollouts.command=["run", "{out}"]',
                                  'rollouts.env={"A": "1"}', 'data.roles=["act"]', "optim.betas=[0.8, 0.9]",
                                  'grpo.grounding.rows=["g.jsonl"]', "model.architecture.model_type=qwen3"])
        typed = TrainerConfig.from_dict(full)
        self.assertEqual(typed.to_dict(), full)
        self.assertEqual(typed.rollouts.command, ("run", "{out}"))
        self.assertEqual(typed.grpo.grounding.rows, (full["grpo"]["grounding"]["rows"][0],))
        self.assertEqual(typed.model.architecture.model_type, "qwen3")


if __name__ == "__main__":
    unittest.main()
