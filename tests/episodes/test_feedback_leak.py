"""What a repair turn's feedback tells the next submission about the hidden cases (red team by class,
2026-12-07): nothing that holds for the next submission's inputs.

The attack: the verifier's secret is one per farm, so every answer to a task used to meet the same
hidden inputs. Submission 1 is an honest ReLU except that its first output is its first input minus 8:
always wrong, so the details show "first mismatching case nominal: ... [0] got <x0 - 8> want ...",
and x0 is read back from the note. Submission 2 recognises the nominal case by that one value and is
right there alone (zeros everywhere else): it passed the nominal case and earned its share of the
reward, a kernel wrong on every input it had not been told about. Since the episode layer salts the
hidden cases with each answer's source hash (`kgym.episodes.evaluator.episode_request`), submission 2
meets fresh inputs and earns nothing. Honest: the reference solution passes every case in an episode
under the salt, and the same code twice meets the same inputs (one evaluation id, one verdict).
"""

import re

from kgym.contract import EvalRequest
from kgym.episodes import KernelEnv
from kgym.verify.parent.cases import N_CASES

from episodes_helpers import call, run, says

MATH = "    y = tl.maximum(x, 0.0)\n"


def _variant(solution: str, body: str) -> str:
    assert MATH in solution
    return solution.replace(MATH, body)


def _probe(relu) -> str:
    return _variant(relu.solution, "    y = tl.maximum(x, 0.0)\n    y = tl.where(offs == 0, x - 8.0, y)\n")


def _recogniser(relu, leaked: float) -> str:
    return _variant(relu.solution, "    x0 = tl.load(x_ptr)\n"
                                   f"    hit = tl.abs(x0 - {leaked!r}) < 1e-4\n"
                                   "    y = tl.where(hit, tl.maximum(x, 0.0), 0.0)\n")


def _eid(step) -> str:
    return step.observation[0]["content"].split("evaluation_id: ")[1].split()[0]


def test_a_probe_cannot_tell_the_next_submission_its_hidden_inputs(evaluator, relu):
    env = KernelEnv(evaluator)
    run(env.reset(relu, "repair", episode_id="ep-leak", group_id="g-leak"))
    first = _eid(run(env.step(says(call("submit_kernel", code=_probe(relu))))))
    details = run(env.step(says(call("inspect_evaluation", evaluation_id=first)))).observation[0]["content"]
    got = re.search(r"first mismatching case nominal: .*\[0\] got (\S+) want", details)
    assert got, details
    leaked = float(got.group(1)) + 8.0  # the nominal hidden case's first input, as the note showed it

    second = run(env.step(says(call("submit_kernel", code=_recogniser(relu, leaked)))))
    run(env.step(says(call("finalize", evaluation_id=_eid(second)))))
    r = env.result()
    nominal = next(c for c in r.final.verdict.cases if c.name == "nominal")
    # Unsalted (the same hidden inputs for every submission) the recogniser passed the nominal case and
    # finalized with 0.5/9 - churn > 0.
    assert not nominal.passed, f"the probe's note told submission 2 its hidden nominal input: {r.reward}"
    assert r.reward == 0.0


def test_salted_cases_keep_the_honest_answer_and_one_verdict_per_code(evaluator, relu):
    from kgym.episodes.evaluator import episode_request

    a, b = episode_request(relu, relu.solution), episode_request(relu, relu.solution)
    # one code, one salt, one evaluation id; the unsalted request (a curation run's) is another evaluation:
    # its hidden draws differ, so the farm's exactly-once keeping must not hand one's verdict to the other
    assert a.evaluation_id == b.evaluation_id != EvalRequest.for_task(relu, relu.solution).evaluation_id
    assert a.overrides["case_salt"] == b.overrides["case_salt"] != episode_request(relu, relu.wrong).overrides[
        "case_salt"]
    env = KernelEnv(evaluator)
    run(env.reset(relu, "repair", episode_id="ep-honest-salt", group_id="g-honest-salt"))
    s = run(env.step(says(call("submit_kernel", code=relu.solution))))
    assert f"passed: {N_CASES}/{N_CASES}" in s.observation[0]["content"]
    run(env.step(says(call("finalize", evaluation_id=_eid(s)))))
    assert env.result().reward >= 0.5
