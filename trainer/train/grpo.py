"""Role-wise GRPO with world rehearsal (EnvACE), plus the optional grounding term.

Each iteration: export the current policy, get the iteration's rollout rows (every act turn and every
rehearsal of n imagined episodes per task, each with its episode's reward), compute per-role group
baselines, record the log-probs of the policy that generated them (the current weights, before any
update), then run ``ppo_epochs`` passes of clipped updates over mini-batches. Rows with source
``actual`` (and grpo.grounding.rows) feed the grounding NLL when grpo.grounding.coef > 0.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch

from ..data.batches import episodes_of, epoch_permutation, micro_batches, micro_count, rank_share, step_indices
from ..data.encode import encode_rows
from ..data.rows import read_rows
from ..errors import EXIT_RUNTIME, TrainerError, config_error, data_error
from ..export import export_model_folder
from ..model.folder import load_model, match_weights, read_state_dict, save_weights, write_metadata, write_model_folder
from ..model.hf_backend import AdapterOff, HFPolicy, choose_backend, is_adapter_folder, load_hf_policy
from ..model.llama import LlamaForCausalLM
from ..objectives import TokenLogProbs, compute_advantages, reward_of
from .checkpoint import save_checkpoint
from .common import attention_impl, check_fingerprint, fingerprint, finish, open_run, replicas_identical
from .engine import Engine
from .grpo_objective import ROLES, grounding_loss, metric_keys, policy_loss, role_tokens, step_report
from .rollouts import RolloutSource, run_command, substitute
from .schedule import learning_rate
from .served import ServedEngine

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


def advantage_signal(examples: list[Example]) -> dict[str, Any]:
    """How much of an iteration can teach: rows and groups whose advantages are not all zero (a group
    whose episodes all earned the same reward has none; an iteration with none leaves the policy as is).

    The same among *finished* episodes (rows whose episode did not end on a failure, a parse error or a
    limit): which (group, role) sets would still differ, and which rows would still have an advantage,
    with baselines over their finished rows only. Rewards that differ only because some episodes failed
    say little about the choices of the ones that finished."""
    groups = {(e.group, e.role) for e in examples}
    live = {(e.group, e.role) for e in examples if e.advantage != 0.0}
    finished: dict[tuple[str | None, str], list[float]] = {}
    for e in examples:
        if e.finished:
            finished.setdefault((e.group, e.role), []).append(reward_of(e))
    means = {k: sum(v) / len(v) for k, v in finished.items()}
    finished_live = {k for k, v in finished.items() if any(r != v[0] for r in v)}
    finished_rows = sum(len(v) for v in finished.values())
    finished_nonzero = sum(1 for e in examples if e.finished and (e.group, e.role) in finished_live
                           and reward_of(e) != means[(e.group, e.role)])
    return {"nonzero_rows": sum(1 for e in examples if e.advantage != 0.0), "rows": len(examples),
            "groups_with_signal": len(live), "groups": len(groups),
            "finished_rows": finished_rows, "finished_nonzero_rows": finished_nonzero,
            "groups_with_finished_signal": len(finished_live),
            "finished_row_share": round(finished_nonzero / finished_rows, 6) if finished_rows else 0.0,
            "finished_group_share": round(len(finished_live) / len(groups), 6) if groups else 0.0}


def role_summary(examples: list[Example]) -> dict[str, dict[str, Any]]:
    out = {}
    for role in ROLES:
        members = [e for e in examples if e.role == role]
        if members:
            out[role] = {"rows": len(members), "reward_mean": sum(reward_of(e) for e in members) / len(members),
                         "groups": len({e.group for e in members})}
    return out


def sampler_gap(examples: list[Example], old: dict[int, torch.Tensor]) -> dict[str, float | int] | None:
    """How far the serving engine's log-probs of its sampled tokens are from the trainer's own before
    the update (rank 0's rows): ``tokens``, ``mean_abs`` and ``max_abs`` of the difference; None when no
    row carries them. Large values mean the two compute different distributions (another template,
    precision, a stale adapter)."""
    diffs = [(old[e.index][-len(e.target_ids):].float().cpu() - torch.tensor(e.sampler_logprobs)).abs()
             for e in examples if e.sampler_logprobs is not None]
    if not diffs:
        return None
    d = torch.cat(diffs)
    return {"tokens": int(d.numel()), "mean_abs": round(float(d.mean()), 6), "max_abs": round(float(d.max()), 6)}


def check_served_settings(cfg: TrainerConfig, transformers_run: bool, served: bool) -> None:
    """What a transformers (LoRA) GRPO run needs, and what a served engine is for; coded errors otherwise."""
    if not transformers_run:
        if served:
            raise config_error("rollouts.server_url serves a transformers run (lora.rank, or model.backend "
                               "transformers, on a Hugging Face folder the server serves); the studio's own model "
                               "samples its ONNX export instead.")
        return
    if cfg.rollouts.command and not served:
        raise TrainerError("BACKEND_UNSUPPORTED", "A transformers (or LoRA) run has no ONNX export to sample: set "
                           "rollouts.server_url to the OpenAI-compatible server started on its base (vLLM with "
                           "--enable-lora, SGLang, or `python -m trainer.serve_hf`), and sample {endpoint} {model} in "
                           "rollouts.command.")
    lora = cfg.lora.rank > 0 or bool(cfg.model.path and is_adapter_folder(cfg.model.path))
    if served and not lora and not cfg.rollouts.server_model:
        raise config_error("Full fine-tuning through a served engine reloads the server's weights each iteration "
                           "(SGLang's /update_weights_from_disk) and samples them under the name the server gives "
                           "the base: set rollouts.server_model to that name, or set lora.rank.")
    if cfg.validation.command:
        raise TrainerError("BACKEND_UNSUPPORTED", "validation.command exports ONNX policies; a transformers run "
                           "cannot be validated that way yet. Leave validation out (validate the adapter afterwards "
                           "with `rehearse run --policy <server> --model <adapter>`).")
    if cfg.grpo.kl_coef > 0 and cfg.model.path and is_adapter_folder(cfg.model.path):
        raise config_error("grpo.kl_coef > 0 keeps the starting policy as the base without adapters, which is not the "
                           "starting policy of a run that starts from an adapter folder: set kl_coef to 0, or start "
                           "from the base with new adapters.")


class GrpoRun:
    def __init__(self, cfg: TrainerConfig, events: EventStream, runtime: Runtime) -> None:
        self.cfg, self.events, self.rt = cfg, events, runtime
        self.grpo = cfg.grpo
        self.source = RolloutSource(cfg, events.stderr)
        self.served = ServedEngine(cfg.rollouts.server_url, cfg.rollouts.server_api_key_env) \
            if cfg.rollouts.server_url else None
        hf = bool(cfg.model.path) and choose_backend(cfg, cfg.model.path or "") == "transformers"
        check_served_settings(cfg, hf, self.served is not None)
        self.model, self.tokenizer, self.tokenizer_dir, state = open_run(cfg, events, runtime, "grpo")
        pad = getattr(self.model.config, "pad_token_id", None)
        self.engine = Engine(self.model, cfg, runtime, pad if pad is not None else 0, self.grpo.temperature,
                             row_temperatures=True)
        self.reference = None
        if self.grpo.kl_coef > 0:
            assert cfg.model.path, "open_run requires model.path"
            if isinstance(self.model, HFPolicy) and self.model.lora:
                # The starting policy is the base without the new adapters (check_served_settings).
                self.reference = TokenLogProbs(AdapterOff(self.model), self.grpo.temperature)
            elif isinstance(self.model, HFPolicy):
                ref_hf = load_hf_policy(cfg, cfg.model.path, runtime.device, attention_impl(cfg)).to(runtime.device)
                for p in ref_hf.parameters():
                    p.requires_grad_(False)
                self.reference = TokenLogProbs(ref_hf, self.grpo.temperature)
            else:
                ref_model = load_model(cfg.model.path, attention=attention_impl(cfg)).to(runtime.device)
                for p in ref_model.parameters():
                    p.requires_grad_(False)
                self.reference = TokenLogProbs(ref_model, self.grpo.temperature)
        self.coef = self.grpo.grounding.coef
        self.static_pool = grounding_pool(self.grpo.grounding.rows, self.tokenizer, cfg.data.max_length) if self.coef > 0 else []
        self.fingerprint = fingerprint(cfg, _FINGERPRINT)
        self.iteration, self.step = 0, 0
        #: Optimizer steps whose mini-batch held act tokens, and those tokens summed over the steps.
        self.act_updates, self.act_tokens = 0, 0
        self.validation = cfg.validation
        # The best validation point so far: {"iteration", "value"[, "tie"]}; its weights are in
        # best_dir(iteration). `saved_best` is the one the newest checkpoint recorded (a resume's).
        self.best: dict[str, Any] | None = None
        if state is not None:
            self.engine.optimizer.load_state_dict(state["optimizer"])
            check_fingerprint(events, state, self.fingerprint)
            self.iteration, self.step = state["loop"]["iteration"], state["step"]
            self.best = state["loop"].get("best")
            self.act_updates = state["loop"].get("act_updates", 0)
            self.act_tokens = state["loop"].get("act_tokens", 0)
        self.saved_best = self.best

    def policy_for_rollouts(self, it: int) -> str:
        """Exports the current policy for the rollout command (rank 0); returns its folder. With a
        served engine: the policy handed to the server instead (:meth:`serve_adapter`)."""
        if self.served is not None:
            return self.serve_adapter(it)
        assert isinstance(self.model, LlamaForCausalLM), "check_served_settings: a transformers run is served"
        folder = os.path.join(self.source.iteration_dir(it), "model")
        if self.rt.is_main and self.source.needs_export:
            summary = export_model_folder(self.model, self.tokenizer, self.tokenizer_dir, folder, self.cfg.export)
            self.events.emit("export", iteration=it, **summary)
            previous = os.path.join(self.source.iteration_dir(it - 1), "model")
            if it > 0 and not self.cfg.rollouts.keep_models and os.path.isdir(previous):
                shutil.rmtree(previous, ignore_errors=True)
        return folder

    def served_name(self, it: int) -> str:
        """What the rollouts ask the server for: a LoRA run's adapter of this iteration (named by the run's
        folder and the iteration, unique across runs), or the base whose weights were reloaded."""
        assert self.cfg.out_dir, "open_run requires out_dir"
        if isinstance(self.model, HFPolicy) and not self.model.lora:
            assert self.cfg.rollouts.server_model, "check_served_settings requires it"
            return self.cfg.rollouts.server_model
        return f"{os.path.basename(os.path.normpath(self.cfg.out_dir))}-iter{it:04d}"

    def serve_adapter(self, it: int) -> str:
        """The iteration's policy saved and handed to the server: the adapter loaded under its name
        (LoRA), or every weight reloaded in place (full fine-tuning)."""
        assert self.served is not None and isinstance(self.model, HFPolicy), "served runs are transformers runs"
        kind = "adapter" if self.model.lora else "model"
        folder = os.path.join(self.source.iteration_dir(it), kind)
        if self.rt.is_main:
            write_model_folder(folder, self.model, self.tokenizer, self.tokenizer_dir)
            name = self.served_name(it)
            seconds = self.served.publish(name, folder) if self.model.lora else self.served.reload(folder)
            self.events.emit("served", iteration=it, url=self.served.url, model=name, path=folder,
                             seconds=round(seconds, 3))
            previous = os.path.join(self.source.iteration_dir(it - 1), kind)
            if it > 0 and not self.cfg.rollouts.keep_models and os.path.isdir(previous):
                shutil.rmtree(previous, ignore_errors=True)
        return folder

    def load_iteration(self, it: int) -> tuple[list[Example], list[Example]]:
        model_dir = self.policy_for_rollouts(it)
        seconds = 0.0
        served = {"endpoint": self.served.url, "model": self.served_name(it)} if self.served is not None else {}
        if self.rt.is_main or not self.source.needs_export:
            path, seconds = self.source.rows_for(it, model_dir, served)
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
        # DAPO's rule: a set whose rewards are all equal teaches nothing and would only dilute the
        # token-mean of the others; its rows leave the update (and the denominator) altogether.
        trained = [e for e in examples if e.has_signal] if self.grpo.drop_zero_variance_groups else examples
        self.events.emit("rollouts", iteration=it, path=path, rows=len(rows), rollout_rows=len(policy_rows),
                         actual_rows=len(actual_rows), ignored_rows=ignored, dropped_too_long=len(dropped),
                         zero_variance_rows=len(examples) - len(trained),
                         groups=len({e.group for e in examples + dropped}), roles=role_summary(examples + dropped),
                         advantages=signal, sources=dict(Counter(r["source"] for r in rows)), seconds=round(seconds, 3))
        if signal["nonzero_rows"] == 0:
            self.events.emit("warning", code="GRPO_NO_SIGNAL", iteration=it,
                             message=f"Iteration {it}: every trainable row's advantage is 0 (in each group every "
                                     "episode earned the same reward), so this iteration cannot change the policy. "
                                     "Sample more diverse episodes (more per group, a higher temperature) or check "
                                     "that each episode samples with its own seed.")
        return trained, pool

    def plan(self, examples: list[Example], it: int) -> list[tuple[int, list[Example]]]:
        """Mini-batches of every PPO epoch (a pure function of seed, iteration and epoch): shuffled rows,
        or with ``mini_batch_unit`` episode shuffled episodes, each with all its rows."""
        if not examples:  # every set of the iteration had equal rewards (drop_zero_variance_groups)
            return []
        units = episodes_of(examples) if self.grpo.mini_batch_unit == "episode" else [[e] for e in examples]
        size = self.grpo.mini_batch_size or len(units)
        out = []
        for epoch in range(self.grpo.ppo_epochs):
            order = epoch_permutation(len(units), self.cfg.seed * 7919 + it, epoch)
            shuffled = [units[i] for i in order]
            out += [(epoch, [e for unit in shuffled[i:i + size] for e in unit]) for i in range(0, len(shuffled), size)]
        return out

    def run_iteration(self, it: int) -> None:
        t0 = time.monotonic()
        examples, pool = self.load_iteration(it)
        plan = self.plan(examples, it)
        if not plan:
            self.events.emit("iteration", iteration=it, steps=0, act_updates=0, act_tokens=0,
                             roles=role_summary(examples), grounding_pool=len(pool),
                             seconds=round(time.monotonic() - t0, 3))
            return
        micro = self.cfg.train.micro_batch_size
        by_index = {e.index: e for _, mb in plan for e in rank_share(mb, self.rt.rank, self.rt.world)}
        needed = [by_index[k] for k in sorted(by_index)]
        old = self.engine.logprobs_no_grad(needed, micro)
        ref = self.engine.logprobs_no_grad(needed, micro, self.reference) if self.reference is not None else None
        gap = sampler_gap(needed, old)
        lr = learning_rate(self.cfg.optim, it, self.grpo.iterations)
        keys = metric_keys()
        act_updates, act_tokens = 0, 0
        for epoch, mb in plan:
            tokens = role_tokens(mb)  # the whole mini-batch's, on every rank
            parts = [("policy", b) for b in micro_batches(rank_share(mb, self.rt.rank, self.rt.world), micro,
                                                           micro_count(len(mb), self.rt.world, micro))]
            fns = {"policy": policy_loss(self.grpo, tokens, self.rt.world, old, ref)}
            grounding_tokens = 0
            if self.coef > 0 and pool:
                g_rows = [pool[i] for i in step_indices(len(pool), self.grpo.grounding.batch_size, self.cfg.seed + 1, self.step)]
                grounding_tokens = sum(e.loss_tokens for e in g_rows)
                parts += [("grounding", b) for b in micro_batches(rank_share(g_rows, self.rt.rank, self.rt.world), micro,
                                                                    micro_count(len(g_rows), self.rt.world, micro))]
                fns["grounding"] = grounding_loss(self.coef, grounding_tokens, self.rt.world)
            values, info = self.engine.step(parts, fns, keys, lr)
            self.step += 1
            if tokens["act"]:
                act_updates += 1
                act_tokens += tokens["act"]
            roles, grounding, loss = step_report(values, mb, self.grpo, tokens, grounding_tokens)
            self.events.emit("step", command="grpo", step=self.step, iteration=it, iterations=self.grpo.iterations,
                             epoch=epoch, loss=loss, roles=roles, grounding=grounding, **info)
        self.act_updates += act_updates
        self.act_tokens += act_tokens
        self.events.emit("iteration", iteration=it, steps=len(plan), act_updates=act_updates, act_tokens=act_tokens,
                         roles=role_summary(examples), grounding_pool=len(pool),
                         **({"sampler_gap": gap} if gap else {}), seconds=round(time.monotonic() - t0, 3))

    def validates(self, done: int) -> bool:
        """Whether the policy after ``done`` iterations is validated (0: the starting policy)."""
        v = self.validation
        if not v.command:
            return False
        if done == 0:
            return v.before_training
        return done % v.every == 0 or done == self.grpo.iterations

    def validate(self, done: int) -> None:
        """Exports the policy after ``done`` iterations, runs the validation command on it and emits its
        scores; a new best point's weights are kept in ``<out_dir>/best`` (rank 0 runs it, all wait)."""
        v = self.validation
        assert self.cfg.out_dir and v.command, "validates() checked both"
        folder = os.path.join(self.cfg.out_dir, "validation", f"iter-{done:04d}")
        if self.rt.is_main:
            t0 = time.monotonic()
            model_dir = os.path.join(folder, "model")
            assert isinstance(self.model, LlamaForCausalLM), "check_served_settings refuses validation on transformers"
            export_model_folder(self.model, self.tokenizer, self.tokenizer_dir, model_dir, self.cfg.export)
            out = os.path.join(folder, "scores.json")
            if os.path.exists(out):
                os.remove(out)
            values = {"model_dir": model_dir, "out": out, "iteration": done, "seed": self.cfg.seed,
                      "run_dir": self.cfg.out_dir}
            run_command(substitute(v.command, values), self.cfg.rollouts.env, v.timeout_s, self.cfg.config_dir,
                        self.events.stderr, "VALIDATION_COMMAND_FAILED", "validation.command", "[validation] ")
            scores = read_scores(out, v.metric)
            value = scores[v.metric]
            tie = scores.get(v.tie_metric) if v.tie_metric else None
            if self.is_better(value, tie):
                self.best = {"iteration": done, "value": value, **({"tie": tie} if tie is not None else {})}
                self.keep_best_weights()
            if not self.cfg.rollouts.keep_models:
                shutil.rmtree(model_dir, ignore_errors=True)
            assert self.best is not None
            self.events.emit("validation", step=self.step, iteration=done, metric=v.metric, scores=scores,
                             best_iteration=self.best["iteration"], best=self.best["value"],
                             seconds=round(time.monotonic() - t0, 3))
        self.rt.barrier()
        if not self.rt.is_main:  # every rank knows the best point (rank 0 decided it)
            self.best = read_best_record(self.cfg.out_dir) or self.best

    def best_dir(self, iteration: int) -> str:
        assert self.cfg.out_dir, "open_run requires out_dir"
        return os.path.join(self.cfg.out_dir, "best", f"iter-{iteration:04d}")

    def keep_best_weights(self) -> None:
        """Writes the new best point's weights and record (rank 0); keeps besides it only the best
        point the newest checkpoint recorded, which a resume from that checkpoint would restore."""
        assert self.best is not None and self.cfg.out_dir, "a best point and an out_dir"
        folder = self.best_dir(self.best["iteration"])
        assert isinstance(self.model, LlamaForCausalLM), "check_served_settings refuses validation on transformers"
        write_metadata(folder, self.model.config, self.tokenizer, self.tokenizer_dir, self.cfg.export.max_new_tokens)
        save_weights(folder, self.model)
        root = os.path.join(self.cfg.out_dir, "best")
        with open(os.path.join(root, "best.json.tmp"), "w", encoding="utf-8") as f:
            json.dump(self.best, f)
        os.replace(os.path.join(root, "best.json.tmp"), os.path.join(root, "best.json"))
        keep = {os.path.basename(folder)} | ({f"iter-{self.saved_best['iteration']:04d}"} if self.saved_best else set())
        for name in os.listdir(root):
            if name.startswith("iter-") and name not in keep:
                shutil.rmtree(os.path.join(root, name), ignore_errors=True)

    def is_better(self, value: float, tie: float | None) -> bool:
        """Whether a validation point beats the best so far: a higher metric, or the same metric and a
        higher ``tie_metric`` (held-out success moves in steps of one task; ties are common)."""
        if self.best is None or value > self.best["value"]:
            return True
        best_tie = self.best.get("tie")
        return value == self.best["value"] and tie is not None and (best_tie is None or tie > best_tie)

    def restore_best(self) -> None:
        """With validation.keep_best: the weights of the best validated point, when it is not the last."""
        if not (self.validation.command and self.validation.keep_best and self.best):
            return
        if self.best["iteration"] == self.grpo.iterations:
            return
        assert isinstance(self.model, LlamaForCausalLM), "check_served_settings refuses validation on transformers"
        sd, path = read_state_dict(self.best_dir(self.best["iteration"]))
        self.model.load_state_dict(match_weights(self.model, sd, path), strict=True)
        self.events.emit("best", iteration=self.best["iteration"], metric=self.validation.metric,
                         value=self.best["value"], iterations=self.grpo.iterations)

    def run(self) -> None:
        iterations = self.grpo.iterations
        every = self.cfg.train.checkpoint_every
        if self.iteration == 0 and self.validates(0):
            self.validate(0)
        for it in range(self.iteration, iterations):
            self.run_iteration(it)
            if self.validates(it + 1):
                self.validate(it + 1)
            if (it + 1) % every == 0 or it + 1 == iterations:
                if self.rt.is_main:
                    assert self.cfg.out_dir, "open_run requires out_dir"
                    loop = {"iteration": it + 1, "fingerprint": self.fingerprint, "best": self.best,
                            "act_updates": self.act_updates, "act_tokens": self.act_tokens}
                    path = save_checkpoint(self.cfg.out_dir, self.step, self.model, self.engine.optimizer, loop,
                                           self.tokenizer, self.tokenizer_dir, self.cfg.train.keep_checkpoints)
                    self.events.emit("checkpoint", step=self.step, iteration=it + 1, path=path)
                self.saved_best = self.best
                self.rt.barrier()
        identical = replicas_identical(self.model, self.rt)
        self.restore_best()
        written = finish(self.cfg, self.events, self.rt, self.model, self.tokenizer, self.tokenizer_dir)
        self.events.emit("done", command="grpo", steps=self.step, iterations=iterations, **written,
                         act_updates=self.act_updates, act_tokens=self.act_tokens,
                         replicas_identical=identical, **({"best": self.best} if self.best else {}))


