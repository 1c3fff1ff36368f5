"""Learning-rate schedules as pure functions of the step, so a resumed run needs no scheduler state."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config_types import OptimSection


def learning_rate(optim: OptimSection, step: int, total: int) -> float:
    """lr of optimizer step ``step`` (0-based) of ``total``: linear warmup, then constant/cosine/linear."""
    base, warmup = optim.lr, optim.warmup_steps
    if step < warmup:
        return base * (step + 1) / warmup
    floor = base * optim.min_lr_ratio
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    if optim.schedule == "cosine":
        return floor + (base - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))
    if optim.schedule == "linear":
        return base - (base - floor) * progress
    return base
