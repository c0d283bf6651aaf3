"""`kgym.rollout.rollout_core.Rollout` without vLLM or Ray: adapter syncs through the registry
(fresh ids, retirement by the window, the version on every turn), and its config bounds."""

from __future__ import annotations

import asyncio

import pytest
from rollout_helpers import ScriptedEngine

from kgym.contract import Mode
from kgym.episodes.env import EpisodeConfig
from kgym.rollout.engine import EngineConfig
from kgym.rollout.rollout_core import Rollout, RolloutConfig
from kgym.rollout.sampling import RL_SAMPLING
from kgym.tasks import make


class NoEvaluations:
    async def evaluate(self, request):  # pragma: no cover
        raise AssertionError("unexpected submission")


def test_adapter_syncs_and_versions_on_turns(tiny_tok, adapters):
    engine = ScriptedEngine(tiny_tok, lambda prompt: "no code here")
    core = Rollout(RolloutConfig(engine=EngineConfig(model="unused"), episode=EpisodeConfig(group_size=2)),
                   NoEvaluations(), engine=engine)
    assert core.policy.version == 0 and core.policy.lora_id is None
    first = core.load_adapter(1, str(adapters[0]))
    second = core.load_adapter(2, str(adapters[1]))
    third = core.load_adapter(3, str(adapters[2]))
    assert [first["lora_id"], second["lora_id"], third["lora_id"]] == [1, 2, 3]
    assert [r["version"] for r in second["retired"]] == [0] and [r["version"] for r in third["retired"]] == [1]
    assert engine.loaded == {2, 3}
    with pytest.raises(ValueError, match="not newer"):
        core.load_adapter(3, str(adapters[0]))
    (group,) = asyncio.run(core.rollout([make("relu-v1", seed=1, size="tiny")], modes=[Mode.SINGLE]))
    assert all(e.policy_versions == (3,) and e.turns[0].lora_id == 3 for e in group.episodes)
    assert all(e.result.turn_samples[0].policy_version == 3 for e in group.episodes)
    st = core.stats()
    assert st["policy_version"] == 3 and st["live_versions"] == [2, 3] and st["requests"] == 2


def test_window_needs_enough_lora_slots():
    with pytest.raises(ValueError, match="max_loras"):
        RolloutConfig(engine=EngineConfig(model="m", max_loras=2), adapter_window=2)
    with pytest.raises(ValueError, match="max_loras must be >= 2"):
        EngineConfig(model="m", max_loras=1)


def test_a_request_on_a_retired_adapter_fails_alone(tiny_tok, adapters):
    from kgym.rollout.adapters import AdapterRegistry
    from kgym.rollout.batcher import GenerationBatcher
    from kgym.rollout.engine import StaleAdapter

    engine = ScriptedEngine(tiny_tok, lambda prompt: "hi")
    reg = AdapterRegistry(window=1)
    v1 = reg.publish(1, adapters[0])
    reg.publish(2, adapters[1])
    reg.publish(3, adapters[2])
    for old in reg.retire_stale():
        engine.unload(old)
    batcher = GenerationBatcher(engine)

    async def both():
        return await asyncio.gather(batcher.generate([5, 6], RL_SAMPLING, v1),
                                    batcher.generate([5, 6], RL_SAMPLING, reg.latest), return_exceptions=True)

    stale, fresh = asyncio.run(both())
    assert isinstance(stale, StaleAdapter) and fresh.policy_version == 3 and engine.calls == [1]
