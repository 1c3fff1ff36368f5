"""Log-probabilities of target tokens: the one forward pass every objective is built on."""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn as nn

if TYPE_CHECKING:
    from ..model.llama import LlamaForCausalLM


class TokenLogProbs(nn.Module):
    """``forward(input_ids, mask, labels)`` -> log p(label) at the masked positions, ``[num_tokens]``.

    A module of its own so that DistributedDataParallel wraps exactly this computation. Only masked
    positions go through the (vocabulary-sized) output layer.
    """

    def __init__(self, model: LlamaForCausalLM, temperature: float = 1.0) -> None:
        super().__init__()
        self.model = model
        self.temperature = temperature

    def forward(self, input_ids: torch.Tensor, mask: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        hidden = self.model.hidden_states(input_ids)[mask]
        logits = self.model.lm_head(hidden).float()
        if self.temperature != 1.0:
            logits = logits / self.temperature
        logp = torch.log_softmax(logits, dim=-1)
        return logp.gather(1, labels[mask][:, None])[:, 0]
