"""Role-wise GRPO with world rehearsal (EnvACE), plus the optional grounding term.

Each iteration: export the current policy, get the iteration's rollout rows (every act turn and every
rehearsal of n imagined episodes per task, each with its episode's reward), compute per-role group
baselines, record the log-probs of the policy that generated them (the current weights, before any
update), then run ``ppo_epochs`` passes of clipped updates over mini-batches. Rows with source
``actual`` (and grpo.grounding.rows) feed the grounding NLL when grpo.grounding.coef > 0.
"""
from __future__ import annotations

import os
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..data.batches import epoch_permutation, micro_batches, micro_count, rank_share, step_indices
from ..data.encode import encode_rows
from ..data.rows import read_rows
from ..errors import data_error
from ..export import export_model_folder
from ..model.folder import load_model
from ..objectives import TokenLogProbs, compute_advantages, reward_of
from .checkpoint import save_checkpoint
from .common import attention_impl, check_fingerprint, fingerprint, finish, open_run, replicas_identical
from .engine import Engine
from .grpo_objective import ROLES, grounding_loss, metric_keys, policy_loss, step_report
from .rollouts import RolloutSource
from .schedule import learning_rate

if TYPE_CHECKING:
    from ..config_types import TrainerConfig
    from ..data.encode import Example
    from ..events import EventStream
    from ..runtime import Runtime
    from ..tokenizer.tokenizer import Tokenizer

_FINGERPRINT = ("seed", "rollouts", "data.max_length", "data.roles", "grpo")


