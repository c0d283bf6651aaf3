"""An episode as learner input: `flatten_episode(result) -> Flattened` of `kgym.rl.batch.Sample`s.

The rule (the learner's, `kgym.rl.batch`): a multi-turn episode is ONE sample when each turn's
prompt extends the previous turn's prompt + completion, token for token (the chat template's prefix
property: rendering the longer conversation only appends). Then
  prompt_ids     = turn 1's prompt;
  completion_ids = turn 1's completion, the tokens turn 2's prompt adds (the tool results and the
                   template around them), turn 2's completion, ... up to the last turn's completion;
  loss_mask      = each turn's own mask on its completion (1 for sampled tokens), 0 on the tokens
                   in between (the model never sampled them);
  sampler logprobs where every turn gave them (else None: the learner recomputes them);
  policy_version = the oldest version among the turns (staleness is counted from the oldest policy
                   that contributed tokens).
The observation after the last turn is in no prompt, so it is not in the sample. A single-turn
episode is one sample (its prompt and completion).

When the prefix property fails (a template that re-renders earlier turns: reasoning stripped, tool
calls re-serialised) or a turn has no tokens, the episode falls back to one sample per turn that
has tokens, each with its own prompt, and `Flattened.kind` / `reason` say why: a value, not an
error. An episode without tokens (a scripted policy), one that failed inside kgym (`error`: never
trained on) or one still running gives no sample. Every sample carries the episode's reward (after
group post-processing) or the `advantage` given. Does not compute advantages (`kgym.rl.advantages`)
or pad (`kgym.rl.packing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from kgym.episodes.result import EpisodeResult
from kgym.episodes.turn_tokens import TurnSample
from kgym.rl.batch import Sample, Turn, flatten_turns


class FlattenKind(StrEnum):
    """How an episode became samples."""

    ONE_SAMPLE = "one_sample"  # the prefix property held: the whole episode is one sample
    PER_TURN = "per_turn"  # it did not (or a turn had no tokens): one sample per turn with tokens
    NO_SAMPLE = "no_sample"  # no tokens, a kgym error, or not finished: nothing to train on


@dataclass(frozen=True)
class Flattened:
    samples: tuple[Sample, ...]
    kind: FlattenKind
    reason: str = ""  # why it is not ONE_SAMPLE, or a note (policy versions mixed)


def _model_turns(s: TurnSample) -> list[Turn]:
    """A turn's completion as runs of equal loss mask (a sampler may insert tokens mid-completion)."""
    out: list[Turn] = []
    mask, ids, lps = s.mask, s.completion_ids, s.logprobs
    start = 0
    for i in range(1, len(ids) + 1):
        if i == len(ids) or mask[i] != mask[start]:
            model = bool(mask[start])
            out.append(Turn(ids[start:i], from_model=model,
                            logprobs=(lps[start:i] if lps is not None else None) if model else None))
            start = i
    return out


def _mismatch(stream: Sequence[int], prompt: Sequence[int]) -> str:
    if len(prompt) < len(stream):
        return f"it has {len(prompt)} tokens, fewer than the {len(stream)} before it"
    at = next(i for i, (a, b) in enumerate(zip(stream, prompt)) if a != b)
    return f"they differ at token {at} of {len(stream)}"


def _per_turn(samples: Sequence[TurnSample], group_id: str, reward: float | None,
              advantage: float | None) -> tuple[Sample, ...]:
    out = []
    for s in samples:
        lps = None if s.logprobs is None else tuple(lp if m else 0.0 for lp, m in zip(s.logprobs, s.mask))
        out.append(Sample(prompt_ids=s.prompt_ids, completion_ids=s.completion_ids, loss_mask=s.mask,
                          group_id=group_id, reward=reward, advantage=advantage, sampler_logprobs=lps,
                          policy_version=s.policy_version))
    return tuple(out)


def flatten_episode(result: EpisodeResult, *, advantage: float | None = None) -> Flattened:
    """The learner samples of a finished episode (see the module docstring for the rule)."""
    if result.end_reason is None:
        return Flattened((), FlattenKind.NO_SAMPLE, "the episode is still running")
    if result.error is not None:
        return Flattened((), FlattenKind.NO_SAMPLE, f"the final evaluation failed inside kgym: {result.error[:200]}")
    given = [s for s in result.turn_samples if s is not None]
    if not given:
        return Flattened((), FlattenKind.NO_SAMPLE, "no turn carried tokens (a scripted policy)")
    reward = None if advantage is not None else result.reward
    missing = [i + 1 for i, s in enumerate(result.turn_samples) if s is None]
    if missing:
        return Flattened(_per_turn(given, result.group_id, reward, advantage), FlattenKind.PER_TURN,
                         f"turns {missing} carried no tokens: one sample per turn with tokens")
    turns = _model_turns(given[0])
    stream = given[0].stream
    for k, s in enumerate(given[1:], start=2):
        if s.prompt_ids[:len(stream)] != stream:
            why = (f"turn {k}'s prompt does not extend turn {k - 1}'s prompt + completion "
                   f"({_mismatch(stream, s.prompt_ids)}): the chat template re-renders earlier turns; "
                   f"one sample per turn")
            return Flattened(_per_turn(given, result.group_id, reward, advantage), FlattenKind.PER_TURN, why)
        between = s.prompt_ids[len(stream):]
        if between:
            turns.append(Turn(between, from_model=False))
        turns.extend(_model_turns(s))
        stream = s.stream
    versions = sorted({s.policy_version for s in given})
    note = f"turns sampled by policy versions {versions}: the sample is tagged with the oldest" if len(versions) > 1 \
        else ""
    sample = flatten_turns(given[0].prompt_ids, turns, result.group_id, reward=reward, advantage=advantage,
                           policy_version=versions[0])
    return Flattened((sample,), FlattenKind.ONE_SAMPLE, note)
