"""Runs whose base is a Hugging Face folder train through transformers, with or without PEFT's LoRA:
tiny random models made here with transformers' own config classes (a Qwen3-shaped one and a
Llama-3.1-shaped one with llama3 rope scaling, which the studio's own model code refuses), nothing
downloaded. What a user relies on: the loss goes down, only the adapter trains, the adapter folder
loads with ``PeftModel.from_pretrained``, the merged folder computes what the adapter model computes,
an interrupted LoRA run resumes to the same adapter, and gradient checkpointing leaves the update as
it was."""
import json
import os
import shutil
import unittest

import torch
import transformers
from peft import PeftModel
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM

from ..commands.test_checkpoint import make_test_checkpoint
from .fixtures import demonstration_rows, write_rows
from .helpers import TinyModel, event_errors, load_weights, max_weight_diff, of, run_cli
from .test_distributed import torchrun

SHAPE = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
         "num_key_value_heads": 2, "max_position_embeddings": 512}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


def hf_folder(tiny, name, kind):
    """A random transformers model of the tiny tokenizer's vocabulary, saved with save_pretrained."""
    with open(os.path.join(tiny.model, "config.json"), encoding="utf-8") as f:
        vocab = json.load(f)["vocab_size"]
    torch.manual_seed(7)
    if kind == "qwen3":
        config = transformers.Qwen3Config(vocab_size=vocab, head_dim=8, tie_word_embeddings=False, **SHAPE)
        model = transformers.Qwen3ForCausalLM(config)
    else:  # Llama 3.1's layout: rope scaling of type llama3
        config = transformers.LlamaConfig(vocab_size=vocab, rope_scaling={
            "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 64}, **SHAPE)
        model = transformers.LlamaForCausalLM(config)
    folder = tiny.path(name)
    model.save_pretrained(folder)
    for file in TOKENIZER_FILES:
        shutil.copyfile(os.path.join(tiny.model, file), os.path.join(folder, file))
    return folder


def logits(model, ids):
    with torch.no_grad():
        return model(input_ids=torch.tensor([ids])).logits[0]


class HfBackendTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tiny = TinyModel()
        cls.qwen3 = hf_folder(cls.tiny, "qwen3-base", "qwen3")
        cls.llama31 = hf_folder(cls.tiny, "llama31-base", "llama31")

    @classmethod
    def tearDownClass(cls):
        cls.tiny.cleanup()

    def sft(self, name, base, lora=None, model=None, **train):
        cfg = {"out_dir": name, "threads": 1, "model": dict({"path": base}, **(model or {})),
               "data": {"train": ["demo.jsonl"]}, "optim": {"lr": 0.01, "schedule": "constant"},
               "train": dict({"steps": 20, "batch_size": 8, "micro_batch_size": 4, "checkpoint_every": 10,
                              "export_at_end": False}, **train)}
        if lora is not None:
            cfg["lora"] = lora
        return run_cli(["sft", "--config", self.tiny.config(name, cfg)])

    def test_lora_sft_lowers_the_loss_and_trains_only_the_adapter(self):
        before = load_file(os.path.join(self.qwen3, "model.safetensors"))
        code, events, err = self.sft("lora", self.qwen3, lora={"rank": 8})
        self.assertEqual(code, 0, err)
        self.assertEqual(event_errors(events), [])
        model = of(events, "model")[0]
        self.assertEqual(model["config"]["backend"], "transformers")
        self.assertLess(model["config"]["trainable_parameters"], model["parameters"] / 5)
        steps = of(events, "step")
        # A random base's output layer stays frozen and near uniform (ln 400 = 6.0): the adapters alone
        # lower the loss steadily (about 6.0 to 5.6 in 20 steps), not to zero.
        self.assertLess(sum(s["loss"] for s in steps[-3:]) / 3, sum(s["loss"] for s in steps[:3]) / 3 - 0.2)
        final = self.tiny.path("lora", "final")
        for file in ("adapter_config.json", "adapter_model.safetensors") + TOKENIZER_FILES:
            self.assertTrue(os.path.isfile(os.path.join(final, file)), file)
        self.assertFalse(os.path.exists(os.path.join(final, "model.safetensors")))  # the base is not copied
        self.assertEqual(of(events, "done")[0]["merged"], self.tiny.path("lora", "final-merged"))
        after = load_file(os.path.join(self.qwen3, "model.safetensors"))
        self.assertEqual(max(float((before[k] - after[k]).abs().max()) for k in before), 0.0)

        # The adapter loads as PEFT saves it, and the merged folder computes what base + adapter compute.
        ids = [5, 40, 17, 300, 42, 7, 250, 11]
        adapted = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(self.qwen3), final).eval()
        merged = AutoModelForCausalLM.from_pretrained(self.tiny.path("lora", "final-merged")).eval()
        base = AutoModelForCausalLM.from_pretrained(self.qwen3).eval()
        self.assertLess(float((logits(adapted, ids) - logits(merged, ids)).abs().max()), 1e-4)
        self.assertGreater(float((logits(adapted, ids) - logits(base, ids)).abs().max()), 1e-2)  # it did train

        # Merged on request: `export-checkpoint` of the adapter writes the same merged model.
        out = self.tiny.path("lora-export")
        code, events, err = run_cli(["export-checkpoint", "--source", final, "--out", out])
        self.assertEqual(code, 0, err)
        self.assertEqual(event_errors(events), [])
        self.assertEqual(of(events, "hf_folder")[0]["model_type"], "qwen3")
        exported = AutoModelForCausalLM.from_pretrained(out).eval()
        self.assertLess(float((logits(exported, ids) - logits(merged, ids)).abs().max()), 1e-5)
        code, events, _ = run_cli(["import-checkpoint", "--source", final, "--out", self.tiny.path("lora-policy")])
        self.assertEqual((code, events[-1]["code"]), (2, "MODEL_IS_ADAPTER"))
        self.assertIn("final-merged", events[-1]["message"])

        # A LoRA run may start from a saved adapter: its base comes from adapter_config.json.
        code, events, err = self.sft("from-adapter", final, steps=2)
        self.assertEqual(code, 0, err)
        self.assertEqual(of(events, "model")[0]["config"]["backend"], "transformers")
        self.assertLess(of(events, "step")[0]["loss"], steps[0]["loss"])

    def test_an_interrupted_lora_run_resumes_to_the_same_adapter(self):
        whole = self.sft("whole", self.qwen3, lora={"rank": 4}, steps=6, checkpoint_every=3)
        self.assertEqual(whole[0], 0, whole[2])
        first = self.sft("parts", self.qwen3, lora={"rank": 4}, steps=3, checkpoint_every=3)
        self.assertEqual(first[0], 0, first[2])
        code, events, err = self.sft("parts", self.qwen3, lora={"rank": 4}, steps=6, checkpoint_every=3)
        self.assertEqual(code, 0, err)
        self.assertEqual(of(events, "resume")[0]["step"], 3)
        self.assertEqual([s["step"] for s in of(events, "step")], [4, 5, 6])
        a = load_file(self.tiny.path("whole", "final", "adapter_model.safetensors"))
        b = load_file(self.tiny.path("parts", "final", "adapter_model.safetensors"))
        self.assertEqual(sorted(a), sorted(b))
        self.assertLess(max(float((a[k] - b[k]).abs().max()) for k in a), 1e-6)

    def test_a_model_the_studio_code_refuses_trains_through_transformers(self):
        # Llama 3.1's rope scaling: the studio's own code refuses it, so auto picks transformers.
        code, events, err = self.sft("llama31", self.llama31, steps=8, export_at_end=True)
        self.assertEqual(code, 0, err)
        self.assertEqual(of(events, "model")[0]["config"]["backend"], "transformers")
        steps = of(events, "step")
        self.assertLess(steps[-1]["loss"], steps[0]["loss"])
        final = self.tiny.path("llama31", "final")
        trained = AutoModelForCausalLM.from_pretrained(final)
        self.assertEqual(trained.config.rope_parameters["rope_type"], "llama3")
        # No ONNX export for it: the run says so instead of failing.
        warnings = [w for w in of(events, "warning") if w["code"] == "EXPORT_SKIPPED"]
        self.assertEqual(len(warnings), 1)
        self.assertIn("vLLM", warnings[0]["message"])

    def test_both_backends_compute_the_same_loss_on_a_qwen3_folder(self):
        # A Qwen3 folder as EnvACE's merger writes it, with Qwen3's chat template (<think> handling):
        # the studio's code and transformers render the same rows and score them alike.
        folder = self.tiny.path("qwen3-envace")
        make_test_checkpoint(folder, model_type="qwen3", seed=5)
        write_rows(self.tiny.path("qwen-rows.jsonl"), demonstration_rows(6))
        first = {}
        for backend in ("studio", "transformers"):
            cfg = {"out_dir": f"both-{backend}", "threads": 1, "model": {"path": folder, "backend": backend},
                   "data": {"train": ["qwen-rows.jsonl"]}, "optim": {"lr": 0.001},
                   "train": {"steps": 1, "batch_size": 4, "export_at_end": False}}
            code, events, err = run_cli(["sft", "--config", self.tiny.config(f"both-{backend}", cfg)])
            self.assertEqual(code, 0, err)
            first[backend] = of(events, "step")[0]
        self.assertEqual(first["studio"]["tokens"], first["transformers"]["tokens"])
        self.assertAlmostEqual(first["studio"]["loss"], first["transformers"]["loss"], delta=1e-4)
        for role in ("act", "rehearse"):
            self.assertAlmostEqual(first["studio"]["roles"][role]["loss"], first["transformers"]["roles"][role]["loss"],
                                   delta=1e-4)

    def test_lora_under_torchrun_matches_one_process(self):
        # Two CPU ranks (gloo DDP) over the adapters only: the same losses and adapter as one process.
        def cfg(name):
            return self.tiny.config(name, {
                "out_dir": name, "threads": 1, "model": {"path": self.qwen3}, "lora": {"rank": 4, "merge_at_end": False},
                "data": {"train": ["demo.jsonl"]}, "optim": {"lr": 0.01, "schedule": "constant"},
                "train": {"steps": 3, "batch_size": 7, "micro_batch_size": 2, "checkpoint_every": 3,
                          "export_at_end": False}})
        proc = torchrun(2, ["sft", "--config", cfg("lora-ddp")])
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        with open(self.tiny.path("lora-ddp", "events.jsonl"), encoding="utf-8") as f:
            events = [json.loads(line) for line in f]
        self.assertEqual(events[0]["world_size"], 2)
        self.assertTrue(events[-1]["replicas_identical"])
        code, single, err = run_cli(["sft", "--config", cfg("lora-one")])
        self.assertEqual(code, 0, err)
        for a, b in zip(of(events, "step"), of(single, "step"), strict=True):
            self.assertAlmostEqual(a["loss"], b["loss"], places=5)
        a = load_file(self.tiny.path("lora-ddp", "final", "adapter_model.safetensors"))
        b = load_file(self.tiny.path("lora-one", "final", "adapter_model.safetensors"))
        self.assertLess(max(float((a[k] - b[k]).abs().max()) for k in a), 1e-5)

    def test_gradient_checkpointing_leaves_the_update_unchanged(self):
        runs = {}
        for flag in (False, True):
            name = f"ckpt-{flag}"
            code, _, err = self.sft(name, self.tiny.model, steps=2, gradient_checkpointing=flag)
            self.assertEqual(code, 0, err)
            runs[flag] = load_weights(self.tiny.path(name, "final"))
        self.assertLess(max_weight_diff(runs[False], runs[True]), 1e-6)
        self.assertGreater(max_weight_diff(runs[True], load_weights(self.tiny.model)), 1e-4)  # it did train

    def test_settings_that_cannot_work_get_coded_errors(self):
        code, events, _ = self.sft("studio-lora", self.qwen3, lora={"rank": 4}, model={"backend": "studio"})
        self.assertEqual((code, events[-1]["code"]), (2, "CONFIG_INVALID"))
        self.assertIn("model.backend transformers", events[-1]["message"])
        code, events, _ = self.sft("bad-targets", self.qwen3, lora={"rank": 4, "target_modules": ["c_attn"]})
        self.assertEqual((code, events[-1]["code"]), (2, "CONFIG_INVALID"))
        self.assertIn("q_proj", events[-1]["message"])  # it names the layers there are
        # GRPO of a transformers run samples a served engine: without one, without the served name a
        # full fine-tuning reload needs, or with an ONNX validation, it says what to set.
        grpo_cases = [
            ({"lora": {"rank": 4}, "rollouts": {"command": ["true"]}}, "BACKEND_UNSUPPORTED", "rollouts.server_url"),
            ({"rollouts": {"command": ["true"], "server_url": "http://127.0.0.1:9/v1"}}, "CONFIG_INVALID",
             "rollouts.server_model"),
            ({"lora": {"rank": 4}, "rollouts": {"command": ["true"], "server_url": "http://127.0.0.1:9/v1"},
              "validation": {"command": ["true"]}}, "BACKEND_UNSUPPORTED", "validation.command"),
        ]
        for i, (extra, want, names) in enumerate(grpo_cases):
            cfg = {"out_dir": f"grpo-{i}", "model": {"path": self.llama31}, **extra}
            code, events, _ = run_cli(["grpo", "--config", self.tiny.config(f"grpo-{i}", cfg)])
            self.assertEqual((code, events[-1]["code"]), (2, want), events[-1])
            self.assertIn(names, events[-1]["message"])
        # A served engine takes adapters of a transformers run, not the studio's own model.
        cfg = {"out_dir": "grpo-studio", "model": {"path": self.tiny.model},
               "rollouts": {"command": ["true"], "server_url": "http://127.0.0.1:9/v1"}}
        code, events, _ = run_cli(["grpo", "--config", self.tiny.config("grpo-studio", cfg)])
        self.assertEqual((code, events[-1]["code"]), (2, "CONFIG_INVALID"))
        # A server that is not there: a runtime error that says how to start one.
        cfg = {"out_dir": "grpo-down", "model": {"path": self.qwen3}, "lora": {"rank": 4},
               "rollouts": {"command": ["true"], "server_url": "http://127.0.0.1:9/v1"}}
        code, events, _ = run_cli(["grpo", "--config", self.tiny.config("grpo-down", cfg)])
        self.assertEqual((code, events[-1]["code"]), (1, "SERVER_UNREACHABLE"))
        self.assertIn("vllm serve", events[-1]["message"])


if __name__ == "__main__":
    unittest.main()
