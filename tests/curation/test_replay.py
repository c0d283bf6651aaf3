"""Gym replay rows: successful episodes from RL records, last passing turn, deduplicated, capped per
family, prompts rebuilt from the recorded specs, through the funnel's length filter. No verifier:
the records are written here from hand-made verdicts."""

from __future__ import annotations

import json

import synthetic
from curation_helpers import curate_config

from kgym.contract import Episode, Gate, Verdict
from kgym.curation import Stage, curate
from kgym.curation.episode_replay import replay_rows
from kgym.records.record import make_record
from kgym.records.writer import RecordWriter
from kgym.tasks import make


def _write(records, run_id="rl-run"):
    relu = [make("relu-v1", s, size="tiny") for s in range(4)]
    soft = make("softmax-v1", 0, size="tiny")
    ok = Verdict(passed=True, speedup_eager=1.5)
    bad = Verdict().fail(Gate.CORRECTNESS, "wrong")
    twin = relu[2].solution + "\n# g2\n"
    rows = [
        (relu[0], relu[0].wrong, bad, Episode("g0", 0, 0)),  # a repair episode: wrong first...
        (relu[0], relu[0].solution + "\n# turn 1\n", Verdict(passed=True, speedup_eager=0.9), Episode("g0", 0, 1)),
        (relu[0], relu[0].solution + "\n# turn 2\n", ok, Episode("g0", 0, 2)),  # ...its last pass is the answer
        (relu[1], relu[1].solution + "\n# g1\n", ok, Episode("g1", 0, 0)),
        (relu[2], twin, Verdict(passed=True, speedup_eager=3.0), Episode("g2", 0, 0)),
        (relu[3], twin, Verdict(passed=True, speedup_eager=2.0), Episode("d0", 0, 0)),  # the same answer again
        (relu[3], relu[3].wrong, bad, Episode("g3", 0, 0)),  # never succeeded
        (soft, soft.solution, ok, Episode("s0", 0, 0)),
        (relu[3], relu[3].solution, ok, None),  # not an episode (a farm verification)
    ]
    with RecordWriter(records, run_id, "rl") as w:
        for task, cand, v, ep in rows:
            w.write(make_record(task=task.spec.to_dict(), candidate_source=cand, verdict=v, episode=ep))
    return records / run_id


def test_replay_rows(tmp_path):
    path = _write(tmp_path)
    rows, counts = replay_rows([path], per_family=2)
    assert counts.episodes == 5  # g0, g1, g2, d0, s0
    assert counts.duplicates == 1 and counts.over_cap == 1 and counts.unbuildable == 0
    assert counts.by_family == {"elementwise": 2, "softmax": 1}
    relu = [r for r in rows if r.family == "elementwise"]
    assert [r.speedup_eager for r in relu] == [3.0, 1.5]  # fastest first, within the cap
    assert all("class Model(" in r.prompt for r in rows)
    assert not any(r.answer.endswith("# turn 1\n") for r in rows)  # an episode's last passing turn only


def test_replay_rows_join_the_dataset(tmp_path, tiny_dir):
    path = _write(tmp_path / "rl")
    source = tmp_path / "kb.jsonl"  # only rows that leave before verification: nothing is verified
    source.write_text("".join(json.dumps(r) + "\n" for r in synthetic.rows(False) if r["uuid"] in ("no-answer",)))
    config = curate_config(tmp_path, source, tiny_dir, replay=(str(path),), replay_per_family=40, kernelbench=None)
    result = curate(config, backend=None)
    assert result.report.counts[Stage.GYM_ROWS] == 4 and result.report.counts[Stage.ROWS] == 4
    assert result.report.verified == 0
    assert {r.source for r in result.rows} == {"gym"} and all(r.n_tokens for r in result.rows)
