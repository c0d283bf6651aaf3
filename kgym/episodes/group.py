"""Groups: the G answers (default 8) to one task that GRPO-style training compares.

`score_group` post-processes the episodes of one group with `kgym.reward.group_rewards`: when no
answer passes every hidden case, each gets loose-tolerance (1e-2) partial credit on the verdict it
was scored on. It also flags groups whose answers all score the same (`kgym.reward.uniform` within
`equal_tol`): their advantages are all zero, so the study resampled them (`GroupResult.resample`).
The rules are `kgym.reward`'s; this module only applies them to episodes. Episodes without a scored
verdict (no code, no submission) keep 0 and get no loose credit. Does not resample (the trainer
decides) and does not compute advantages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from kgym.contract import Verdict
from kgym.episodes.result import EpisodeResult
from kgym.reward import RewardConfig, group_rewards, uniform
from kgym.reward import reward as base_of

GROUP_SIZE = 8


@dataclass(frozen=True)
class GroupConfig:
    group_size: int = GROUP_SIZE  # answers per task: the RL job's [episodes] group_size
    loose_credit: bool = True  # partial credit at 1e-2 when the whole group fails
    equal_tol: float = 1e-9  # rewards closer than this count as equal


@dataclass
class GroupResult:
    group_id: str
    task_id: str
    episodes: list[EpisodeResult]  # copies with reward and loose_credit set
    rewards: list[float]
    loose_applied: bool  # no answer passed every case: loose credit was added
    all_equal: bool  # every answer scored the same: no signal, resample the group
    errors: int = 0  # episodes whose final evaluation failed inside kgym (drop them)
    notes: list[str] = field(default_factory=list)

    @property
    def resample(self) -> bool:
        return self.all_equal


def _scored_verdict(e: EpisodeResult) -> Verdict:
    """The verdict the episode's reward rests on; an empty verdict (reward 0, no cases) when none."""
    f = e.final
    return Verdict(reason=e.reason) if f is None else f.verdict


def score_group(episodes: Sequence[EpisodeResult], reward_config: RewardConfig | None = None,
                config: GroupConfig = GroupConfig()) -> GroupResult:
    """The group's rewards under `reward_config` (default: the one its episodes were scored under;
    loose credit under another config would be added to base rewards it does not describe)."""
    if not episodes:
        raise ValueError("a group needs at least one episode")
    configs = {e.reward_config for e in episodes}
    reward_config = episodes[0].reward_config if reward_config is None else reward_config
    if configs != {reward_config}:
        raise ValueError(f"a group's episodes must all be scored under the reward config used for it: got {configs}")
    ids = {e.group_id for e in episodes}
    tasks = {e.task_id for e in episodes}
    if len(ids) != 1 or len(tasks) != 1:
        raise ValueError(f"one group, one task: got groups {sorted(ids)} and tasks {sorted(tasks)}")
    notes = []
    if len(episodes) != config.group_size:
        notes.append(f"group of {len(episodes)} answers, configured size {config.group_size}")
    verdicts = [_scored_verdict(e) for e in episodes]
    subs = [max(1, e.submissions) for e in episodes]
    if config.loose_credit:
        with_loose = group_rewards(verdicts, reward_config, subs)
    else:
        with_loose = [e.base_reward for e in episodes]
    # group_rewards recomputes the base reward from the verdict; keep the episode's own (it knows
    # about kgym errors) and add only the loose part.
    loose = [max(0.0, w - base_of(v, reward_config, n)) for w, v, n in zip(with_loose, verdicts, subs)]
    out = []
    for e, extra in zip(episodes, loose):
        extra = 0.0 if e.error is not None else extra
        out.append(dataclasses.replace(e, reward=e.base_reward + extra, loose_credit=extra))
    rewards = [e.reward for e in out]
    applied = config.loose_credit and not any(e.solved for e in episodes)
    all_equal = uniform(rewards, config.equal_tol)
    return GroupResult(next(iter(ids)), next(iter(tasks)), out, rewards, applied, all_equal,
                       errors=sum(1 for e in episodes if e.error is not None), notes=notes)
