"""Exploit: a repair episode chose to be dropped from training (red team, 2026-12-07).

An episode that ends on an evaluation kgym failed on (`Verdict.error`: the farm gave up, the verifier
raised) is never trained on (`flatten_episode` gives no sample). finalize accepted such an evaluation,
so a failing episode that met one error could finalize it and shed its negative reward, and the turn
limit scored the last submission even when an earlier one had a verdict. Now finalize refuses an
errored evaluation, a limit scores the last evaluation with a verdict, and an errored submission is
given back (no churn, not counted against the limit): the honest retry the status line asks for earns
the full reward. Only an episode whose every evaluation failed inside kgym still ends on the error.
A scripted evaluator: no verifier."""

from __future__ import annotations

import pytest

from kgym.contract import CaseResult, EndReason, Gate, Verdict
from kgym.episodes import EpisodeConfig, KernelEnv, score_group
from kgym.episodes.flatten import flatten_episode
from kgym.reward import reward

from episodes_helpers import call, passing_verdict, run, says


def failing_verdict() -> Verdict:
    return Verdict(gate=Gate.CORRECTNESS, reason="wrong",
                   cases=[CaseResult(n, False, 1.0, 1.0, False) for n in ("nominal", "x3", "neg")])


class FlakyEvaluator:
    """`# broken` in the code: kgym always fails on it; `# flaky`: fails the first time only; `# wrong`:
    a failing verdict; `# loose`: one within 1e-2 only; anything else passes."""

    def __init__(self):
        self.seen: set[str] = set()

    async def evaluate(self, request):
        code = request.candidate
        first = request.evaluation_id not in self.seen
        self.seen.add(request.evaluation_id)
        if "# broken" in code or ("# flaky" in code and first):
            return Verdict(error="farm gave up after 3 attempt(s): worker died")
        if "# loose" in code:  # wrong at 1e-4, right at 1e-2: loose credit when its whole group fails
            return Verdict(gate=Gate.CORRECTNESS, reason="close",
                           cases=[CaseResult(n, False, 1e-3, 1e-3, True) for n in ("nominal", "x3", "neg")])
        return failing_verdict() if "# wrong" in code else passing_verdict()


def submitted_id(step) -> str:
    return step.observation[0]["content"].split("evaluation_id: ")[1].split()[0]


def start(relu, max_turns: int = 10) -> KernelEnv:
    env = KernelEnv(FlakyEvaluator(), EpisodeConfig(max_turns=max_turns))
    run(env.reset(relu, "repair", episode_id="ep", group_id="g"))
    return env


def test_finalizing_an_errored_evaluation_is_refused(relu):
    env = start(relu)
    wrong = submitted_id(run(env.step(says(call("submit_kernel", code="x = 1  # wrong")))))
    broken = submitted_id(run(env.step(says(call("submit_kernel", code="x = 2  # broken")))))
    s = run(env.step(says(call("finalize", evaluation_id=broken))))
    assert not env.done and s.info["errors"] == 1 and "failed inside kgym" in s.observation[0]["content"]
    run(env.step(says(call("finalize", evaluation_id=wrong))))
    r = env.result()
    assert r.end_reason is EndReason.FINALIZED and r.error is None and r.reward == 0.0
    assert r.submissions == 1  # the errored one was given back
    assert "inside kgym" not in flatten_episode(r).reason  # trained on, given the sampler's tokens


def test_a_limit_scores_the_last_evaluation_with_a_verdict(relu):
    env = start(relu, max_turns=2)
    run(env.step(says(call("submit_kernel", code="x = 1  # wrong"))))
    run(env.step(says(call("submit_kernel", code="x = 2  # broken"))))
    r = env.result()
    assert r.end_reason is EndReason.TURN_LIMIT and r.error is None and r.reward == 0.0
    assert r.final.candidate == "x = 1  # wrong"


def test_honest_retry_after_a_kgym_error_earns_the_full_reward(relu):
    env = start(relu)
    code = "x = 3  # flaky"
    first = run(env.step(says(call("submit_kernel", code=code))))
    assert "submit again to retry" in first.observation[0]["content"] and "submissions left: 4 of 4" in \
        first.observation[0]["content"]
    again = submitted_id(run(env.step(says(call("submit_kernel", code=code)))))
    run(env.step(says(call("finalize", evaluation_id=again))))
    r = env.result()
    assert r.end_reason is EndReason.FINALIZED and r.error is None and r.submissions == 1
    assert r.reward == pytest.approx(reward(passing_verdict())) and r.reward > 0.5  # no churn for kgym's failure
    # the episode rests on the retry, not on the error under the same id: solved, and no loose credit for a
    # failing episode of its group (its pass was read back as the error before)
    assert r.final.verdict.error is None and r.solved
    other = start(relu)
    loose = submitted_id(run(other.step(says(call("submit_kernel", code="x = 4  # loose")))))
    run(other.step(says(call("finalize", evaluation_id=loose))))
    g = score_group([r, other.result()])
    assert not g.loose_applied and g.rewards == pytest.approx([r.reward, 0.0])


def test_an_episode_with_only_errors_still_ends_on_the_error(relu):
    env = start(relu, max_turns=1)
    run(env.step(says(call("submit_kernel", code="x = 2  # broken"))))
    r = env.result()
    assert r.end_reason is EndReason.TURN_LIMIT and r.error is not None and r.reward == 0.0


def test_errored_submissions_given_back_are_bounded(relu):
    """Giving errored submissions back must not make verifications unbounded: a message of many calls
    kgym fails on is verified at most 2 * max_submissions times."""
    env = KernelEnv(FlakyEvaluator(), EpisodeConfig(max_turns=3, max_submissions=2))
    run(env.reset(relu, "repair", episode_id="ep", group_id="g"))
    s = run(env.step(says(*[call("submit_kernel", f"c{i}", code=f"x = {i}  # broken") for i in range(10)])))
    verified = [m for m in s.observation if m["content"].startswith("evaluation_id:")]
    assert len(verified) == 4 and s.info["submissions"] == 2
    assert all("submission limit reached" in m["content"] for m in s.observation[4:])
