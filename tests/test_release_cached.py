"""The parent empties its CUDA cache between stages only for large inputs and only when the device
has less free memory than the candidate's whole limit plus twice the inputs (`_release_cached`):
never short of what emptying after every case left it, without freeing and allocating again the
6.4 GB blocks of KernelBench's ReLU on a device that has room (the driver is faked: no GPU needed)."""

import torch

from kgym.verify.parent import verifier as verifier_mod

GB = 1 << 30


def _calls(monkeypatch, free: int) -> list[str]:
    calls: list[str] = []
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (free, 141 * GB))
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: calls.append("empty_cache"))
    return calls


def test_the_cache_is_emptied_only_when_the_candidate_could_be_short(monkeypatch):
    cuda = torch.device("cuda", 0)
    big = [torch.empty(4096, 393216, device="meta"), 3]  # 6.4 GB of fp32 and a scalar input
    limit = 32 * GB
    size = 4096 * 393216 * 4
    calls = _calls(monkeypatch, limit + 2 * size)  # room for the limit and the candidate's buffers
    verifier_mod._release_cached(cuda, big, limit)
    assert calls == []
    calls = _calls(monkeypatch, limit + 2 * size - 1)
    verifier_mod._release_cached(cuda, big, limit)
    assert calls == ["empty_cache"]
    calls = _calls(monkeypatch, 0)  # small inputs keep the cache, as before
    verifier_mod._release_cached(cuda, [torch.empty(1000, device="meta")], limit)
    verifier_mod._release_cached(torch.device("cpu"), big, limit)
    verifier_mod._release_cached(cuda, None, limit)
    assert calls == []
