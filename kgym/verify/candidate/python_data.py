"""Python data handed to torch: how much of it, and the bound (issue 29, the Python-data rule).

Construction (the candidate's import and `ModelNew(...)`) is neither timed nor checked, and the
dispatch guard judges torch's ops: Python's own arithmetic is no op. So an operation tabulated in
Python (sigmoid over all 65536 fp16 bit patterns with `math`) and handed to torch as data was
allocation and a copy, and a Triton gather answered forward (reward 0.5 on the CPU). What this module
counts is that data: the values a candidate gives torch that no torch op computed.

At dispatch level (torch 2.13) Python data shows up as:
- `lift_fresh` / `lift_fresh_copy`: every tensor built from Python values (`torch.tensor`,
  `torch.Tensor(list)`, `torch.HalfTensor(list)`, `x.new_tensor`, `x.new(list)`, a typed storage
  from a list, `t[i] = 3.0`, which lifts a 0-d tensor first): the whole result is Python data;
- `set_` with a storage source: a tensor laid over a storage that was filled outside the dispatcher
  (`torch.UntypedStorage(list)`, `UntypedStorage.from_buffer(bytes)`, then `torch.HalfTensor(s)`;
  `torch.frombuffer`, `as_tensor` and `from_numpy` are refused before they run, by the policy and
  the escape tripwires); every element of the result counts, whatever filled the storage;
- one Python value per call of a fill (`fill_`/`fill` with a number, `full`, `full_like`,
  `new_full`, `scalar_tensor`) and of an RNG initialiser (`normal_(v, 0)`, `uniform_(v, v)` and
  `random_(v, v + 1)` write exactly `v`): a buffer written value by value this way is a table too.

The bound (`excess`): in the candidate's construction no tensor made from Python data may hold more
elements than the largest one the reference's construction makes, and all its Python data together
no more than the reference's construction's total, each with `ALLOWANCE` on top. The parent counts
the reference's `Model(*init_inputs)` (`guard.ConstructionRecorder`), the child the candidate's
import, `__init__` and `.to(device)` (`guard.ComputeGuard`'s init phase). Each call of forward gets
the allowance alone, per tensor and in all (the same table computed in Python at import and handed
to torch by the first forward, which is a checked hidden case but never timed). The harness's own
tensors (inputs, lent buffers; init inputs are JSON values) are made outside both counts.

Not covered: Python data that reaches a tensor without passing through torch as a value (a shape,
a stride, a storage offset, a view's index: a buffer filled element by element with copies of
chosen elements of another tensor), the reference's import (module-level tensors of a reference are
not counted for it), and which values are handed (the bound is a size: a candidate may replace the
reference's list with its own of the same size).
"""

from __future__ import annotations

from typing import Any

from kgym.verify import accessors

# Python data the candidate may hand torch beyond the reference's, per tensor and in all: the small
# constant tables a kernel author writes by hand (the 9 taps of a 3x3 filter, a handful of
# polynomial or minimax coefficients, a few scalars such as an epsilon or a fill value). 64 values is
# far below any table that replaces an operation on real inputs (an fp16 function has 65536 entries,
# even an int8 one 256), and above every honest constant list we know of.
ALLOWANCE = 64

# Ops whose result is a tensor holding Python data (see the module docstring).
LIFT_OPS = frozenset({"lift_fresh", "lift_fresh_copy"})
# Ops that write one Python value (a number argument) into a tensor.
FILL_OPS = frozenset({"fill_", "fill", "full", "full_like", "new_full", "scalar_tensor"})


def python_elements(name: str, args: tuple, out: Any, rng: bool) -> tuple[int, bool]:
    """(values of Python data an op hands torch, whether they form one tensor of that many elements)
    for an op that ran with `args` and returned `out`; `rng` says the op is an RNG initialiser."""
    if name in LIFT_OPS or (name == "set_" and len(args) > 1 and not accessors.is_plain_tensor(args[1])
                            and args[1] is not None):
        # torch.tensor(...)'s result, or a tensor laid over a storage no op of this process filled
        return (accessors.numel(out), True) if accessors.is_plain_tensor(out) else (0, False)
    if name in FILL_OPS:
        # fill_.Tensor / fill.Tensor copy a tensor's value, not Python's
        from_tensor = name in ("fill_", "fill") and len(args) > 1 and accessors.is_plain_tensor(args[1])
        return (0, False) if from_tensor else (1, False)
    if rng:
        return 1, False
    return 0, False


class PythonData:
    """A tally of the Python data one construction handed torch: the largest tensor made from it
    and the total of values (tensors' elements plus one per fill or RNG initialiser call)."""

    def __init__(self, largest: int = 0, total: int = 0) -> None:
        self.largest = largest
        self.total = total

    def add(self, n: int, tensor: bool) -> None:
        if tensor:
            self.largest = max(self.largest, n)
        self.total += n

    def as_message(self) -> list[int]:
        return [self.largest, self.total]

    @classmethod
    def from_message(cls, message: Any) -> PythonData:
        """The child's side of `as_message` (the parent wrote it); none: a reference that handed
        torch no Python data."""
        if not message:
            return cls()
        largest, total = message
        return cls(int(largest), int(total))


# What a forward's Python data is bounded by: nothing of the reference's, only the allowance.
NO_PYTHON_DATA = PythonData()


def excess(name: str, n: int, tensor: bool, tally: PythonData, reference: PythonData,
           construction: bool = True) -> str | None:
    """Why the op that just added `n` values to the candidate's `tally` breaks the bound, or None.
    `reference`: the reference's construction's Python data at construction, none in a forward."""
    why = ("the Python-data rule: a table computed in Python and handed to torch is the operation's work, done "
           "where nothing is timed")
    if construction:
        where, limit = "while the candidate was imported or built", "the reference's construction's ({}) plus {}"
    else:
        where, limit = "in forward()", "{} plus {} (a forward's allowance)"
    if tensor and n > reference.largest + ALLOWANCE:
        return (f"aten::{name} made a tensor of {n} elements from Python data {where}; its largest allowed: "
                f"{limit.format(reference.largest, ALLOWANCE)} ({why})")
    if tally.total > reference.total + ALLOWANCE:
        return (f"the candidate handed torch {tally.total} values of Python data {where} (the last by "
                f"aten::{name}); allowed in all: {limit.format(reference.total, ALLOWANCE)} ({why})")
    return None
