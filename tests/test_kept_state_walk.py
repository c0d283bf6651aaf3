"""The kept-state walk (`kept_state.reachable`) passes over classes that are not the candidate's
at once, and counts them toward MAX_ITEMS as when they went through its queue: a candidate class's
tensors are found, a foreign class's are not walked, and classes count toward the limit."""

import types

import torch

from kgym.verify.candidate import kept_state


def _module_with_classes(n_foreign: int) -> dict:
    mod = types.ModuleType("candidate")
    g = mod.__dict__
    exec("import torch\nclass Kept:\n    table = torch.arange(4.0)\n", g)  # noqa: S102 - a test's own source
    g["foreign"] = {f"c{i}": type(f"C{i}", (), {"__module__": "elsewhere", "t": torch.ones(2)})
                    for i in range(n_foreign)}
    g["linear"] = torch.nn.Linear
    return g


def test_candidate_classes_are_walked_and_foreign_ones_counted(monkeypatch):
    g = _module_with_classes(50)
    found, problem = kept_state.reachable(None, g)
    assert problem is None
    names = sorted(f.name for f in found.values())
    assert names == ["global Kept.table"], names  # the foreign classes' tensors are not the candidate's
    # 105 items: the count of the walk when every class went through its queue (verifier 15's code,
    # run on this module)
    monkeypatch.setattr(kept_state, "MAX_ITEMS", 104)
    _, problem = kept_state.reachable(None, g)
    assert problem is not None and "more than 104 objects" in problem
    monkeypatch.setattr(kept_state, "MAX_ITEMS", 105)
    assert kept_state.reachable(None, g)[1] is None
