"""`[offpolicy] overlap` (one step off-policy) through the real driver, `jobs.rl.RLController`, with
its actors replaced by plain fakes (no Ray, no model, no engine; seconds).

The fake engine generates when the driver collects a rollout, with the adapter it serves *then*:
were the driver to load a new adapter while a rollout is in flight (the rollout actor is async and
would serve the load at once), that rollout's samples would carry the new version and the checks
below would fail; the fake also refuses a load while a rollout is open. Checked:
- the order of events: step s+1's first round is sent before step s's learner step and collected
  after it and the adapter's write; the new adapter is loaded only then; a held-out evaluation
  first collects the rollout in flight and loads the adapter (it evaluates the new version);
- versions: step 1 trains on version 0 (staleness 0), every later step on samples one version
  behind the learner, none dropped, each carrying the log-probs of the version that generated it
  (what `[learner] correction` weighs against the learner's own), and the step row's
  `version_before` names the version that generated them; the synchronous loop stays at
  staleness 0 with the same curriculum draws;
- kill and resume: the driver dies in step 3's learner step (step 4's rollout in flight); a new
  driver resumes from step 2's checkpoint, draws step 3's tasks again (the same seeds: the
  checkpoint keeps the curriculum as it was before that draw), redoes step 3 on the restored
  version (staleness 0) and goes on one behind; each step counted once;
- the settings: overlap needs `max_staleness >= 1` and an engine awake while the learner steps
  (refused with both settings named when set, a logged fallback when the placement decides).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jobs.rl import RLController
from jobs.rl_config import load_config
from jobs.rl_placement import Placement, PlacementMode, decide_overlap
from jobs.sections import ConfigError
from kgym.contract import CaseResult, EndReason, Mode, Verdict
from kgym.episodes.result import EpisodeResult, Evaluation
from kgym.episodes.turn_tokens import TurnSample
from kgym.records.rl_records import Table, load, read_raw
from kgym.rollout.driver import EpisodeRollout, GroupRollout, TurnRecord
from kgym.rollout.engine import FinishReason
from kgym.tasks import make

CPU = Placement(PlacementMode.CPU, 0.0, 1, 0.0, 1, 0.0, 0)
PASSES = (5, 0, 2, 5)  # cases passed by a group's four answers: mixed rewards, never resampled


class Killed(Exception):
    """The driver's process dies (not a StepFailed: nothing retries in-process)."""


# -- fakes: each method runs at `.remote()` and hands back its value; a rollout runs when collected
@dataclass
class Ref:
    value: Any = None
    thunk: Any = None


class Method:
    def __init__(self, fn, lazy: bool = False):
        self.fn, self.lazy = fn, lazy

    def remote(self, *args, **kwargs) -> Ref:
        if self.lazy:
            return Ref(thunk=lambda: self.fn(*args, **kwargs))
        return Ref(self.fn(*args, **kwargs))


class Actor:
    def __getattr__(self, name: str) -> Method:
        fn = getattr(type(self), "_" + name)
        return Method(fn.__get__(self), lazy=name == "rollout")


def _logprobs(version: int) -> tuple[float, float]:
    """The fake engine's log-probs of its two tokens: each version its own."""
    return (-0.5 - 0.01 * version, -0.25)


def _episode(gid: str, k: int, passed: int, version: int) -> EpisodeRollout:
    from kgym.reward import reward

    task = make("relu-v1", 3, size="tiny")
    cases = [CaseResult(f"c{i}", i < passed, passed_loose=i < passed) for i in range(5)]
    v = Verdict(passed=passed == 5, gate=None if passed == 5 else "correctness", cases=cases, stages_s={"cases": 0.1})
    base = reward(v)
    res = EpisodeResult(episode_id=f"{gid}-{k}", group_id=gid, sample_index=k, task_id=task.task_id,
                        task=task.spec.to_dict(), mode=Mode.SINGLE, end_reason=EndReason.ANSWERED, turns=1,
                        submissions=1, evaluations=[Evaluation(f"ev-{gid}-{k}", 1, 1, "code", v, base)],
                        final_evaluation_id=f"ev-{gid}-{k}", base_reward=base, reward=base,
                        transcript=[{"role": "user", "content": "relu"}, {"role": "assistant", "content": "x"}],
                        turn_samples=[TurnSample((1, 2, 3), (4, 5), _logprobs(version), policy_version=version)])
    turn = TurnRecord(1, "x", 3, 2, FinishReason.STOP, version, None, 0, (), True, 0.1)
    return EpisodeRollout(task.task_id, gid, k, Mode.SINGLE, res, (turn,))


