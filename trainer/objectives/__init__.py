"""The joint act/rehearse objective: SFT, role-wise GRPO (EnvACE) and the grounding term."""
from .advantages import compute_advantages, reward_of
from .logprobs import TokenLogProbs
from .losses import kl_penalty, ppo_token_losses, weighted_nll_sum

__all__ = ["compute_advantages", "reward_of", "TokenLogProbs", "kl_penalty", "ppo_token_losses", "weighted_nll_sum"]
