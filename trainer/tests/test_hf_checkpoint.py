"""Hugging Face folders of qwen2 and qwen3 (what EnvACE's scripts/model_merger.py writes through
save_pretrained) load in the trainer, train, become policy folders, and come back bit for bit.

The Qwen3 reference below follows transformers' modeling_qwen3.py (Qwen3Attention: q_norm/k_norm over
each head's head_dim before apply_rotary_pos_emb; head_dim from config.json), Qwen2 modeling_qwen2.py
(q/k/v biases, none on o_proj); it is written from those definitions, apart from the trainer's model."""
import json
import os
import shutil
import tempfile
import unittest

import torch
import torch.nn.functional as F

from ..chat_template import render_chat
from ..commands.test_checkpoint import QWEN3_TEMPLATE, make_test_checkpoint
from ..model import safetensors
from ..model.folder import load_model
from .helpers import event_errors, of, run_cli


def reference_logits(sd, hf, ids):
    """Logits of a Qwen2/Qwen3 decoder computed straight from the state dict and config.json."""
    heads, kv, eps = hf["num_attention_heads"], hf["num_key_value_heads"], hf["rms_norm_eps"]
    d = hf.get("head_dim") or hf["hidden_size"] // heads

    def norm(x, w):
        return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def lin(x, name):
        y = x @ sd[name + ".weight"].T
        return y + sd[name + ".bias"] if name + ".bias" in sd else y
    s = len(ids)
    inv = 1.0 / (hf["rope_theta"] ** (torch.arange(0, d, 2).float() / d))
    freqs = torch.outer(torch.arange(s).float(), inv)
    cos, sin = torch.cat([freqs, freqs], -1).cos(), torch.cat([freqs, freqs], -1).sin()

    def rope(x):
        return x * cos + torch.cat([-x[..., d // 2:], x[..., :d // 2]], -1) * sin
    x = sd["model.embed_tokens.weight"][torch.tensor(ids)]
    for i in range(hf["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = norm(x, sd[p + "input_layernorm.weight"])
        q = lin(h, p + "self_attn.q_proj").view(s, heads, d)
        k = lin(h, p + "self_attn.k_proj").view(s, kv, d)
        v = lin(h, p + "self_attn.v_proj").view(s, kv, d)
        if hf["model_type"] == "qwen3":
            q, k = norm(q, sd[p + "self_attn.q_norm.weight"]), norm(k, sd[p + "self_attn.k_norm.weight"])
        q, k, v = rope(q.transpose(0, 1)), rope(k.transpose(0, 1)), v.transpose(0, 1)
        k, v = k.repeat_interleave(heads // kv, 0), v.repeat_interleave(heads // kv, 0)
        mask = torch.full((s, s), float("-inf")).triu(1)
        att = torch.softmax(q @ k.transpose(1, 2) / d ** 0.5 + mask, -1) @ v
        x = x + lin(att.transpose(0, 1).reshape(s, heads * d), p + "self_attn.o_proj")
        h = norm(x, sd[p + "post_attention_layernorm.weight"])
        x = x + lin(F.silu(lin(h, p + "mlp.gate_proj")) * lin(h, p + "mlp.up_proj"), p + "mlp.down_proj")
    head = sd.get("lm_head.weight", sd["model.embed_tokens.weight"])
    return norm(x, sd["model.norm.weight"]) @ head.T


class HfCheckpointTest(unittest.TestCase):
    def setUp(self):
        torch.set_num_threads(1)
        self.tmp = tempfile.TemporaryDirectory(prefix="hf-checkpoint-test-")

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, *parts):
        return os.path.join(self.tmp.name, *parts)

    def folder(self, name, **kw):
        make_test_checkpoint(self.path(name), **kw)
        return self.path(name)

    def test_qwen2_and_qwen3_folders_load_and_compute_as_the_architectures_define(self):
        ids = [5, 900, 17, 3063, 42, 7, 2500, 11]
        for model_type, tied, shards in (("qwen3", False, 3), ("qwen3", True, 1), ("qwen2", True, 2), ("qwen2", False, 1)):
            name = f"{model_type}-{tied}-{shards}"
            folder = self.folder(name, model_type=model_type, tied=tied, shards=shards, seed=3)
            self.assertEqual(os.path.exists(os.path.join(folder, safetensors.INDEX_FILE)), shards > 1, name)
            with open(os.path.join(folder, "config.json")) as f:
                hf = json.load(f)
            sd = safetensors.read_folder(folder)
            self.assertEqual("lm_head.weight" in sd, not tied, name)
            self.assertEqual("model.layers.0.self_attn.q_norm.weight" in sd, model_type == "qwen3", name)
            self.assertEqual("model.layers.0.self_attn.q_proj.bias" in sd, model_type == "qwen2", name)
            self.assertNotIn("model.layers.0.self_attn.o_proj.bias", sd, name)
            model = load_model(folder).eval()
            with torch.no_grad():
                got = model(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long), torch.arange(len(ids))[None])[0][0]
            want = reference_logits(sd, hf, ids)
            self.assertLess((got - want).abs().max().item(), 1e-4, name)

    def test_qwen3_head_dim_differs_from_hidden_over_heads(self):
        folder = self.folder("q3")
        with open(os.path.join(folder, "config.json")) as f:
            hf = json.load(f)
        self.assertEqual((hf["model_type"], hf["architectures"]), ("qwen3", ["Qwen3ForCausalLM"]))
        self.assertNotEqual(hf["head_dim"], hf["hidden_size"] // hf["num_attention_heads"])
        self.assertEqual(load_model(folder).model.layers[0].self_attn.q_proj.weight.shape[0],
                         hf["num_attention_heads"] * hf["head_dim"])

    def test_greedy_with_the_kv_cache_equals_greedy_without(self):
        model = load_model(self.folder("q3", seed=5)).eval()
        prompt = [3062, 100, 200, 300, 3063]
        with torch.no_grad():
            seq, uncached_logits = list(prompt), []
            for _ in range(12):
                x = torch.tensor([seq])
                uncached_logits.append(model(x, torch.ones_like(x), torch.arange(len(seq))[None])[0][0, -1])
                seq.append(int(uncached_logits[-1].argmax()))
            cached, past = list(prompt), ()
            x = torch.tensor([prompt])
            for step in range(12):
                out = model(x, torch.ones(1, len(cached), dtype=torch.long),
                            torch.arange(len(cached) - x.shape[1], len(cached))[None], *past)
                # Every step's whole distribution, not only its argmax: a cache that were ignored or
                # misplaced changes the logits even where a random model repeats one greedy token.
                self.assertTrue(torch.allclose(out[0][0, -1], uncached_logits[step], atol=1e-4, rtol=0),
                                f"step {step}: max |difference| {(out[0][0, -1] - uncached_logits[step]).abs().max()}")
                cached.append(int(out[0][0, -1].argmax()))
                past, x = out[1:], torch.tensor([[cached[-1]]])
        self.assertEqual(cached, seq)

    def test_round_trip_hf_to_policy_to_hf_gives_identical_tensors(self):
        for dtype, shards in (("float32", 3), ("bfloat16", 2)):
            source = self.folder(f"src-{dtype}", shards=shards, dtype=dtype, tied=dtype == "bfloat16")
            code, events, err = run_cli(["import-checkpoint", "--source", source, "--out", self.path(f"policy-{dtype}")])
            self.assertEqual(code, 0, err)
            self.assertEqual(event_errors(events), [])
            self.assertTrue(os.path.exists(self.path(f"policy-{dtype}", "onnx", "model_cascade.onnx")))
            self.assertGreater(len(of(events, "progress")), 2)
            code, events, err = run_cli(["export-checkpoint", "--source", self.path(f"policy-{dtype}"),
                                         "--out", self.path(f"back-{dtype}")])
            self.assertEqual(code, 0, err)
            self.assertEqual(event_errors(events), [])
            before, after = safetensors.read_folder(source), safetensors.read_folder(self.path(f"back-{dtype}"))
            self.assertEqual(sorted(after), sorted(before))
            for name, t in before.items():
                self.assertEqual(after[name].dtype, t.dtype, name)
                self.assertTrue(torch.equal(after[name], t), name)
            # Without its safetensors, the policy folder's weights come back from the ONNX graph.
            onnx_only = self.path(f"onnx-only-{dtype}")
            shutil.copytree(self.path(f"policy-{dtype}"), onnx_only)
            os.remove(os.path.join(onnx_only, safetensors.SINGLE_FILE))
            recovered = load_model(onnx_only).state_dict()
            for name, t in load_model(source).state_dict().items():
                self.assertTrue(torch.equal(recovered[name], t), name)
            with open(os.path.join(source, "config.json")) as f, open(self.path(f"back-{dtype}", "config.json")) as g:
                self.assertEqual(json.load(g), json.load(f))
            for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
                with open(os.path.join(source, name)) as f, open(self.path(f"back-{dtype}", name)) as g:
                    self.assertEqual(g.read(), f.read(), name)

    def test_sft_trains_a_qwen3_folder_and_exports_it_back(self):
        from .fixtures import demonstration_rows, write_config, write_rows
        source = self.folder("q3", tied=True)
        from ..tokenizer import load_tokenizer
        tok = load_tokenizer(source)  # Qwen's normalizer and split pattern
        self.assertEqual(tok.encode("cafe\u0301"), tok.encode("caf\u00e9"))
        write_rows(self.path("rows.jsonl"), demonstration_rows(6))
        cfg = write_config(self.path("sft.json"), {
            "out_dir": self.path("run"), "device": "cpu", "model": {"path": source}, "data": {"train": [self.path("rows.jsonl")]},
            "train": {"steps": 3, "batch_size": 2, "export_at_end": True, "checkpoint_every": 100}, "optim": {"lr": 0.01}})
        code, events, err = run_cli(["sft", "--config", cfg])
        self.assertEqual(code, 0, err)
        self.assertEqual(len(of(events, "step")), 3)
        final = of(events, "done")[0]["final"]
        code, events, err = run_cli(["export-checkpoint", "--source", final, "--out", self.path("hf")])
        self.assertEqual(code, 0, err)
        with open(self.path("hf", "config.json")) as f:
            self.assertEqual(json.load(f)["model_type"], "qwen3")
        trained, base = safetensors.read_folder(self.path("hf")), safetensors.read_folder(source)
        self.assertEqual(sorted(trained), sorted(base))
        self.assertFalse(torch.equal(trained["model.layers.0.self_attn.q_norm.weight"],
                                     base["model.layers.0.self_attn.q_norm.weight"]))

    def test_a_chat_template_jinja_file_is_folded_into_tokenizer_config(self):
        # Newer transformers' save_pretrained writes the template to chat_template.jinja, not into
        # tokenizer_config.json, where transformers.js and the trainer read it.
        source = self.folder("q3")
        with open(os.path.join(source, "tokenizer_config.json")) as f:
            config = json.load(f)
        template = config.pop("chat_template")
        with open(os.path.join(source, "tokenizer_config.json"), "w") as f:
            json.dump(config, f)
        with open(os.path.join(source, "chat_template.jinja"), "w") as f:
            f.write(template)
        code, _, err = run_cli(["import-checkpoint", "--source", source, "--out", self.path("policy")])
        self.assertEqual(code, 0, err)
        with open(self.path("policy", "tokenizer_config.json")) as f:
            self.assertEqual(json.load(f)["chat_template"], template)

    def test_an_envace_merge_rehearses_with_envace_s_prompt_unless_it_brings_its_own(self):
        # EnvACE trains the rehearse role on simulate_core/_builders.py's prompt: the policy folder
        # names the studio's profile that reproduces it (docs/dataset-format.md, rehearse prompt profiles).
        source = self.folder("q3")
        code, _, err = run_cli(["import-checkpoint", "--source", source, "--out", self.path("policy")])
        self.assertEqual(code, 0, err)
        with open(self.path("policy", "rehearsal_config.json")) as f:
            self.assertEqual(json.load(f), {"rehearsePrompt": {"profile": "envace"}})
        with open(os.path.join(source, "rehearsal_config.json"), "w") as f:
            json.dump({"rehearsePrompt": {"profile": "compact"}}, f)
        code, _, err = run_cli(["import-checkpoint", "--source", source, "--out", self.path("policy2")])
        self.assertEqual(code, 0, err)
        with open(self.path("policy2", "rehearsal_config.json")) as f:
            self.assertEqual(json.load(f)["rehearsePrompt"]["profile"], "compact")

    def test_bad_folders_get_coded_errors(self):
        source = self.folder("q3", shards=2)
        cases = []
        os.makedirs(self.path("empty"))
        cases.append(("empty", "MODEL_MISSING", "no config.json"))
        gpt2 = self.path("gpt2")
        shutil.copytree(source, gpt2)
        with open(os.path.join(gpt2, "config.json"), "w") as f:
            json.dump({"model_type": "gpt2", "vocab_size": 10}, f)
        cases.append(("gpt2", "MODEL_UNSUPPORTED", "'gpt2'"))
        shard = self.path("shard")
        shutil.copytree(source, shard)
        last = sorted(safetensors.read_index(shard))[-1]
        os.remove(os.path.join(shard, last))
        cases.append(("shard", "MODEL_MISSING", last))
        shape = self.path("shape")
        shutil.copytree(source, shape)
        with open(os.path.join(shape, "config.json")) as f:
            hf = json.load(f)
        with open(os.path.join(shape, "config.json"), "w") as f:
            json.dump({**hf, "head_dim": 8}, f)
        cases.append(("shape", "WEIGHTS_MISMATCH", "q_proj.weight is [64, 48], config.json makes it [32, 48]"))
        as_qwen2 = self.path("as-qwen2")
        shutil.copytree(source, as_qwen2)
        with open(os.path.join(as_qwen2, "config.json"), "w") as f:
            json.dump({**hf, "model_type": "qwen2", "head_dim": None}, f)
        cases.append(("as-qwen2", "WEIGHTS_MISMATCH", "missing"))
        for name, code, text in cases:
            exit_code, events, _ = run_cli(["import-checkpoint", "--source", self.path(name), "--out", self.path("out-" + name)])
            error = of(events, "error")[0]
            self.assertEqual((exit_code, error["code"]), (2, code), (name, error))
            self.assertIn(text, error["message"], name)

    def test_the_qwen3_template_renders_tools_and_thinking_as_qwen3_does(self):
        # EnvACE renders with apply_chat_template(..., enable_thinking=True) (examples/drmas_trainer/
        # run_checklist_share.sh: +data.apply_chat_template_kwargs.enable_thinking=True).
        with open(QWEN3_TEMPLATE) as f:
            template = f.read()
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
        messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Paris?"},
                    {"role": "assistant", "content": '<think>\nlook it up\n</think>\n\n<tool_call>\n'
                                                     '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'},
                    {"role": "tool", "content": '{"t": 21}'}]
        text = render_chat(template, messages, tools, True, {})
        self.assertEqual(text, (
            '<|im_start|>system\nBe brief.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n'
            'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n'
            '{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}\n</tools>\n\n'
            'For each function call, return a json object with function name and arguments within '
            '<tool_call></tool_call> XML tags:\n'
            '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
            '<|im_start|>user\nParis?<|im_end|>\n'
            '<|im_start|>assistant\n<think>\nlook it up\n</think>\n\n<tool_call>\n'
            '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n'
            '<|im_start|>user\n<tool_response>\n{"t": 21}\n</tool_response><|im_end|>\n<|im_start|>assistant\n'))
        from ..chat_template import compile_template
        thinking = compile_template(template).render(messages=messages[:2], tools=None, add_generation_prompt=True,
                                                     enable_thinking=True)
        off = compile_template(template).render(messages=messages[:2], tools=None, add_generation_prompt=True,
                                                enable_thinking=False)
        self.assertTrue(thinking.endswith("<|im_start|>assistant\n"))
        self.assertTrue(off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n"))
        self.assertEqual(render_chat(template, messages[:2], None, True, {}), thinking)


if __name__ == "__main__":
    unittest.main()
