"""The GPU check of LoRA training (issue 42), one command, well under 10 minutes, for a machine with one
GPU, CUDA PyTorch, transformers, peft and accelerate, and neither vLLM, node nor a network:

    python3 scripts/gpu_check_lora.py --out /tmp/gpu-check [--plan-gib G]

On a Qwen3-0.6B-shaped random model (the embedded policy's tokenizer, so its vocabulary is small):
LoRA r16 SFT in bf16 with gradient checkpointing on rows of --seq tokens, then one LoRA GRPO iteration
whose rollouts the transformers-backed stand-in server (``python -m trainer.serve_hf``) samples with
the adapter hot-loaded, token ids and log-probs recorded. It prints JSON lines; the last, ``summary``,
has SFT tokens/s, the peak GPU memory, the GRPO iteration's seconds, the adapter load and the
sampler/trainer log-prob gap. ``--plan-gib`` (what ``rehearse train --config <out>/sft.run.json
--dry-run`` planned per GPU, run where node is, after ``--config-only`` wrote that file) adds whether
the peak is within 15% of the plan. ``--tiny`` runs a tiny shape on the CPU (the trainer tests run it
so that the script keeps working).

The GRPO iteration's rollouts are the script's own (``--rollout``, what ``rollouts.command`` runs):
each of a few prompts sampled 4 times through the server, rewarded by the share of digits in the
text, a toy reward that only gives the group advantages something to differ by.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

SHAPES = {
    # Qwen3-0.6B's config.json, but the vocabulary (the tokenizer's) and untied embeddings kept as there.
    "qwen3-0.6b": {"hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28,
                   "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
                   "max_position_embeddings": 40960, "rope_theta": 1000000.0, "tie_word_embeddings": True},
    "tiny": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
             "num_key_value_heads": 2, "head_dim": 16, "max_position_embeddings": 4096, "rope_theta": 1000000.0,
             "tie_word_embeddings": True},
}


def say(**fields):
    print(json.dumps(fields), flush=True)


def make_base(folder: str, shape: str) -> None:
    """A random-weight Qwen3 folder with the embedded policy's tokenizer under Qwen3's chat template."""
    import torch
    import transformers

    from trainer.commands.test_checkpoint import QWEN3_TEMPLATE, write_qwen_shaped_tokenizer
    from trainer.model.folder import write_json
    from trainer.tokenizer import load_tokenizer
    write_qwen_shaped_tokenizer(folder)
    with open(os.path.join(REPO, "models", "default", "tokenizer_config.json"), encoding="utf-8") as f:
        tokenizer_config = json.load(f)
    with open(QWEN3_TEMPLATE, encoding="utf-8") as f:
        tokenizer_config["chat_template"] = f.read()
    write_json(os.path.join(folder, "tokenizer_config.json"), tokenizer_config)
    tokenizer = load_tokenizer(folder)
    eos = tokenizer.token_id("<|im_end|>")
    config = transformers.Qwen3Config(vocab_size=len(tokenizer), eos_token_id=eos, pad_token_id=eos, **SHAPES[shape])
    torch.manual_seed(0)
    transformers.Qwen3ForCausalLM(config).save_pretrained(folder)


def write_rows(path: str, seq: int, count: int) -> None:
    """Act rows whose prompt and target fill about ``seq`` tokens (the plan's row length)."""
    words = " ".join(f"item{i % 97} costs {i * 7 % 1000}" for i in range(seq // 6))
    with open(path, "w", encoding="utf-8") as f:
        for i in range(count):
            f.write(json.dumps({"id": f"row{i}", "role": "act", "source": "demonstration", "weight": 1.0,
                                "messages": [{"role": "user", "content": f"({i}) {words}"}],
                                "target": f"The total of the first {i + 3} items is {i * 31 % 997}."}) + "\n")


def trainer(command: str, config: str, log: str) -> list[dict]:
    with open(log, "w", encoding="utf-8") as err:
        done = subprocess.run([sys.executable, "-m", "trainer", command, "--config", config], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=err, text=True, check=False)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0:
        say(event="failed", command=command, last=events[-1] if events else None, log=log)
        sys.exit(1)
    return events


def run_file(out: str, seq: int, device: str, steps: int) -> str:
    """The SFT run as a studio run file (what `rehearse train --dry-run` plans) and as a trainer config."""
    hyper = {"lora": {"rank": 16}, "optim": {"lr": 0.0002, "schedule": "constant"},
             "train": {"steps": steps, "batch_size": 8, "micro_batch_size": 1, "precision": "bf16",
                       "gradient_checkpointing": True, "export_at_end": False, "checkpoint_every": steps},
             "data": {"max_length": seq + 256}}
    with open(os.path.join(out, "sft.run.json"), "w", encoding="utf-8") as f:
        json.dump({"objective": "sft", "base": "base", "data": {"train": ["rows.jsonl"]}, "hyperparameters": hyper,
                   "hardware": {"device": device}}, f, indent=1)
    config = os.path.join(out, "sft.json")
    with open(config, "w", encoding="utf-8") as f:
        json.dump({"out_dir": "sft", "device": device, "model": {"path": "base"}, "data": {"train": ["rows.jsonl"],
                   "max_length": seq + 256}, **{k: v for k, v in hyper.items() if k != "data"}}, f, indent=1)
    return config


def rollout(endpoint: str, model: str, out: str, seed: int) -> None:
    """``rollouts.command``: 4 prompts × 4 samples through the server, each row with its sampled tokens."""
    rows = []
    for p in range(4):
        body = {"model": model, "messages": [{"role": "user", "content": f"Write a number between {p} and {p + 50}."}],
                "n": 4, "temperature": 1.0, "max_tokens": 48, "seed": seed * 10 + p, "logprobs": True,
                "return_token_ids": True}
        request = urllib.request.Request(endpoint + "/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=600) as answer:  # noqa: S310 (the local stand-in)
            reply = json.load(answer)
        for c in reply["choices"]:
            text = c["message"]["content"]
            rows.append({"id": f"p{p}/s{c['index']}/act", "role": "act", "source": "rollout", "weight": 1.0,
                         "group": f"p{p}", "task": f"p{p}", "episode": f"e{c['index']}",
                         "messages": body["messages"], "target": text, "temperature": 1.0,
                         "reward": sum(ch.isdigit() for ch in text) / max(1, len(text)),
                         "target_ids": c["token_ids"],
                         "target_logprobs": [t["logprob"] for t in c["logprobs"]["content"]]})
    with open(out, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out")
    parser.add_argument("--tiny", action="store_true", help="a tiny shape on the CPU (the tests)")
    parser.add_argument("--seq", type=int, default=None, help="row tokens (default 2048; 256 with --tiny)")
    parser.add_argument("--steps", type=int, default=None, help="SFT steps (default 20; 3 with --tiny)")
    parser.add_argument("--plan-gib", type=float, default=None, help="the dry run's total per GPU, in GiB")
    parser.add_argument("--config-only", action="store_true", help="write the base and the run file, train nothing")
    parser.add_argument("--rollout", nargs=4, metavar=("ENDPOINT", "MODEL", "OUT", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rollout:
        endpoint, model, out, seed = args.rollout
        rollout(endpoint, model, out, int(seed))
        return 0
    if not args.out:
        parser.error("--out <folder> is required")
    import torch
    # --config-only writes the run file for the GPU machine, wherever it runs.
    device = "cuda" if (torch.cuda.is_available() or args.config_only) and not args.tiny else "cpu"
    seq = args.seq or (256 if args.tiny else 2048)
    steps = args.steps or (3 if args.tiny else 20)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()
    make_base(os.path.join(out, "base"), "tiny" if args.tiny else "qwen3-0.6b")
    write_rows(os.path.join(out, "rows.jsonl"), seq, 32)
    config = run_file(out, seq, device, steps)
    say(event="base", path=os.path.join(out, "base"), device=device, seq=seq, seconds=round(time.monotonic() - t0, 1))
    if args.config_only:
        say(event="config", run_file=os.path.join(out, "sft.run.json"),
            plan=f"node dist/cli.js train --config {os.path.join(out, 'sft.run.json')} --dry-run")
        return 0

    sft = trainer("sft", config, os.path.join(out, "sft.log"))
    steps_ev = [e for e in sft if e["event"] == "step"]
    speeds = [e["tokens_per_s"] for e in steps_ev[2:] or steps_ev if e.get("tokens_per_s")]
    peak = max((e.get("peak_memory_bytes", 0) for e in steps_ev), default=0) / 2 ** 30
    say(event="sft", steps=len(steps_ev), first_loss=steps_ev[0]["loss"], last_loss=steps_ev[-1]["loss"],
        tokens_per_s=round(statistics.median(speeds), 1), peak_gib=round(peak, 2))
    if device == "cuda":
        torch.cuda.empty_cache()

    serve_log = open(os.path.join(out, "serve.log"), "w")  # noqa: SIM115 (closed with the server)
    server = subprocess.Popen([sys.executable, "-m", "trainer.serve_hf", "--model", os.path.join(out, "base"),
                               "--port", "0", "--device", device,
                               "--dtype", "bfloat16" if device == "cuda" else "float32"],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=serve_log,
                              text=True)
    try:
        assert server.stdout is not None
        url = json.loads(server.stdout.readline())["url"]
        grpo_config = os.path.join(out, "grpo.json")
        with open(grpo_config, "w", encoding="utf-8") as f:
            json.dump({"out_dir": "grpo", "device": device, "model": {"path": "base"}, "lora": {"rank": 16},
                       "optim": {"lr": 0.0002, "schedule": "constant"},
                       "train": {"micro_batch_size": 4, "precision": "bf16", "gradient_checkpointing": True,
                                 "export_at_end": False},
                       "grpo": {"iterations": 1},
                       "rollouts": {"server_url": url, "command": [sys.executable, os.path.abspath(__file__),
                                                                   "--rollout", "{endpoint}", "{model}", "{out}",
                                                                   "{seed}"]}}, f, indent=1)
        grpo = trainer("grpo", grpo_config, os.path.join(out, "grpo.log"))
    finally:
        server.terminate()
        server.wait(timeout=60)
        server.stdout.close()
        serve_log.close()
    served = next(e for e in grpo if e["event"] == "served")
    iteration = next(e for e in grpo if e["event"] == "iteration")
    say(event="grpo", served_seconds=served["seconds"], iteration_seconds=iteration["seconds"],
        act_tokens=iteration["act_tokens"], sampler_gap=iteration.get("sampler_gap"))
    summary = {"event": "summary", "device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
               "torch": torch.__version__, "sft_tokens_per_s": round(statistics.median(speeds), 1),
               "sft_peak_gib": round(peak, 2), "grpo_iteration_seconds": iteration["seconds"],
               "adapter_load_seconds": served["seconds"], "sampler_gap": iteration.get("sampler_gap"),
               "seconds": round(time.monotonic() - t0, 1)}
    if args.plan_gib:
        summary["plan_gib"] = args.plan_gib
        summary["peak_over_plan"] = round(peak / args.plan_gib, 3)
        summary["within_15_percent"] = abs(peak / args.plan_gib - 1) <= 0.15
    say(**summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
