"""The loss functions of one GRPO optimizer step: PPO-clipped policy gradient (+ KL) on rollout rows
and the grounding NLL on actual rows, with the per-role sums the step event reports."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from ..objectives import kl_penalty, ppo_token_losses, reward_of

if TYPE_CHECKING:
    from ..config_types import GrpoSection
    from ..data.batches import Batch
    from ..data.encode import Example
    from .engine import LossFn

ROLES = ("act", "rehearse")
POLICY_METRICS = ("tokens", "rows", "pg", "clipped", "ppo_kl", "kl")
GROUNDING_METRICS = ("grounding.tokens", "grounding.rows", "grounding.nll", "grounding.weighted")


def metric_keys() -> list[str]:
    return [f"{r}.{k}" for r in ROLES for k in POLICY_METRICS] + list(GROUNDING_METRICS)


def role_tokens(rows: list[Example]) -> dict[str, int]:
    """Each role's loss tokens in a (global) mini-batch."""
    return {role: sum(e.loss_tokens for e in rows if e.role == role) for role in ROLES}


def policy_loss(grpo: GrpoSection, tokens: dict[str, int], world: int, old: dict[int, torch.Tensor],
                ref: dict[int, torch.Tensor] | None) -> LossFn:
    """The PPO loss of one micro-batch, shared weights for both roles. ``tokens``: each role's loss
    tokens in the whole mini-batch, all ranks (:func:`role_tokens`), the denominators whatever the
    micro-batch or rank, so that the micro-batches' losses sum to the mini-batch's.

    ``grpo.loss_agg`` token-mean: ``Σ ℓ / N`` over every token of the mini-batch; role-token-mean:
    ``Σ_role Σ ℓ_role / N_role``, so an act token's weight does not depend on how many rehearse tokens
    share its step."""
    policy_tokens = sum(tokens.values())

    def loss_fn(b: Batch, logp: torch.Tensor) -> tuple[torch.Tensor, dict[str, Any]]:
        old_lp = torch.cat([old[e.index] for e in b.examples])
        adv = b.per_row([e.advantage for e in b.examples])
        losses, clipped, approx_kl = ppo_token_losses(logp, old_lp, adv, grpo.clip_ratio, grpo.clip_ratio_c)
        if grpo.tis_cap is not None and any(e.sampler_logprobs is not None for e in b.examples):
            losses = losses * sampler_weights(b, old_lp, grpo.tis_cap)
        kl = None
        if ref is not None:
            kl = kl_penalty(logp, torch.cat([ref[e.index] for e in b.examples]), grpo.kl_type)
        roles = b.per_row([ROLES.index(e.role) for e in b.examples], dtype=torch.long)
        if grpo.loss_agg == "role-token-mean":
            total = losses.new_zeros(())
            for i, role in enumerate(ROLES):
                m = roles == i
                if tokens[role]:
                    part = losses[m].sum()
                    if kl is not None:
                        part = part + grpo.kl_coef * kl[m].sum()
                    total = total + part / tokens[role]
            scaled = total * world
        else:
            total = losses.sum()
            if kl is not None:
                total = total + grpo.kl_coef * kl.sum()
            scaled = total / policy_tokens * world
        values: dict[str, float] = {}
        for i, role in enumerate(ROLES):
            m = roles == i
            values[f"{role}.tokens"] = int(m.sum())
            values[f"{role}.rows"] = sum(1 for e in b.examples if e.role == role)
            values[f"{role}.pg"] = float(losses.detach()[m].sum())
            values[f"{role}.clipped"] = float(clipped[m].sum())
            values[f"{role}.ppo_kl"] = float(approx_kl.detach()[m].sum())
            values[f"{role}.kl"] = float(kl.detach()[m].sum()) if kl is not None else 0.0
        return scaled, values
    return loss_fn