MAX_SCORES_BYTES = 1 << 20


def read_best_record(out_dir: str | None) -> dict[str, Any] | None:
    """The best validation point rank 0 recorded in ``<out_dir>/best/best.json``, if any."""
    path = os.path.join(out_dir or "", "best", "best.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        record = json.load(f)
    return record if isinstance(record, dict) else None


def read_scores(path: str, metric: str) -> dict[str, float]:
    """The validation command's scores: a JSON object (at most 1 MiB) of finite numbers holding ``metric``."""
    def fail(why: str) -> TrainerError:
        return TrainerError("VALIDATION_COMMAND_FAILED", f"validation.command: {path} {why}.", EXIT_RUNTIME)
    if not os.path.exists(path):
        raise fail("was not written (the command must write its scores to the {out} placeholder)")
    if os.path.getsize(path) > MAX_SCORES_BYTES:
        raise fail(f"is larger than {MAX_SCORES_BYTES} bytes")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise fail(f"is not JSON ({e})") from e
    if not isinstance(data, dict):
        raise fail("must hold a JSON object of scores")
    scores = {k: float(v) for k, v in data.items()
              if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}
    if metric not in scores:
        raise fail(f"has no number {metric!r} (validation.metric); it has {sorted(scores)}")
    return scores


def run_grpo(cfg: TrainerConfig, events: EventStream, runtime: Runtime) -> None:
    GrpoRun(cfg, events, runtime).run()
