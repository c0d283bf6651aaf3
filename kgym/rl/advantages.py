"""Group-relative advantages: A_i = (R_i - mean_g R) / (std_g R + eps) within each group g.

Covers: one advantage per sample from its scalar reward and group id (GRPO-style grouping; the study
draws 8 answers per task). `std` is the population std of the group (unbiased=False), so a group of
two with rewards 0 and 1 gets advantages -1 and +1.

The zero-std case is defined, not divided through: a group whose rewards are all equal (within
`tol`) carries no preference between its answers, so every advantage in it is exactly 0.0 and it
contributes no policy gradient (only the KL and entropy terms still act on its tokens). The study
resampled such groups; that is the controller's decision (`kgym.reward` says when a group is
degenerate), not this function's. A group of one sample is the same case: advantage 0.

`batch_advantages(batch)` does this for a `TrainBatch`: over episodes, not samples, when samples
carry an `episode_id` (an episode split into one sample per turn must not count once per turn).

Does not cover: token-level shaping of advantages (`kgym.rl.repo`), reward computation
(`kgym.reward`), or leave-one-out / Dr.GRPO variants (mean-only centring is `scale=False`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from kgym.rl.batch import TrainBatch


@dataclass(frozen=True)
class AdvantageConfig:
    scale: bool = True  # divide by the group std; False gives mean-centring only (Dr.GRPO)
    eps: float = 1e-6  # added to the std so a near-degenerate group cannot blow up
    tol: float = 1e-9  # groups whose std is at most this get all-zero advantages

    def __post_init__(self) -> None:
        if not 0 <= self.eps < 1:
            raise ValueError(f"eps must be in [0, 1), not {self.eps}")
        if self.tol < 0:
            raise ValueError(f"tol must be >= 0, not {self.tol}")


def group_advantages(rewards: torch.Tensor | Sequence[float], group_ids: Sequence[object],
                     config: AdvantageConfig = AdvantageConfig()) -> torch.Tensor:
    """Advantages (float32, shape (N,)) for N samples; samples sharing a group id form a group."""
    r = torch.as_tensor(rewards, dtype=torch.float64).flatten()
    if r.numel() != len(group_ids):
        raise ValueError(f"{r.numel()} rewards for {len(group_ids)} group ids")
    if not torch.isfinite(r).all():
        raise ValueError("rewards must be finite")
    out = torch.zeros_like(r)
    members: dict[object, list[int]] = {}
    for i, g in enumerate(group_ids):
        members.setdefault(g, []).append(i)
    for idx in members.values():
        rg = r[idx]
        std = rg.std(unbiased=False) if len(idx) > 1 else torch.zeros((), dtype=r.dtype)
        if std <= config.tol:
            continue  # degenerate group: advantages stay 0.0 (see module docstring)
        centred = rg - rg.mean()
        out[idx] = centred / (std + config.eps) if config.scale else centred
    return out.to(torch.float32)


def batch_advantages(batch: TrainBatch, config: AdvantageConfig = AdvantageConfig()) -> torch.Tensor:
    """One advantage per sample of `batch`: the given ones, or group-relative from the rewards with
    each episode counted once (samples sharing an `episode_id` must share a reward and a group)."""
    if not batch.has_rewards:
        return torch.tensor([s.advantage for s in batch.samples], dtype=torch.float32)
    episodes: dict[str, int] = {}
    rewards: list[float] = []
    groups: list[str] = []
    index: list[int] = []
    for key, s in zip(batch.episode_keys(), batch.samples):
        if key not in episodes:
            episodes[key] = len(rewards)
            rewards.append(float(s.reward))
            groups.append(s.group_id)
        e = episodes[key]
        if rewards[e] != s.reward or groups[e] != s.group_id:
            raise ValueError(f"episode {key!r}: its samples disagree on reward or group")
        index.append(e)
    per_episode = group_advantages(rewards, groups, config)
    return per_episode[torch.tensor(index, dtype=torch.long)]
