"""What the learner trains on is what the sampler drew (red team, 2026-12-07): a repair episode driven
through `RolloutDriver` by an engine whose completions do not re-tokenize to themselves (a word split
into bytes, `<|im_end|>` spelled out in byte tokens, a special token sampled mid-turn that the
decoded text drops, a lone UTF-8 continuation byte, a turn cut off at max_tokens), flattened as the
RL job does. The sample's loss-mask-1 tokens must be exactly the engine's token ids, turn after turn,
with the engine's log-prob on each, and every other token the environment's."""

from __future__ import annotations

import asyncio

from kgym.contract import Mode
from kgym.episodes import EpisodeConfig
from kgym.episodes.flatten import FlattenKind, flatten_episode
from kgym.rollout.adapters import AdapterRegistry
from kgym.rollout.batcher import GenerationBatcher
from kgym.rollout.driver import RolloutDriver
from kgym.rollout.engine import Completion, FinishReason
from kgym.rollout.sampling import SamplingConfig
from kgym.tasks import make


class OddTokens:
    """Each call returns the next scripted completion: token ids chosen so that decode -> encode does
    not give them back; text decoded as vLLM does (special tokens skipped)."""

    def __init__(self, tok, completions):
        self.tok, self.completions, self.given = tok, list(completions), []

    def serves(self, adapter):
        return True

    def generate(self, prompts, sampling, adapters, *, n=1, seeds=None):
        out = []
        for _ in prompts:
            ids, finish = self.completions[len(self.given) % len(self.completions)]
            lps = tuple(-0.01 * (len(self.given) + 1) - 0.001 * k for k in range(len(ids)))
            self.given.append((ids, lps))
            out.append([Completion(ids, lps, self.tok.decode(list(ids), skip_special_tokens=True), finish, 0, None)])
        return out


def test_trained_tokens_are_the_sampled_ids_not_a_retokenization(tiny_tok):
    tok = tiny_tok
    byte = {chr(c): tok.convert_tokens_to_ids(chr(c)) for c in range(ord("a"), ord("z") + 1)}
    spelled = tuple(tok.encode("<|im_end|>", add_special_tokens=False, split_special_tokens=True))
    start, eos = tok.convert_tokens_to_ids("<|im_start|>"), tok.eos_token_id
    cont = tok.convert_tokens_to_ids("\u0080")  # byte 0x80 alone: invalid UTF-8
    words = tuple(byte[c] for c in "return")  # 'return' as six single-letter tokens
    assert tok.encode("return", add_special_tokens=False) != list(words)
    turns = [
        (words + spelled + (start,) + words + (eos,), FinishReason.STOP),
        ((cont, cont) + words, FinishReason.LENGTH),  # cut off: no end-of-turn token
        (spelled + (eos,), FinishReason.STOP),
    ]
    engine = OddTokens(tok, turns)
    driver = RolloutDriver(GenerationBatcher(engine), None, tok, AdapterRegistry(),
                           sampling=SamplingConfig(temperature=1.0, max_tokens=64, group_size=1),
                           episode=EpisodeConfig(max_turns=3))
    (group,) = asyncio.run(driver.run_groups([make("relu-v1", seed=1, size="tiny")], modes=[Mode.REPAIR]))
    (ep,) = group.episodes
    assert ep.error is None and ep.result.turns == 3
    flat = flatten_episode(ep.result)
    assert flat.kind is FlattenKind.ONE_SAMPLE, flat.reason
    (s,) = flat.samples
    model = [(t, lp) for t, m, lp in zip(s.completion_ids, s.loss_mask, s.sampler_logprobs) if m]
    sampled = [(t, lp) for ids, lps in engine.given for t, lp in zip(ids, lps)]
    assert model == sampled
    # the model's runs are exactly its turns, in order; everything between is the environment's
    runs, cur = [], []
    for t, m in zip(s.completion_ids, s.loss_mask):
        if m:
            cur.append(t)
        elif cur:
            runs.append(tuple(cur))
            cur = []
    runs.append(tuple(cur))
    assert runs == [ids for ids, _ in engine.given]
    # each turn's prompt (what the engine conditioned on) is the flattened stream up to that turn
    stream = s.prompt_ids + s.completion_ids
    for ts in ep.result.turn_samples:
        assert stream[:len(ts.prompt_ids)] == ts.prompt_ids