class FakeRollout(Actor):
    def __init__(self, events: list):
        self.events, self.version, self.open, self.tokens = events, 0, 0, 0

    def _rollout(self, tasks, group_ids, modes=None, group_size=None):
        self.open -= 1
        self.events.append(("collect", group_ids[0], self.version))
        self.tokens += 10 * len(tasks)
        return [GroupRollout(gid, t.task_id, Mode.SINGLE,
                             tuple(_episode(gid, k, p, self.version) for k, p in enumerate(PASSES[:group_size or 4])))
                for gid, t in zip(group_ids, tasks)]

    def _load_adapter(self, version, path):
        assert self.open == 0, "an adapter loaded while a rollout was in flight"
        assert Path(path).is_dir()
        self.events.append(("load", version))
        self.version = version
        return {}

    def _policy_version(self):
        return self.version

    def _stats(self):
        return {"generate_seconds": 0.0, "generated_tokens": self.tokens, "engine_calls": 0, "requests": 0}


class OpenCounting(Method):
    """rollout.remote: counted open from the send until collected."""

    def __init__(self, actor: FakeRollout):
        super().__init__(actor._rollout, lazy=True)
        self.actor = actor

    def remote(self, tasks, group_ids, modes=None, group_size=None):
        self.actor.open += 1
        self.actor.events.append(("send", group_ids[0], self.actor.version))
        return super().remote(tasks, group_ids, modes, group_size)


class FakeLearner(Actor):
    def __init__(self, events: list, ckpt: str | None, die_at: int | None):
        self.events, self.die_at = events, die_at
        self.version = json.loads((Path(ckpt) / "meta.json").read_text())["version"] if ckpt else 0

    def _step(self, batch):
        versions = sorted({s.policy_version for s in batch.samples})
        # the behaviour log-probs the learner corrects with are those of the version that generated each sample
        assert all(s.sampler_logprobs == _logprobs(s.policy_version) for s in batch.samples)
        self.events.append(("learn", self.version, versions))
        if self.die_at is not None and self.version + 1 == self.die_at:
            raise Killed
        self.version += 1
        return SimpleNamespace(step=self.version, policy_version=self.version, status="ok", loss=0.1, kl=0.0,
                               entropy=1.0, clip_fraction=0.0, grad_norm=1.0, lr=1e-5, logprob_drift=0.0,
                               sampler_kl=0.0, is_truncated_fraction=0.0, tokens=len(batch.samples) * 5)

    def _save_adapter(self, root):
        path = Path(root) / f"v-{self.version:06d}"
        path.mkdir(parents=True, exist_ok=True)
        self.events.append(("save", self.version))
        return str(path)

    def _save(self, root):
        path = Path(root) / f"step-{self.version:06d}"
        path.mkdir(parents=True)
        (path / "meta.json").write_text(json.dumps({"version": self.version}))
        return str(path)

    def _policy_version(self):
        return self.version

    def _release_memory(self):
        return None


class FakeTasks(Actor):
    def __init__(self, events: list):
        self.events, self.draws = events, 0

    def _families(self):
        return ["elementwise"]

    def _set_floor_full(self, share):
        return None

    def _sample(self, n=1):
        seeds = [1000 + self.draws + i for i in range(n)]
        self.draws += n
        self.events.append(("draw", seeds))
        return [make("relu-v1", seed, size="tiny") for seed in seeds]

    def _make_tasks(self, specs):
        return [make(tid, seed, size="tiny") for tid, seed, _ in specs]

    def _record(self, task_id, stage, solved):
        return False

    def _state_dict(self):
        return {"draws": self.draws}

    def _load_state_dict(self, state):
        self.draws = state["draws"]


