"""Training throughput: ``python3 -m trainer.bench [--arch tiny|5m|qwen0.5b] [--seq N] [--batch N]
[--micro N] [--steps N] [--device D] [--threads N] [--precision fp32|bf16] [--rows SHAPES.jsonl]
[--packing off|on|both]``.

Random weights and random tokens (a prompt, then a 64-token target; or with ``--rows`` rows of the
shapes a JSONL file gives, ``{"prompt": n, "target": n, "history": [[start, end], ...]}`` a line,
each step drawing ``--batch`` of them as ``sft`` draws its rows), real optimizer steps through the
same engine as ``sft``; prints one JSON line with tokens/s (the rows' real tokens through the model,
padding not counted, median over the steps after the first two).

``--packing both`` runs the padded and the packed engine side by side in one process (two copies of
the same model, alternating which goes first each step) and reports each one's figures, and the
loss of the first step's batch both ways on the same weights (``loss_difference``).
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
from .data.batches import micro_batches, step_indices  # noqa: E402
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
#: The most row shapes ``--rows`` reads.
MAX_SHAPES = 100_000


def read_shapes(path: str, vocab_size: int) -> list[Example]:
    """Rows of random tokens with the shapes of ``path`` (see the module's doc)."""
    g = torch.Generator().manual_seed(0)
    rows = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i >= MAX_SHAPES:
                raise SystemExit(f"{path}: more than {MAX_SHAPES} row shapes")
            shape = json.loads(line)
            prompt = torch.randint(1, vocab_size, (int(shape["prompt"]),), generator=g).tolist()
            target = torch.randint(1, vocab_size, (int(shape["target"]),), generator=g).tolist()
            spans = [(int(a), int(b)) for a, b in shape.get("history", [])]
            rows.append(Example(i, {"id": f"bench-{i}", "role": shape.get("role", "act"), "source": "bench"},
                                prompt, target, spans))
    if not rows:
        raise SystemExit(f"{path}: no row shapes")
    return rows


def micro_loss(engine: Engine, micro: list[tuple[str, list[Example]]]) -> float:
    """The mean NLL of a step's target tokens, as ``engine`` computes it (no update)."""
    total, count = 0.0, 0
    with torch.no_grad():
        for _, examples in micro:
            b = engine.batch(examples)
            logp = engine.forward(b.input_ids, b.mask, b.labels, None, b.packing).double()
            total -= float(logp.sum())
            count += b.num_tokens
    return total / count


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
    p.add_argument("--rows", help="a JSONL file of row shapes (instead of --seq)")
    p.add_argument("--packing", default="off", choices=["off", "on", "both"])
    args = p.parse_args(argv)
    tuned = allocator.tune()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = choose_device(args.device)
    torch.manual_seed(0)
    config = ModelConfig(eos_token_id=0, pad_token_id=0, **ARCHITECTURES[args.arch])
    model = LlamaForCausalLM(config, attention=args.attention)
    modes = ["padded", "packed"] if args.packing == "both" else ["packed" if args.packing == "on" else "padded"]
    engines = {}
    for mode in modes:  # each mode trains its own copy of the same initial weights
        copy = LlamaForCausalLM(config, attention=args.attention)
        copy.load_state_dict(model.state_dict())
        train = TrainSection(precision=args.precision, packing=mode == "packed")
        engines[mode] = Engine(copy, TrainerConfig(optim=_OPTIM, train=train), Runtime(device), pad_id=0)
    g = torch.Generator().manual_seed(0)
    if args.rows:
        pool = read_shapes(args.rows, config.vocab_size)
    else:
        pool = [Example(i, {"id": f"bench-{i}", "role": "act", "source": "bench"},
                        torch.randint(1, config.vocab_size, (args.seq - 64,), generator=g).tolist(),
                        torch.randint(1, config.vocab_size, (64,), generator=g).tolist()) for i in range(args.batch)]

    def step_micro(step: int) -> list[tuple[str, list[Example]]]:
        if not args.rows:  # the same rows every step, in order
            return [("sft", pool[i:i + args.micro]) for i in range(0, len(pool), args.micro)]
        rows = [pool[i] for i in step_indices(len(pool), args.batch, 0, step)]
        return [("sft", mb) for mb in micro_batches(rows, args.micro)]

    losses = {mode: micro_loss(e, step_micro(0)) for mode, e in engines.items()} if len(modes) > 1 else {}
    rates: dict[str, list[float]] = {m: [] for m in modes}
    seconds: dict[str, list[float]] = {m: [] for m in modes}
    for step in range(args.steps):
        micro = step_micro(step)
        n_tokens = sum(e.loss_tokens for _, mb in micro for e in mb)

        def loss_fn(b: Batch, logp: torch.Tensor, n_tokens: int = n_tokens) -> tuple[torch.Tensor, dict[str, Any]]:
            return -logp.sum() / n_tokens, {}

        for mode in modes if step % 2 == 0 else modes[::-1]:
            if device.type == "cuda":
                torch.cuda.synchronize()
            _, info = engines[mode].step(micro, {"sft": loss_fn}, [], 1e-4)
            if device.type == "cuda":
                torch.cuda.synchronize()
            if step >= 2:
                rates[mode].append(info["tokens"] / info["seconds"])
                seconds[mode].append(info["seconds"])

    def median(xs: list[float], digits: int) -> float | None:
        return round(statistics.median(xs), digits) if xs else None

    first = modes[0]
    result = {"arch": args.arch, "parameters": sum(p.numel() for p in model.parameters()), "device": str(device),
              "threads": torch.get_num_threads(), "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
              "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS"), "seq": args.seq, "batch": args.batch,
              "micro": args.micro, "precision": args.precision, "attention": model.attention, "rows": args.rows,
              "allocator": tuned, "packing": args.packing, "tokens_per_s": median(rates[first], 1),
              "seconds_per_step": median(seconds[first], 3)}
    if len(modes) > 1:
        result["modes"] = {m: {"tokens_per_s": median(rates[m], 1), "seconds_per_step": median(seconds[m], 3),
                               "step_seconds": [round(x, 4) for x in seconds[m]]} for m in modes}
        result["loss"] = losses
        result["loss_difference"] = abs(losses["packed"] - losses["padded"])
    if device.type == "cuda":
        result["max_memory_gib"] = round(torch.cuda.max_memory_allocated(device) / 2 ** 30, 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
