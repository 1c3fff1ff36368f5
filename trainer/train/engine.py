"""One optimizer step over micro-batches, the same for every objective, on one device or under DDP.

Losses are sums over tokens divided by the token count of the *global* batch (known to every rank,
since every rank reads all rows), then multiplied by the world size because DDP averages gradients:
the update is the same whether the batch runs in one process, in several micro-batches, or on N
ranks. A rank with fewer rows than the others runs zero-weighted passes so that every rank takes part
in every gradient all-reduce.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from torch.nn.parallel import DistributedDataParallel

from ..data.batches import Batch
from ..data.encode import Example
from ..model.llama import LlamaForCausalLM
from ..objectives import TokenLogProbs

if TYPE_CHECKING:
    from ..config_types import TrainerConfig
    from ..runtime import Runtime
    from .common import Policy

#: ``(batch, target log-probs) -> (loss, {metric: sum})``, one per kind of micro-batch.
LossFn = Callable[[Batch, torch.Tensor], tuple[torch.Tensor, dict[str, Any]]]


def trainable_of(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


class _Padding(Example):
    """Stands in for a row on a rank that has run out of rows (its loss is multiplied by 0). An
    Example, so that a Batch finds every field it reads (history_spans, loss_tokens)."""

    __slots__ = ()

    def __init__(self, pad_id: int) -> None:
        super().__init__(-1, {"id": "(padding)", "role": "", "source": ""}, [pad_id], [pad_id])


class Engine:
    def __init__(self, model: Policy, cfg: TrainerConfig, runtime: Runtime, pad_id: int,
                 temperature: float = 1.0, row_temperatures: bool = False) -> None:
        """``temperature``: what log-probs divide logits by; with ``row_temperatures`` (GRPO) a row's
        own ``temperature`` takes its place (SFT's NLL is always at temperature 1)."""
        self.rt = runtime
        self.row_temperatures = row_temperatures
        self.model = model.to(runtime.device)
        self.module = TokenLogProbs(self.model, temperature)
        self.forward: DistributedDataParallel | TokenLogProbs
        if runtime.distributed:
            ids = [runtime.device.index] if runtime.device.type == "cuda" else None
            self.forward = DistributedDataParallel(self.module, device_ids=ids, broadcast_buffers=False)
        else:
            self.forward = self.module
        optim = cfg.optim
        # Only what trains (LoRA freezes the base): matrices decay, norms and biases never do.
        trainable = trainable_of(self.model)
        decay = [p for p in trainable if p.dim() >= 2]
        no_decay = [p for p in trainable if p.dim() < 2]
        self.optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": optim.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=optim.lr, betas=(optim.betas[0], optim.betas[1]), eps=optim.eps)  # the schema: 2 items
        self.grad_clip = optim.grad_clip
        self.bf16 = cfg.train.precision == "bf16" and runtime.device.type == "cuda"
        self.pad_id = pad_id
        #: ``train.packing``: whether micro-batches are packed (else every row is padded to the longest),
        #: and ``train.pack_tokens``. Only the studio's own model packs (a transformers model's attention
        #: would cross the rows).
        self.packing = cfg.train.packing and isinstance(model, LlamaForCausalLM)
        self.pack_tokens = cfg.train.pack_tokens
        #: With sdpa each packed row's attention is a call of its own, so by default a micro-batch packs
        #: into one sequence; the eager mask spans the whole sequence (quadratic), so the longest row.
        self.pack_whole = isinstance(model, LlamaForCausalLM) and model.attention == "sdpa"

    def _autocast(self):
        if self.bf16:
            return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def pack_budget(self, examples: list[Example]) -> int | None:
        """The most tokens of a packed sequence of ``examples`` (``train.pack_tokens``, else the default
        above); None when rows are padded."""
        if not self.packing:
            return None
        if self.pack_tokens is not None:
            return self.pack_tokens
        return sum(e.length - 1 for e in examples) if self.pack_whole else max(e.length - 1 for e in examples)

    def batch(self, examples: list[Example]) -> Batch:
        return Batch(examples, self.pad_id, self.rt.device, self.pack_budget(examples))

    def temperatures(self, b: Batch, default: float) -> torch.Tensor | None:
        """Per target token, its row's sampling temperature (``default`` for a row without one); None
        when rows' temperatures are off or no row of the batch carries one (computed as before)."""
        if not self.row_temperatures or all(e.temperature is None for e in b.examples):
            return None
        return b.per_row([default if e.temperature is None else float(e.temperature) for e in b.examples])

    @torch.no_grad()
    def logprobs_no_grad(self, examples: list[Example], micro_size: int,
                         module: TokenLogProbs | None = None) -> dict[int, torch.Tensor]:
        """Per-example 1-D tensors of target log-probs (old policy or reference), on the device."""
        module = module or self.module
        was_training = module.training
        module.eval()
        out = {}
        for chunk in [examples[i:i + micro_size] for i in range(0, len(examples), micro_size)]:
            b = self.batch(chunk)
            with self._autocast():
                logp = module(b.input_ids, b.mask, b.labels, self.temperatures(b, module.temperature), b.packing).float()
            for e, part in zip(b.examples, torch.split(logp, [e.loss_tokens for e in b.examples]), strict=True):
                out[e.index] = part
        module.train(was_training)
        return out

    def step(self, micro: list[tuple[str, list[Example]]], loss_fns: dict[str, LossFn], metric_keys: list[str],
             lr: float) -> tuple[dict[str, float], dict[str, Any]]:
        """One optimizer step. ``micro``: list of (kind, examples) with the same length on every rank;
        ``loss_fns[kind](batch, logp) -> (loss, {metric: sum})``. Returns summed metrics over ranks."""
        t0 = time.monotonic()
        self.model.train()
        sums = {k: 0.0 for k in metric_keys}
        input_tokens = 0
        for i, (kind, examples) in enumerate(micro):
            last = i == len(micro) - 1
            ddp = self.forward if isinstance(self.forward, DistributedDataParallel) else None  # rt.distributed
            sync = contextlib.nullcontext() if last or ddp is None else ddp.no_sync()
            with sync:
                padding = not examples
                b = self.batch([_Padding(self.pad_id)] if padding else examples)
                with self._autocast():
                    logp = self.forward(b.input_ids, b.mask, b.labels, self.temperatures(b, self.module.temperature),
                                        b.packing).float()
                if padding:
                    loss = logp.sum() * 0.0
                else:
                    loss, values = loss_fns[kind](b, logp)
                    for k, v in values.items():
                        sums[k] += float(v)
                    input_tokens += b.num_input_tokens
                loss.backward()
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        max_norm = self.grad_clip if self.grad_clip is not None else float("inf")
        grad_norm = float(torch.nn.utils.clip_grad_norm_(trainable_of(self.model), max_norm))
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        keys = sorted(sums)
        reduced = torch.tensor([sums[k] for k in keys] + [float(input_tokens)], dtype=torch.float64, device=self.rt.device)
        self.rt.all_reduce_sum(reduced)
        values = dict(zip(keys, reduced.tolist(), strict=False))  # the last value is input_tokens, not a metric
        seconds = time.monotonic() - t0
        tokens = reduced[-1].item()
        info = {"grad_norm": grad_norm, "lr": lr, "tokens": int(tokens), "seconds": seconds,
                "tokens_per_s": tokens / seconds if seconds > 0 else None}
        if self.rt.device.type == "cuda":
            info["peak_memory_bytes"] = int(torch.cuda.max_memory_allocated(self.rt.device))
        return values, info
