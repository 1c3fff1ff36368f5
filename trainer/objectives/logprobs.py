"""Log-probabilities of target tokens: the one forward pass every objective is built on."""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn as nn

if TYPE_CHECKING:
    from typing import Protocol

    from ..model.packing import PackedLayout

    class Scorer(Protocol):
        """What log-probs need of a model: hidden states of right-padded rows (or of packed rows, a
        model that packs), and the output layer."""

        @property
        def lm_head(self) -> nn.Module: ...

        def hidden_states(self, input_ids: torch.Tensor) -> torch.Tensor: ...


class TokenLogProbs(nn.Module):
    """``forward(input_ids, mask, labels)`` -> log p(label) at the masked positions, ``[num_tokens]``.

    A module of its own so that DistributedDataParallel wraps exactly this computation. Only masked
    positions go through the (vocabulary-sized) output layer. Logits are divided by the sampling
    temperature: each row's own when rows carry one (the roles may sample at different ones), else
    the module's (``grpo.temperature``).
    """

    def __init__(self, model: Scorer, temperature: float = 1.0) -> None:
        super().__init__()
        self.model = model
        self.temperature = temperature

    def forward(self, input_ids: torch.Tensor, mask: torch.Tensor, labels: torch.Tensor,
                temperatures: torch.Tensor | None = None, packing: PackedLayout | None = None) -> torch.Tensor:
        """``temperatures``: one per masked position (its row's sampling temperature), else the module's;
        ``packing``: where the rows of packed inputs sit (only the studio's own model packs)."""
        if packing is None:
            states = self.model.hidden_states(input_ids)
        else:
            states = self.model.hidden_states(input_ids, packing)  # type: ignore[call-arg]
        hidden = states[mask]
        logits = self.model.lm_head(hidden).float()
        if temperatures is not None:
            logits = logits / temperatures.float()[:, None]
        elif self.temperature != 1.0:
            logits = logits / self.temperature
        logp = torch.log_softmax(logits, dim=-1)
        return logp.gather(1, labels[mask][:, None])[:, 0]