def sampler_weights(b: Batch, old_lp: torch.Tensor, cap: float) -> torch.Tensor:
    """Truncated importance sampling: per loss token ``min(π_old / π_sampler, cap)``, where π_sampler is
    the served engine's log-prob of the sampled token (``target_logprobs``) and π_old the trainer's own
    before the update. It corrects the gap between the two engines (kernels, precision) that would
    otherwise bias the gradient. History turns and rows without sampler log-probs weigh 1."""
    sampler, sampled = [], []
    for e in b.examples:
        history = e.loss_tokens - len(e.target_ids)  # trained history turns come first in a row's tokens
        if e.sampler_logprobs is None:
            sampler.append(torch.zeros(e.loss_tokens))
            sampled.append(torch.zeros(e.loss_tokens, dtype=torch.bool))
        else:
            sampler.append(torch.cat([torch.zeros(history), torch.tensor(e.sampler_logprobs, dtype=torch.float32)]))
            sampled.append(torch.cat([torch.zeros(history, dtype=torch.bool),
                                      torch.ones(len(e.target_ids), dtype=torch.bool)]))
    sampler_lp = torch.cat(sampler).to(old_lp.device)
    weights = torch.exp(old_lp.detach().float() - sampler_lp).clamp(max=cap)
    return torch.where(torch.cat(sampled).to(old_lp.device), weights, torch.ones_like(weights))


def grounding_loss(coef: float, grounding_tokens: int, world: int) -> LossFn:
    """Token-mean NLL of the actual responses, each token weighted by its row's weight, times coef."""
    def loss_fn(b: Batch, logp: torch.Tensor) -> tuple[torch.Tensor, dict[str, Any]]:
        weights = b.per_row([e.weight for e in b.examples])
        weighted = -(weights * logp).sum()
        values = {"grounding.tokens": b.num_tokens, "grounding.rows": len(b.examples),
                  "grounding.nll": float(-logp.detach().sum()), "grounding.weighted": float(weighted.detach())}
        return coef * weighted / grounding_tokens * world, values
    return loss_fn


def _stats(xs):
    n = len(xs)
    mean = sum(xs) / n
    std = (sum((x - mean) ** 2 for x in xs) / n) ** 0.5
    return mean, std, min(xs), max(xs)


def step_report(values: dict[str, float], rows: list[Example], grpo: GrpoSection, tokens: dict[str, int],
                grounding_tokens: int) -> tuple[dict[str, Any], dict[str, Any] | None, float]:
    """The ``roles`` and ``grounding`` parts of a grpo step event, and the objective's value (as
    ``grpo.loss_agg`` aggregates it; ``tokens``: each role's loss tokens in the mini-batch)."""
    roles = {}
    for role in ROLES:
        members = [e for e in rows if e.role == role]
        n = values[f"{role}.tokens"]
        if not members or not n:
            continue
        r_mean, _, _, _ = _stats([reward_of(e) for e in members])
        a_mean, a_std, a_min, a_max = _stats([e.advantage for e in members])
        roles[role] = {"rows": len(members), "tokens": int(n), "pg_loss": values[f"{role}.pg"] / n,
                       "clip_frac": values[f"{role}.clipped"] / n, "ppo_kl": values[f"{role}.ppo_kl"] / n,
                       "kl": values[f"{role}.kl"] / n if grpo.kl_coef > 0 else None,
                       "reward_mean": r_mean, "advantage_mean": a_mean, "advantage_std": a_std,
                       "advantage_min": a_min, "advantage_max": a_max}
    if grpo.loss_agg == "role-token-mean":
        loss = sum((values[f"{r}.pg"] + grpo.kl_coef * values[f"{r}.kl"]) / tokens[r] for r in ROLES if tokens[r])
    else:
        pg = sum(values[f"{r}.pg"] for r in ROLES) + grpo.kl_coef * sum(values[f"{r}.kl"] for r in ROLES)
        loss = pg / sum(tokens.values())
    grounding = None
    if grounding_tokens:
        g_tokens = values["grounding.tokens"]
        g_loss = values["grounding.weighted"] / grounding_tokens
        grounding = {"rows": int(values["grounding.rows"]), "tokens": int(g_tokens), "nll": values["grounding.nll"] / g_tokens,
                     "weighted_nll": g_loss, "coef": grpo.grounding.coef}
        loss += grpo.grounding.coef * g_loss
    return roles, grounding, loss
