"""Role-wise group baselines (EnvACE's GRPO with ``group_by_agent_id=True``).

A row's advantage is its reward minus the mean reward of the rows of the same role in the same
group; optionally divided by that set's standard deviation (unbiased, + 1e-6, as verl). A role with
a single row in a group gets 0 (EnvACE gives it its raw reward; see docs/trainer-config.md).
A set whose rewards are all equal (or a single row) has no signal: every advantage in it is 0, and
with ``grpo.drop_zero_variance_groups`` (DAPO's rule) its rows leave the update and its denominator.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..data.encode import Example

EPSILON = 1e-6


def reward_of(example: Example) -> float:
    """A GRPO row's reward: rollout rows without one are refused when the rows are read."""
    assert example.reward is not None, example.id
    return float(example.reward)


def compute_advantages(examples: list[Example],
                       norm_by_std: bool = False) -> dict[tuple[str | None, str], tuple[float, float, int]]:
    """Sets ``example.advantage`` and ``example.has_signal`` for every example; returns
    ``{(group, role): (mean, std, count)}``."""
    sets: defaultdict[tuple[str | None, str], list[Example]] = defaultdict(list)
    for e in examples:
        sets[(e.group, e.role)].append(e)
    stats = {}
    for key, members in sets.items():
        rewards = [reward_of(e) for e in members]
        n = len(rewards)
        mean = sum(rewards) / n
        std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / (n - 1)) if n > 1 else 0.0
        signal = any(r != rewards[0] for r in rewards)
        for e, r in zip(members, rewards, strict=True):
            e.has_signal = signal
            if n == 1:
                e.advantage = 0.0
            elif norm_by_std:
                e.advantage = (r - mean) / (std + EPSILON)
            else:
                e.advantage = r - mean
        stats[key] = (mean, std, n)
    return stats
