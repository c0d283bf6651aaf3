"""Where the output of one forward came from: the rule that a Triton kernel wrote it.

Views and copies are free under gate 3, so for a reference that only moves data (cat, transpose)
torch copies into slices of the output plus a decoy launch used to pass. This tracks storages (by
their base pointer) through one forward, as the dispatch guard and the launch hook see them:
- `fresh`: allocated in this forward (empty, zeros, full, ...): no content of any input in it;
- `tainted`: torch copied content into it from a storage that is not Triton-written (an input, a
  parameter, another tainted storage). Tainted is for good within the forward: a later launch
  taking it as an argument proves nothing, the kernel may never store to it;
- `triton`: passed to a Triton launch as a pointer argument while not tainted, or filled with a
  copy of such a storage (a dtype conversion of a Triton result).
The output passes if its storage is `triton` and not tainted. Fills never taint (they carry no
input). Inputs and parameters are never `triton`: a decoy kernel taking an input as an argument
does not make the input a kernel's result.

It also keeps each storage's `origin`, for the hybrid call rule (library.py): the role a library
call's operand has. Inputs and the module's parameters and buffers are `roots` (their roles, set per
forward); a whole copy of a storage (clone, contiguous, a copy_ over a whole storage) keeps its
source's origin; a fresh allocation that is only zero-filled is zeros; anything else a forward
writes (a Triton launch, a partial copy, a fill with another value) has none: computed. A parameter
torch wrote into, or that was ever handed to a Triton kernel (at construction too), loses its role
for good: the kernel may have rewritten it.
"""

from __future__ import annotations


