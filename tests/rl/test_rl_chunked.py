"""Memory bounded by the token budget: chosen-token log-probs computed `chunk` rows at a time equal the
unchunked computation (values and gradients), and no tensor holding more than `chunk` vocabulary
rows is ever allocated, in the forward or the backward, neither in `kgym.rl.chunked_logprobs` nor in a
whole `Learner.step` on a long episode. The same check on the unchunked path (`logits_chunk=0`, the
code before issue 28) finds a tensor of every completion position's logits: it is what the test pins."""

from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from kgym.rl import Sample, TrainBatch, chunked_logprobs, token_logprobs_and_entropy


class VocabRows(TorchDispatchMode):
    """Records the most vocabulary-sized rows any op's new float output held (views excluded: a
    transposed weight is not an allocation)."""

    def __init__(self, vocab: int):
        super().__init__()
        self.vocab, self.max_rows = vocab, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if not func.is_view:
            for x in tree_flatten(out)[0]:
                if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() and x.shape[-1] == self.vocab:
                    self.max_rows = max(self.max_rows, x.numel() // self.vocab)
        return out


V, H = 97, 16


def _inputs(n: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(n, H, generator=g).requires_grad_(True)
    head = torch.nn.Linear(H, V, bias=False)
    with torch.no_grad():
        head.weight.copy_(torch.randn(V, H, generator=g))
    targets = torch.randint(0, V, (n,), generator=g)
    return hidden, head, targets


@pytest.mark.parametrize("n, chunk", [(257, 64), (255, 1), (31, 300), (128, 128)])
def test_chunked_equals_unchunked_values_and_gradients(n, chunk):
    hidden, head, targets = _inputs(n)
    lp, ent = chunked_logprobs(hidden, head, targets, temperature=0.7, chunk=chunk, entropy_grad=True)
    (lp.sum() + 0.3 * ent.sum()).backward()
    g_hidden, g_head = hidden.grad.clone(), head.weight.grad.clone()
    hidden.grad = None
    head.weight.grad = None
    lp0, ent0 = token_logprobs_and_entropy(head(hidden), targets, 0.7, True)
    (lp0.sum() + 0.3 * ent0.sum()).backward()
    assert torch.allclose(lp, lp0, atol=1e-5) and torch.allclose(ent, ent0, atol=1e-5)
    assert torch.allclose(g_hidden, hidden.grad, atol=1e-5) and torch.allclose(g_head, head.weight.grad, atol=1e-5)


def test_no_grad_and_empty_inputs():
    hidden, head, targets = _inputs(40)
    with torch.no_grad():
        lp, _ = chunked_logprobs(hidden, head, targets, chunk=7)
    assert not lp.requires_grad and lp.shape == (40,)
    e_lp, e_ent = chunked_logprobs(hidden[:0], head, targets[:0], chunk=7)
    assert e_lp.shape == (0,) and e_ent.shape == (0,)
    with pytest.raises(ValueError):
        chunked_logprobs(hidden, head, targets, chunk=0)


def test_no_tensor_of_every_rows_logits_forward_and_backward():
    n, chunk = 1000, 64
    hidden, head, targets = _inputs(n)
    with VocabRows(V) as seen:
        lp, ent = chunked_logprobs(hidden, head, targets, chunk=chunk, entropy_grad=True)
        (lp.sum() + ent.sum()).backward()
    assert 0 < seen.max_rows <= chunk
    with VocabRows(V) as unchunked:  # the check has teeth: the full computation is seen
        lp, ent = token_logprobs_and_entropy(head(hidden), targets, 1.0, True)
        (lp.sum() + ent.sum()).backward()
    assert unchunked.max_rows >= n


# ---- the learner -------------------------------------------------------------------------------

pytest.importorskip("peft")
from kgym.training.learner_core import Learner, LearnerConfig  # noqa: E402


def long_batch(c: int = 400) -> TrainBatch:
    g = torch.Generator().manual_seed(5)
    mask = [1] * c
    mask[100:140] = [0] * 40  # a tool result inside the long episode
    long = Sample(prompt_ids=torch.randint(3, 1000, (20,), generator=g).tolist(),
                  completion_ids=torch.randint(3, 1000, (c,), generator=g).tolist(), loss_mask=mask,
                  group_id="g", reward=1.0)
    short = Sample(prompt_ids=torch.randint(3, 1000, (7,), generator=g).tolist(),
                   completion_ids=torch.randint(3, 1000, (9,), generator=g).tolist(), loss_mask=[1] * 9,
                   group_id="g", reward=0.0)
    return TrainBatch((long, short))


def learner(tiny_dir, chunk: int) -> Learner:
    return Learner(LearnerConfig(model_path=str(tiny_dir), quantize_4bit=False, compute_dtype="float32", device="cpu",
                                 lr=1e-3, logits_chunk=chunk, temperature=0.8))


def test_learner_step_never_holds_a_long_episodes_logits(tiny_dir):
    batch = long_batch()
    chunked, full = learner(tiny_dir, 32), learner(tiny_dir, 0)
    vocab = chunked.model.config.vocab_size
    assert vocab not in (427, 416)  # no sequence width may pass for a vocabulary row
    with VocabRows(vocab) as seen:
        m = chunked.step(batch)  # reference + old log-probs (no grad), forward + backward
    assert m.status == "ok" and m.micro_batches == 1
    assert 0 < seen.max_rows <= 32
    with VocabRows(vocab) as unchunked:
        full.step(batch)
    assert unchunked.max_rows >= 400  # every completion position's logits at once: what chunking removes


def test_learner_chunked_equals_unchunked(tiny_dir):
    batch = long_batch(150)
    chunked, full = learner(tiny_dir, 7), learner(tiny_dir, 0)
    for a, b in zip(chunked.logprobs(batch), full.logprobs(batch)):
        assert torch.allclose(a, b, atol=1e-5)
    m1, m2 = chunked.step(batch), full.step(batch)
    assert m1.loss == pytest.approx(m2.loss, abs=1e-6) and m1.entropy == pytest.approx(m2.entropy, abs=1e-5)
    assert m1.grad_norm == pytest.approx(m2.grad_norm, rel=1e-4)
    a, b = chunked.adapter_state(), full.adapter_state()
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)  # Adam's first step magnifies noise: 1e-3 of lr


def test_models_that_postprocess_logits_are_refused_chunked(tiny_dir):
    from kgym.training.learner_model import check_chunkable

    model = learner(tiny_dir, 32).model
    check_chunkable(model)
    model.get_base_model().config.final_logit_softcapping = 30.0
    with pytest.raises(ValueError, match="logits_chunk = 0"):
        check_chunkable(model)
