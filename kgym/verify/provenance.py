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
"""

from __future__ import annotations


class Provenance:
    def __init__(self) -> None:
        self.protected: set[int] = set()  # storages of inputs and parameters: never Triton results
        self.reset()

    def reset(self) -> None:
        self.fresh: set[int] = set()
        self.tainted: set[int] = set()
        self.triton: set[int] = set()

    def allocated(self, ptr: int) -> None:
        self.fresh.add(ptr)
        self.tainted.discard(ptr)  # a new allocation at a recycled address
        self.triton.discard(ptr)

    def copied(self, dst: int, src: int | None) -> None:
        """torch wrote into `dst`: a fill (src None) or a copy of `src`."""
        if src is None or dst == src:
            return
        if src in self.triton and src not in self.tainted and src not in self.protected:
            self.triton.add(dst)
        else:
            self.tainted.add(dst)
            self.triton.discard(dst)

    def launched(self, ptrs: list[int]) -> None:
        for p in ptrs:
            if p not in self.tainted and p not in self.protected:
                self.triton.add(p)

    def written_by_triton(self, ptr: int) -> bool:
        return ptr in self.triton and ptr not in self.tainted and ptr not in self.protected