class Driver(RLController):
    """The real driver with the fakes wired in place of Ray actors."""

    def __init__(self, config, events: list, die_at: int | None = None, placement: Placement = CPU):
        self.events, self.die_at, self.lines = events, die_at, []
        super().__init__(config, self.lines.append, placement)

    def _new_task_actor(self):
        self.task_actor = FakeTasks(self.events)

    def _kill_actors(self):
        pass

    def _start_actors(self, learner_ckpt):
        r = FakeRollout(self.events)
        r.rollout = OpenCounting(r)
        self.rollouts = [r]
        self.learner = FakeLearner(self.events, learner_ckpt, self.die_at)

    def _get(self, refs, what, timeout=None):
        def one(ref):
            return ref.thunk() if ref.thunk is not None else ref.value
        return [one(r) for r in refs] if isinstance(refs, list) else one(refs)


def _config(tmp: Path, *sets: str):
    return load_config(None, ['model="unused"', f'records.out="{tmp}"', 'records.run_id="ov"', "steps=4",
                              "episodes.group_size=4", "eval.every=2", "eval.tasks=1", "eval.samples=2",
                              "resample.max_rounds=1", *sets])


def _run(config, events, die_at=None):
    job = SimpleNamespace(run_location=str(Path(config.records.out) / config.records.run_id), pool=None)
    driver = Driver(config, events, die_at)
    driver.setup(job)
    try:
        driver.run()
    finally:
        driver.close()
    return driver, job.run_location


def _kinds(events, *names):
    return [e for e in events if e[0] in names]


def test_the_next_rollout_is_sent_before_the_learner_step_and_collected_after_it(tmp_path):
    events: list = []
    driver, run = _run(_config(tmp_path, "offpolicy.overlap=true"), events)
    assert driver.overlap.on
    order = [e if e[0] in ("learn",) else e[:2] for e in _kinds(events, "send", "collect", "learn", "save", "load")]
    g = "a1-s{:06d}-r0-g0".format
    e = "a1-s{:06d}-eval-g0".format
    assert order == [
        ("send", g(1)), ("collect", g(1)),                     # step 1: nothing was in flight
        ("send", g(2)), ("learn", 0, [0]), ("save", 1),         # step 2's rollout beside step 1's learner step
        ("collect", g(2)), ("load", 1),                         # step 2: collected, then v1 loaded
        ("send", g(3)), ("learn", 1, [0]), ("save", 2),         # step 2 trains on v0 samples at v1
        ("collect", g(3)), ("load", 2),                         # the evaluation of step 2 waits for them
        ("send", e(2)), ("collect", e(2)),
        ("send", g(4)), ("learn", 2, [1]), ("save", 3),         # step 3 (its rollout collected before)
        ("collect", g(4)), ("load", 3),
        ("learn", 3, [2]), ("save", 4), ("load", 4),            # the last step: nothing in flight, loaded at once
        ("send", e(4)), ("collect", e(4))]
    # the engine generated every rollout of step s >= 2 with the version before the learner's
    assert [c[2] for c in _kinds(events, "collect") if "-r0-" in c[1]] == [0, 0, 1, 2]
    steps = load(run, Table.STEPS)
    assert list(steps["step"]) == [1, 2, 3, 4]
    assert list(steps["version_before"]) == [0, 0, 1, 2] and list(steps["version_after"]) == [1, 2, 3, 4]
    assert list(steps["staleness_max"]) == [0, 1, 1, 1] and list(steps["dropped_stale"]) == [0] * 4
    assert list(steps["samples_trained"]) == [4] * 4  # staleness-1 samples are trained on
    rows = load(run, Table.ROLLOUTS)
    train = rows[rows["kind"] == "train"]
    assert train["trained"].all() and set(train["staleness"]) == {0, 1}
    assert list(train.groupby("step")["learner_version"].first()) == [0, 1, 2, 3]
    evals = load(run, Table.EVALS)
    assert list(evals["policy_version"]) == [2, 4]
    logs = [x for x in driver.lines if x.startswith("jobs.rl: step 2/4")]
    assert "v1->v2" in logs[0] and "samples 4 of v0 (staleness 1)" in logs[0] and "overlap" in logs[0]
    assert any("rolling out 1 group(s) on v0 beside step 1's learner step" in x for x in driver.lines)

    sync: list = []
    _run(_config(tmp_path / "sync"), sync)
    assert all(versions == [learner] for _, learner, versions in _kinds(sync, "learn"))  # on-policy
    assert [x[1] for x in _kinds(sync, "draw")] == [x[1] for x in _kinds(events, "draw")]  # the same draws
    assert list(load(tmp_path / "sync" / "ov", Table.STEPS)["staleness_max"]) == [0] * 4