def split_rows(rows: list[dict[str, Any]],
               roles: Sequence[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """``(rollout rows, actual rehearse rows, ignored count)``; rollout rows must carry a reward."""
    policy = [r for r in rows if r["source"] == "rollout" and r["role"] in roles]
    actual = [r for r in rows if r["source"] == "actual" and r["role"] == "rehearse"]
    missing = [r["_where"] for r in policy if r.get("reward") is None]
    if missing:
        raise data_error(f"{len(missing)} rollout rows have no reward (first: {missing[0]}); GRPO needs each "
                         "rollout row's episode reward.")
    no_group = [r["_where"] for r in policy if not r.get("group")]
    if no_group:
        raise data_error(f"{len(no_group)} rollout rows have no group (first: {no_group[0]}); the group (task x "
                         "iteration) decides the baselines.")
    return policy, actual, len(rows) - len(policy) - len(actual)


def grounding_pool(paths: Sequence[str], tokenizer: Tokenizer, max_length: int) -> list[Example]:
    rows = [r for r in read_rows(paths) if r["source"] == "actual" and r["role"] == "rehearse"] if paths else []
    return encode_rows(rows, tokenizer, max_length)[0]


def advantage_signal(examples: list[Example]) -> dict[str, int]:
    """How much of an iteration can teach: rows and groups whose advantages are not all zero (a group
    whose episodes all earned the same reward has none; an iteration with none leaves the policy as is)."""
    groups = {(e.group, e.role) for e in examples}
    live = {(e.group, e.role) for e in examples if e.advantage != 0.0}
    return {"nonzero_rows": sum(1 for e in examples if e.advantage != 0.0), "rows": len(examples),
            "groups_with_signal": len(live), "groups": len(groups)}


def role_summary(examples: list[Example]) -> dict[str, dict[str, Any]]:
    out = {}
    for role in ROLES:
        members = [e for e in examples if e.role == role]
        if members:
            out[role] = {"rows": len(members), "reward_mean": sum(reward_of(e) for e in members) / len(members),
                         "groups": len({e.group for e in members})}
    return out


class GrpoRun:
    def __init__(self, cfg: TrainerConfig, events: EventStream, runtime: Runtime) -> None:
        self.cfg, self.events, self.rt = cfg, events, runtime
        self.grpo = cfg.grpo
        self.source = RolloutSource(cfg, events.stderr)
        self.model, self.tokenizer, self.tokenizer_dir, state = open_run(cfg, events, runtime, "grpo")
        pad = self.model.config.pad_token_id
        self.engine = Engine(self.model, cfg, runtime, pad if pad is not None else 0, self.grpo.temperature)
        self.reference = None
        if self.grpo.kl_coef > 0:
            assert cfg.model.path, "open_run requires model.path"
            ref_model = load_model(cfg.model.path, attention=attention_impl(cfg)).to(runtime.device)
            for p in ref_model.parameters():
                p.requires_grad_(False)
            self.reference = TokenLogProbs(ref_model, self.grpo.temperature)
        self.coef = self.grpo.grounding.coef
        self.static_pool = grounding_pool(self.grpo.grounding.rows, self.tokenizer, cfg.data.max_length) if self.coef > 0 else []
        self.fingerprint = fingerprint(cfg, _FINGERPRINT)
        self.iteration, self.step = 0, 0
        if state is not None:
            self.engine.optimizer.load_state_dict(state["optimizer"])
            check_fingerprint(events, state, self.fingerprint)
            self.iteration, self.step = state["loop"]["iteration"], state["step"]

    def policy_for_rollouts(self, it: int) -> str:
        """Exports the current policy for the rollout command (rank 0); returns its folder."""
        folder = os.path.join(self.source.iteration_dir(it), "model")
        if self.rt.is_main and self.source.needs_export:
            summary = export_model_folder(self.model, self.tokenizer, self.tokenizer_dir, folder, self.cfg.export)
            self.events.emit("export", iteration=it, **summary)
            previous = os.path.join(self.source.iteration_dir(it - 1), "model")
            if it > 0 and not self.cfg.rollouts.keep_models and os.path.isdir(previous):
                shutil.rmtree(previous, ignore_errors=True)
        return folder

    def load_iteration(self, it: int) -> tuple[list[Example], list[Example]]:
        model_dir = self.policy_for_rollouts(it)
        seconds = 0.0
        if self.rt.is_main or not self.source.needs_export:
            path, seconds = self.source.rows_for(it, model_dir)
        self.rt.barrier()
        if self.source.needs_export:
            path = os.path.join(self.source.iteration_dir(it), "rows.jsonl")
        rows = read_rows([path])
        policy_rows, actual_rows, ignored = split_rows(rows, self.cfg.data.roles)
        examples, dropped = encode_rows(policy_rows, self.tokenizer, self.cfg.data.max_length)
        compute_advantages(examples + dropped, self.grpo.norm_adv_by_std)  # baselines see every row
        if not examples:
            raise data_error(f"Iteration {it}: {path} has no trainable rollout rows ({len(rows)} rows, "
                             f"{len(dropped)} too long).")
        pool = self.static_pool + (encode_rows(actual_rows, self.tokenizer, self.cfg.data.max_length)[0] if self.coef > 0 else [])
        signal = advantage_signal(examples)
        self.events.emit("rollouts", iteration=it, path=path, rows=len(rows), rollout_rows=len(policy_rows),
                         actual_rows=len(actual_rows), ignored_rows=ignored, dropped_too_long=len(dropped),
                         groups=len({e.group for e in examples + dropped}), roles=role_summary(examples + dropped),
                         advantages=signal, sources=dict(Counter(r["source"] for r in rows)), seconds=round(seconds, 3))
        if signal["nonzero_rows"] == 0:
            self.events.emit("warning", code="GRPO_NO_SIGNAL", iteration=it,
                             message=f"Iteration {it}: every trainable row's advantage is 0 (in each group every "
                                     "episode earned the same reward), so this iteration cannot change the policy. "
                                     "Sample more diverse episodes (more per group, a higher temperature) or check "
                                     "that each episode samples with its own seed.")
        return examples, pool

    def plan(self, examples: list[Example], it: int) -> list[tuple[int, list[Example]]]:
        """Mini-batches of every PPO epoch (a pure function of seed, iteration and epoch)."""
        size = self.grpo.mini_batch_size or len(examples)
        out = []
        for epoch in range(self.grpo.ppo_epochs):
            order = epoch_permutation(len(examples), self.cfg.seed * 7919 + it, epoch)
            rows = [examples[i] for i in order]
            out += [(epoch, rows[i:i + size]) for i in range(0, len(rows), size)]
        return out

    def run_iteration(self, it: int) -> None:
        t0 = time.monotonic()
        examples, pool = self.load_iteration(it)
        plan = self.plan(examples, it)
        micro = self.cfg.train.micro_batch_size
        by_index = {e.index: e for _, mb in plan for e in rank_share(mb, self.rt.rank, self.rt.world)}
        needed = [by_index[k] for k in sorted(by_index)]
        old = self.engine.logprobs_no_grad(needed, micro)
        ref = self.engine.logprobs_no_grad(needed, micro, self.reference) if self.reference is not None else None
        lr = learning_rate(self.cfg.optim, it, self.grpo.iterations)
        keys = metric_keys()
        for epoch, mb in plan:
            policy_tokens = sum(e.loss_tokens for e in mb)
            parts = [("policy", b) for b in micro_batches(rank_share(mb, self.rt.rank, self.rt.world), micro,
                                                           micro_count(len(mb), self.rt.world, micro))]
            fns = {"policy": policy_loss(self.grpo, policy_tokens, self.rt.world, old, ref)}
            grounding_tokens = 0
            if self.coef > 0 and pool:
                g_rows = [pool[i] for i in step_indices(len(pool), self.grpo.grounding.batch_size, self.cfg.seed + 1, self.step)]
                grounding_tokens = sum(e.loss_tokens for e in g_rows)
                parts += [("grounding", b) for b in micro_batches(rank_share(g_rows, self.rt.rank, self.rt.world), micro,
                                                                    micro_count(len(g_rows), self.rt.world, micro))]
                fns["grounding"] = grounding_loss(self.coef, grounding_tokens, self.rt.world)
            values, info = self.engine.step(parts, fns, keys, lr)
            self.step += 1
            roles, grounding, loss = step_report(values, mb, self.grpo, policy_tokens, grounding_tokens)
            self.events.emit("step", command="grpo", step=self.step, iteration=it, iterations=self.grpo.iterations,
                             epoch=epoch, loss=loss, roles=roles, grounding=grounding, **info)
        self.events.emit("iteration", iteration=it, steps=len(plan), roles=role_summary(examples),
                         grounding_pool=len(pool), seconds=round(time.monotonic() - t0, 3))

    def run(self) -> None:
        iterations = self.grpo.iterations
        every = self.cfg.train.checkpoint_every
        for it in range(self.iteration, iterations):
            self.run_iteration(it)
            if (it + 1) % every == 0 or it + 1 == iterations:
                if self.rt.is_main:
                    assert self.cfg.out_dir, "open_run requires out_dir"
                    loop = {"iteration": it + 1, "fingerprint": self.fingerprint}
                    path = save_checkpoint(self.cfg.out_dir, self.step, self.model, self.engine.optimizer, loop,
                                           self.tokenizer, self.tokenizer_dir, self.cfg.train.keep_checkpoints)
                    self.events.emit("checkpoint", step=self.step, iteration=it + 1, path=path)
                self.rt.barrier()
        identical = replicas_identical(self.model, self.rt)
        final = finish(self.cfg, self.events, self.rt, self.model, self.tokenizer, self.tokenizer_dir)
        self.events.emit("done", command="grpo", steps=self.step, iterations=iterations, final=final,
                         replicas_identical=identical)


def run_grpo(cfg: TrainerConfig, events: EventStream, runtime: Runtime) -> None:
    GrpoRun(cfg, events, runtime).run()
