"""A learning test that can tell learning from drift: on a toy task the tiny model learns within a CI
budget, over three seeds, against a frozen-policy control, and a shuffled-reward run in the same test
does not pass the same criterion.

The experiment and the criterion are tests/rl/learning_toy.py's (the task, the arms, why the model is
sharpened and lr is 1e-3). Per seed three arms run with the same sampling draws: trained on the true
reward, frozen (never steps), and shuffled (trained on the group's rewards permuted among its answers:
the same numbers with no link to the answer). Each is scored on the true reward. The criterion is a
paired bootstrap (kgym.bootstrap.paired_bootstrap) of arm - frozen over the last LAST steps, pairs
(seed, step): the 95% interval must lie above 0 pooled and for every seed alone. The trained arm must
pass it; the shuffled arm must not, and its pooled interval must reach 0 or lie below. No fixed margin.

Why: the previous single-seed test (late trained > late frozen + 0.2) passed with random rewards at
its own seed on 1 of 10 noise streams (benchmarks/rl_learning.py learner, docs/rl.md, "Learning
evidence against controls"): AdamW moves every weight by about lr a step whatever the gradient, and
on the sharpened model that drift alone moved one seed's late reward by up to +0.57 over the frozen
arm. The pooled interval alone is not enough either (steps of one run are correlated): it lay above 0
for 2 of 20 negative-control streams at these seeds; requiring every seed too, 0 of 20.
"""

from __future__ import annotations

import pytest

pytest.importorskip("peft")
import learning_toy as lt  # noqa: E402 - tests/rl is on sys.path (conftest)

SEEDS = (0, 1, 2)
STEPS, LAST = 16, 6


@pytest.fixture(scope="module")
def sharp_dir(tiny_dir, tmp_path_factory):
    return lt.sharpen(tiny_dir, tmp_path_factory.mktemp("tiny-sharp"))


def test_mean_reward_rises_against_the_frozen_policy_and_not_with_shuffled_rewards(sharp_dir):
    runs = {arm: {s: lt.run_arm(sharp_dir, arm, s, STEPS) for s in SEEDS}
            for arm in (lt.Arm.TRAINED, lt.Arm.FROZEN, lt.Arm.SHUFFLED)}
    for s in SEEDS:  # same seed, same policy before the first update: the pairs start equal
        assert runs[lt.Arm.TRAINED][s][0] == runs[lt.Arm.FROZEN][s][0] == runs[lt.Arm.SHUFFLED][s][0]
    trained = lt.judge(runs[lt.Arm.TRAINED], runs[lt.Arm.FROZEN], LAST)
    shuffled = lt.judge(runs[lt.Arm.SHUFFLED], runs[lt.Arm.FROZEN], LAST)
    print(f"\ntrained - frozen: {trained}\nshuffled - frozen: {shuffled}")
    assert trained.learned
    # the negative control, judged by the same rule, must not pass it
    assert not shuffled.learned
    assert shuffled.pooled.ci95[0] <= 0.0
