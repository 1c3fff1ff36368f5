"""Training throughput: ``python3 -m trainer.bench [--arch tiny|5m|qwen0.5b] [--seq N] [--batch N]
[--micro N] [--steps N] [--device D] [--threads N] [--precision fp32|bf16]``.

Random weights and random tokens (a prompt, then a 64-token target), real optimizer steps through the
same engine as ``sft``; prints one JSON line with tokens/s (prompt + target tokens through the model,
median over the steps after the first two).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
from typing import TYPE_CHECKING, Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

from . import allocator  # noqa: E402
from .config_types import OptimSection, TrainerConfig, TrainSection  # noqa: E402
from .data.encode import Example  # noqa: E402
from .model import LlamaForCausalLM, ModelConfig  # noqa: E402
from .runtime import Runtime, choose_device  # noqa: E402
from .train.engine import Engine  # noqa: E402

if TYPE_CHECKING:
    from .data.batches import Batch

ARCHITECTURES: dict[str, dict[str, Any]] = {
    "tiny": dict(vocab_size=1024, hidden_size=128, intermediate_size=344, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2),
    # The default policy's recipe (training/default/recipe.json).
    "default": dict(vocab_size=3072, hidden_size=192, intermediate_size=512, num_hidden_layers=4, num_attention_heads=6,
                    num_key_value_heads=2, tie_word_embeddings=True),
    "5m": dict(vocab_size=1024, hidden_size=256, intermediate_size=688, num_hidden_layers=6, num_attention_heads=8,
               num_key_value_heads=4),
    "qwen0.5b": dict(vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                     num_key_value_heads=2, head_dim=64, rope_theta=1000000.0, tie_word_embeddings=True),
}
_OPTIM = OptimSection(lr=1e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.0, grad_clip=1.0)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python3 -m trainer.bench")
    p.add_argument("--arch", default="tiny", choices=sorted(ARCHITECTURES))
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--micro", type=int, default=8)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--device", default="auto")
    p.add_argument("--threads", type=int)
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--attention", default="sdpa", choices=["eager", "sdpa"])
    args = p.parse_args(argv)
    tuned = allocator.tune()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = choose_device(args.device)
    torch.manual_seed(0)
    config = ModelConfig(eos_token_id=0, pad_token_id=0, **ARCHITECTURES[args.arch])
    model = LlamaForCausalLM(config, attention=args.attention)
    engine = Engine(model, TrainerConfig(optim=_OPTIM, train=TrainSection(precision=args.precision)), Runtime(device),
                    pad_id=0)
    g = torch.Generator().manual_seed(0)
    rows = [Example(i, {"id": f"bench-{i}", "role": "act", "source": "bench"},
                    torch.randint(1, config.vocab_size, (args.seq - 64,), generator=g).tolist(),
                    torch.randint(1, config.vocab_size, (64,), generator=g).tolist()) for i in range(args.batch)]
    n_tokens = sum(len(r.target_ids) for r in rows)

    def loss_fn(b: Batch, logp: torch.Tensor) -> tuple[torch.Tensor, dict[str, Any]]:
        return -logp.sum() / n_tokens, {}

    micro = [("sft", rows[i:i + args.micro]) for i in range(0, len(rows), args.micro)]
    rates = []
    seconds = []
    for step in range(args.steps):
        if device.type == "cuda":
            torch.cuda.synchronize()
        _, info = engine.step(micro, {"sft": loss_fn}, [], 1e-4)
        if device.type == "cuda":
            torch.cuda.synchronize()
        if step >= 2:
            rates.append(info["tokens"] / info["seconds"])
            seconds.append(info["seconds"])
    result = {"arch": args.arch, "parameters": sum(p.numel() for p in model.parameters()), "device": str(device),
              "threads": torch.get_num_threads(), "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
              "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS"), "seq": args.seq, "batch": args.batch,
              "micro": args.micro, "precision": args.precision, "attention": model.attention,
              "allocator": tuned, "tokens_per_s": round(statistics.median(rates), 1) if rates else None,
              "seconds_per_step": round(statistics.median(seconds), 3) if seconds else None}
    if device.type == "cuda":
        result["max_memory_gib"] = round(torch.cuda.max_memory_allocated(device) / 2 ** 30, 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