def test_killed_in_a_learner_step_with_a_rollout_in_flight_resumes_with_no_step_lost_or_doubled(tmp_path):
    config = _config(tmp_path, "offpolicy.overlap=true", "eval.every=0")
    first: list = []
    with pytest.raises(Killed):
        _run(config, first, die_at=3)  # dies in step 3's learner step; step 4's rollout is in flight
    assert ("send", "a1-s000004-r0-g0", 2) in first  # generated by v2 beside step 3's learner step
    second: list = []
    driver, run = _run(config, second)
    assert any("resuming after step 2" in x for x in driver.lines)
    # step 3's tasks drawn again, the same ones: the checkpoint kept the curriculum before that draw
    drawn_first = [x[1] for x in _kinds(first, "draw")]
    assert [x[1] for x in _kinds(second, "draw")] == drawn_first[2:4]
    assert [x[2] for x in _kinds(second, "learn")] == [[2], [2]]  # step 3 redone on v2 (on-policy), step 4 one behind
    steps = load(run, Table.STEPS)
    assert list(steps["step"]) == [1, 2, 3, 4] and list(steps["attempt"]) == [1, 1, 2, 2]
    assert list(steps["version_after"]) == [1, 2, 3, 4] and list(steps["staleness_max"]) == [0, 1, 0, 1]
    assert len(read_raw(run, Table.STEPS)) == 4  # the killed step 3 wrote no row
    train = load(run, Table.ROLLOUTS)
    assert train["episode_id"].is_unique and sorted(set(train["step"])) == [1, 2, 3, 4]


def test_overlap_needs_an_awake_engine_and_a_staleness_bound_of_one():
    with pytest.raises(ConfigError, match=r"overlap.*max_staleness must be >= 1"):
        load_config(None, ['model="m"', "offpolicy.overlap=true", "offpolicy.max_staleness=0"])
    with pytest.raises(ConfigError, match=r"\[offpolicy\] overlap.*\[engine\] sleep_level = 1"):
        load_config(None, ['model="m"', "offpolicy.overlap=true", "engine.sleep_level=1"])
    assert load_config(None, ['model="m"', "offpolicy.overlap=true", "engine.sleep_level=0"]).offpolicy.overlap
    assert not load_config(None, ['model="m"']).offpolicy.overlap  # off by default
    asleep = Placement(PlacementMode.COLOCATED, 0.5, 1, 0.25, 1, 0.25, 1, "the learner does not fit beside it")
    off = decide_overlap(True, asleep)
    assert not off.on and "runs synchronously" in off.reason and "does not fit" in off.reason
    assert decide_overlap(True, CPU).on and not decide_overlap(False, CPU).on


def test_a_placement_that_puts_the_engine_to_sleep_falls_back_to_the_synchronous_loop(tmp_path):
    asleep = Placement(PlacementMode.COLOCATED, 0.5, 1, 0.25, 1, 0.25, 1, "the GPU's memory is unknown")
    driver = Driver(_config(tmp_path, "offpolicy.overlap=true"), [], placement=asleep)
    assert not driver.overlap.on and "the GPU's memory is unknown" in driver.overlap.reason
