"""Supervised warm start: token-mean NLL of the targets (act and rehearse rows), each row weighted."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import torch

from ..data.batches import micro_batches, micro_count, rank_share, step_indices
from ..data.load import load_examples
from ..errors import config_error
from ..model.llama import LlamaForCausalLM
from .checkpoint import save_checkpoint
from .common import check_fingerprint, fingerprint, finish, open_run, replicas_identical
from .engine import Engine
from .schedule import learning_rate

if TYPE_CHECKING:
    from ..config_types import TrainerConfig
    from ..data.batches import Batch
    from ..events import EventStream
    from ..runtime import Runtime
    from ..tokenizer.tokenizer import Tokenizer
    from .common import Policy
    from .engine import LossFn

ROLES = ("act", "rehearse")
# What decides which rows each step sees, and the learning rate at each step.
_FINGERPRINT = ("seed", "data.train", "data.max_length", "data.roles", "train.batch_size",
                "train.steps", "optim.lr", "optim.schedule", "optim.warmup_steps", "optim.min_lr_ratio")


def role_sums(b: Batch, logp: torch.Tensor, prefix: str = "") -> dict[str, float]:
    """Per-role token counts, row counts and NLL sums of a micro-batch (metric keys ``<role>.<name>``)."""
    out: dict[str, float] = {}
    roles = b.per_row([ROLES.index(e.role) for e in b.examples], dtype=torch.long)
    for i, role in enumerate(ROLES):
        mask = roles == i
        out[f"{prefix}{role}.tokens"] = int(mask.sum())
        out[f"{prefix}{role}.rows"] = sum(1 for e in b.examples if e.role == role)
        out[f"{prefix}{role}.nll"] = float(-(logp.detach()[mask]).sum())
    return out


def sft_loss(global_tokens: int, world: int) -> LossFn:
    def loss_fn(b: Batch, logp: torch.Tensor) -> tuple[torch.Tensor, dict[str, Any]]:
        weights = b.per_row([e.weight for e in b.examples])
        weighted = -(weights * logp).sum()
        values = role_sums(b, logp)
        values["loss"] = float(weighted.detach())
        return weighted / global_tokens * world, values
    return loss_fn


def role_report(values: dict[str, float], prefix: str = "") -> dict[str, dict[str, Any]]:
    report = {}
    for role in ROLES:
        tokens = values[f"{prefix}{role}.tokens"]
        if tokens:
            report[role] = {"rows": int(values[f"{prefix}{role}.rows"]), "tokens": int(tokens),
                            "loss": values[f"{prefix}{role}.nll"] / tokens}
    return report


def metric_keys(prefix: str = "") -> list[str]:
    return [f"{prefix}{r}.{k}" for r in ROLES for k in ("tokens", "rows", "nll")]


def probe_setup(cfg: TrainerConfig, model: Policy,
                tokenizer_dir: str) -> tuple[list[dict[str, Any]], set[int]] | None:
    """``(rows, stop ids)`` of the copy probe, or None when ``probe.every`` is 0 or no rows are given."""
    probe = cfg.probe
    if not probe.every or not probe.rows:
        return None
    if not isinstance(model, LlamaForCausalLM):
        raise config_error("probe.every > 0 decodes with the studio's own model code; a transformers (or LoRA) "
                           "run has none: set probe.every to 0.")
    from ..commands.generate import stop_ids
    from ..data.rows import read_rows
    from ..probe import probe_rows
    rows = probe_rows(read_rows(probe.rows), probe.max_rows)
    return rows, stop_ids(tokenizer_dir, model)


def emit_probe(cfg: TrainerConfig, events: EventStream, runtime: Runtime, model: Policy, tokenizer: Tokenizer,
               setup: tuple[list[dict[str, Any]], set[int]], step: int) -> float:
    """Runs the probe on rank 0 and emits its event; returns the seconds it took (0 elsewhere)."""
    if setup is None or not runtime.is_main:
        return 0.0
    from ..probe import run_probe
    assert isinstance(model, LlamaForCausalLM), "probe_setup refuses the transformers backend"
    probe = cfg.probe
    rows, stop = setup
    result = run_probe(model, tokenizer, rows, stop, probe.max_new_tokens, probe.greedy_rows)
    events.emit("probe", step=step, **result)
    return result["seconds"]


def run_sft(cfg: TrainerConfig, events: EventStream, runtime: Runtime) -> None:
    model, tokenizer, tokenizer_dir, state = open_run(cfg, events, runtime, "sft")
    data = cfg.data
    examples, summary = load_examples(data.train, tokenizer, data.max_length, data.roles)
    events.emit("data", **summary)
    pad_id = getattr(model.config, "pad_token_id", None) or 0
    engine = Engine(model, cfg, runtime, pad_id)
    train = cfg.train
    steps, batch_size, seed = train.steps, train.batch_size, cfg.seed
    print_fp = fingerprint(cfg, _FINGERPRINT)
    start = 0
    if state is not None:
        engine.optimizer.load_state_dict(state["optimizer"])
        check_fingerprint(events, state, print_fp)
        start = state["step"]
    keys = metric_keys() + ["loss"]
    probe = probe_setup(cfg, model, tokenizer_dir)
    max_seconds = train.max_seconds
    t0 = time.monotonic()
    probe_seconds = 0.0  # not counted against train.max_seconds
    for step in range(start, steps):
        rows = [examples[i] for i in step_indices(len(examples), batch_size, seed, step)]
        global_tokens = sum(e.loss_tokens for e in rows)
        local = rank_share(rows, runtime.rank, runtime.world)
        count = micro_count(len(rows), runtime.world, train.micro_batch_size)
        micro = [("sft", mb) for mb in micro_batches(local, train.micro_batch_size, count)]
        lr = learning_rate(cfg.optim, step, steps)
        values, info = engine.step(micro, {"sft": sft_loss(global_tokens, runtime.world)}, keys, lr)
        done = step + 1
        # Under torchrun every rank must stop at the same step: rank 0's clock decides.
        out_of_time = max_seconds is not None and _agree(runtime, time.monotonic() - t0 - probe_seconds >= max_seconds)
        last = done == steps or out_of_time
        if done % train.log_every == 0 or last:
            events.emit("step", command="sft", step=done, steps=steps, epoch=round(done * batch_size / len(examples), 4),
                        loss=values["loss"] / global_tokens, roles=role_report(values), **info)
        if probe is not None and (done % cfg.probe.every == 0 or last):
            probe_seconds += emit_probe(cfg, events, runtime, engine.model, tokenizer, probe, done)
        if done % train.checkpoint_every == 0 or last:
            if runtime.is_main:
                assert cfg.out_dir, "open_run requires out_dir"
                loop = {"data_position": done * batch_size, "fingerprint": print_fp}
                path = save_checkpoint(cfg.out_dir, done, model, engine.optimizer, loop, tokenizer, tokenizer_dir,
                                       train.keep_checkpoints)
                events.emit("checkpoint", step=done, path=path)
            runtime.barrier()
        if out_of_time:
            events.log(f"train.max_seconds ({max_seconds}) reached after step {done} of {steps}")
            steps = done
            break
    identical = replicas_identical(model, runtime)
    written = finish(cfg, events, runtime, model, tokenizer, tokenizer_dir)
    events.emit("done", command="sft", steps=steps, replicas_identical=identical, **written)


def _agree(runtime, flag):
    """Rank 0's ``flag`` on every rank."""
    if not runtime.distributed:
        return flag
    value = torch.tensor([1.0 if flag else 0.0], device=runtime.device)
    import torch.distributed as dist
    dist.broadcast(value, src=0)
    return bool(value.item())
