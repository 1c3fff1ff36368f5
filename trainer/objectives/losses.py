"""Token-level losses. Every function returns per-token values; the caller sums them and divides by
the token count of the whole global batch ("token-mean" over all ranks and micro-batches)."""
import torch


def weighted_nll_sum(logp: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Sum over tokens of ``-weight * log p`` (SFT and grounding)."""
    return -(weights * logp).sum()


def ppo_token_losses(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, clip_ratio: float = 0.2,
                     clip_ratio_c: float | None = 3.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """PPO's clipped surrogate per token, with verl's dual clip for negative advantages.

    Returns ``(losses, clipped, approx_kl)``: ``clipped`` marks tokens where the clipped term was the
    larger loss (the ``pg_clipfrac`` of verl), ``approx_kl`` is ``old_logp - logp`` per token.
    """
    log_ratio = logp - old_logp
    ratio = torch.exp(log_ratio)
    unclipped = -advantages * ratio
    clipped_loss = -advantages * torch.clamp(ratio, 1.0 - clip_ratio, 1.0 + clip_ratio)
    losses = torch.maximum(unclipped, clipped_loss)
    clipped = clipped_loss > unclipped
    if clip_ratio_c is not None:
        # Dual clip: with A < 0 the loss is bounded by -A * c, so a huge ratio cannot blow it up.
        bound = -advantages * clip_ratio_c
        losses = torch.where(advantages < 0, torch.minimum(losses, bound), losses)
    return losses, clipped, -log_ratio


def kl_penalty(logp: torch.Tensor, ref_logp: torch.Tensor, kind: str = "low_var_kl") -> torch.Tensor:
    """Per-token KL estimate to the reference policy (Schulman's k1/k2/k3; k3 clamped to [-10, 10])."""
    if kind == "kl":
        return logp - ref_logp
    if kind == "abs":
        return (logp - ref_logp).abs()
    if kind == "mse":
        return 0.5 * (logp - ref_logp).square()
    if kind == "low_var_kl":
        log_ratio = ref_logp - logp
        return torch.clamp(torch.exp(log_ratio) - log_ratio - 1.0, min=-10.0, max=10.0)
    raise ValueError(f"unknown kl_type {kind}")