class Provenance:
    def __init__(self) -> None:
        self.protected: set[int] = set()  # storages of inputs and parameters: never Triton results
        self.roots: dict[int, str] = {}  # storages of inputs and the module's state -> their roles
        # roots torch wrote into in some forward (a parameter overwritten with a computed bias): no
        # longer the reference's parameter, in this forward or any later one
        self.spoiled: set[int] = set()
        # every storage ever passed to a Triton launch, at construction too: a parameter among them
        # may have been rewritten by the kernel (scaled, summed with a bias), so it is no longer the
        # reference's parameter for the library call
        self.handed: set[int] = set()
        self.reset()

    def reset(self) -> None:
        self.fresh: set[int] = set()
        # allocated in this forward already filled with a constant (zeros, ones, full) and not written since:
        # a part of a join (cat, stack) that carries no input's content, so it neither taints the join nor
        # makes it a Triton result (`joined`); an `empty` part is not one (its bytes are whatever was there)
        self.constant: set[int] = set()
        self.tainted: set[int] = set()
        self.triton: set[int] = set()
        self.origin: dict[int, str] = {p: self._root_role(p, r) for p, r in self.roots.items()}
        # storage -> the parameter (or buffer) storage it is a whole copy of (itself for the roots): the
        # hybrid call's parameter operands are checked against the reference's values (library.py)
        self.param_of: dict[int, int] = {p: p for p, r in self.roots.items() if r == "param"}
        # storage -> (the storage it is a whole copy of, that one's state then): a whole copy put back into its
        # own source gives the source its own bytes and state again (`copied`); dropped once the copy is written
        self.snapshots: dict[int, tuple] = {}

    def _root_role(self, ptr: int, role: str) -> str:
        """An input's or a parameter's role, "written" for a parameter that may have been rewritten."""
        if role == "param" and (ptr in self.spoiled or ptr in self.handed):
            return "written"
        return role

    def allocated(self, ptr: int, zero: bool = False, constant: bool = False) -> None:
        self.snapshots.pop(ptr, None)
        self.fresh.add(ptr)
        (self.constant.add if constant else self.constant.discard)(ptr)
        self.tainted.discard(ptr)  # a new allocation at a recycled address
        self.triton.discard(ptr)
        self._set_origin(ptr, "zero" if zero else None)

    def _set_origin(self, ptr: int, role: str | None) -> None:
        if ptr in self.roots:  # torch wrote into an input or a parameter
            self.spoiled.add(ptr)
            self.origin[ptr] = self._root_role(ptr, self.roots[ptr])
            return
        self.param_of.pop(ptr, None)
        if role is None:
            self.origin.pop(ptr, None)
        else:
            self.origin[ptr] = role

    def written(self, ptr: int) -> None:
        """torch computed into `ptr` (a library call's result or out=): no role of its own."""
        self.snapshots.pop(ptr, None)
        self.constant.discard(ptr)
        self._set_origin(ptr, None)

    def copied(self, dst: int, src: int | None, whole: bool = False, zero: bool = False,
               layout: tuple = ()) -> None:
        """torch wrote into `dst`: a fill (src None; `zero` if with zeros) or a copy of `src`;
        `whole`: the write covered all of `dst`'s storage; `layout`: (dst's view, src's view), each as
        (shape, strides, storage offset, dtype).

        A whole copy of `dst` itself, taken earlier in this forward and not written since, copied back over
        all of `dst` (a restore: Triton's autotuner with `restore_value` clones its in-place output, runs each
        config, and copies the clone back) leaves `dst` its own bytes: `dst` gets back the state it had when
        the copy was taken. Before (the honest sweep's second round, verifier 26), the clone of a hybrid's
        library result was tainted (a copy of a storage no Triton kernel wrote) and so was the output it was
        restored into: every in-place autotuned epilogue of a hybrid failed isolation. Nothing moves: the
        bytes are the ones `dst` held (the same views both ways: a transposed view of the copy put back would
        move data), so no copy of torch's does a data movement a decoy launch then blesses."""
        self.snapshots.pop(dst, None)
        self.constant.discard(dst)
        if whole and src is not None and dst != src and dst not in self.roots and layout:
            own = self.snapshots.get(src)
            if own is not None and own[0] == dst and own[1] == (layout[1], layout[0]):
                _, _, was_triton, was_tainted, origin, param = own
                (self.triton.add if was_triton else self.triton.discard)(dst)
                (self.tainted.add if was_tainted else self.tainted.discard)(dst)
                if origin is None:
                    self.origin.pop(dst, None)
                else:
                    self.origin[dst] = origin
                if param is None:
                    self.param_of.pop(dst, None)
                else:
                    self.param_of[dst] = param
                return
        if whole and not zero and src is not None and dst != src and layout:
            self.snapshots[dst] = (src, layout, src in self.triton, src in self.tainted, self.origin.get(src),
                                   self.param_of.get(src))
        if dst != src:
            self._set_origin(dst, ("zero" if zero else self.origin.get(src)) if whole else None)
            if whole and not zero and src in self.param_of and dst not in self.roots:
                self.param_of[dst] = self.param_of[src]
        if src is None or dst == src:
            return
        if src in self.triton and src not in self.tainted and src not in self.protected:
            self.triton.add(dst)
        else:
            self.tainted.add(dst)
            self.triton.discard(dst)

    def joined(self, dst: int, parts: list[int]) -> None:
        """torch copied `parts` into `dst` (cat, stack): `dst` is a Triton result only if every part is one
        or a constant fill of this forward (`constant`: the zero column of an exclusive scan); any other
        part (an input, a parameter, a library result, an `empty`, a tainted copy) taints it."""
        for part in parts:
            if part in self.constant and part != dst:
                self.constant.discard(dst)
                self.snapshots.pop(dst, None)
                self._set_origin(dst, None)
                continue
            self.copied(dst, part)

    def launched(self, ptrs: list[int]) -> None:
        for p in ptrs:
            self.snapshots.pop(p, None)  # the kernel may have written it: no longer a copy of its source
            self.constant.discard(p)
            self.handed.add(p)
            # the kernel may have written it (an input it wrote fails the input check on its own)
            if p in self.roots:
                self.origin[p] = self._root_role(p, self.roots[p])
            else:
                self.origin.pop(p, None)
                self.param_of.pop(p, None)
            if p not in self.tainted and p not in self.protected:
                self.triton.add(p)

    def written_by_triton(self, ptr: int) -> bool:
        return ptr in self.triton and ptr not in self.tainted and ptr not in self.protected
