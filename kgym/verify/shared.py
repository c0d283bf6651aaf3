"""Tensors the trusted parent lends to the candidate's process without copying them through a pipe.

The parent always allocates: input clones and the output buffer live in memory the parent owns, so
the child never names a buffer for the parent to open (a hostile child could otherwise point the
parent at memory of its choosing). On CPU the buffer is a file in a private folder under /dev/shm,
mapped by both processes; on CUDA it is a CUDA IPC handle of a parent allocation.

CUDA IPC maps the whole cudaMalloc segment a tensor lies in, not the tensor (CUDA's programming guide
warns of it: other sub-allocations of the block are shared too). From the caching allocator's shared
pool the child would map, and could read and write with out-of-bounds pointers in a Triton kernel,
whatever else of the parent's lies in that segment: reference outputs, the pristine copies the
inputs are compared with, the next case's inputs. So every buffer lent to one candidate is allocated
in a memory pool of that candidate's own (`torch.cuda.MemPool`, one per arena): its segments hold
lent buffers and nothing of the parent's, and the allocator's segments are whole multiples of 2 MiB,
which the driver does not sub-allocate either. Lent buffers may share a segment with one another:
the candidate is lent all of them anyway. A freed lent block is reused for the candidate's next
lent buffer once the child has released it (`torch.cuda.ipc_collect` before each lending: a pool
per buffer never reused one, and on an H200 five cases of a 6.4 GB task held up to 134 GB of the
GPU's 139).

A mapping reaches past its tensor: on the CPU the last page of a buffer's file (mmap maps whole pages),
on CUDA the rest of its block and segment. A Triton kernel reaches it with an out-of-bounds offset from
the lent tensor, and the timed batch lends the same buffers to every run, so bytes a run left there
were read by the next: weight-only work done once and read back by every later timed run (red team on
speed credit, 2026-12-07, tests/exploits/test_lent_tail_carry.py). On the CPU each file is whole pages
and the parent rewrites every byte past each lent tensor with poison before every forward and every
timed run (`poison_tails`), so nothing a run leaves there reaches another. CUDA: not done yet (the
pool's free space and block slack; see the test).

A handle is plain data pickled parent -> child only; nothing from the child is ever unpickled.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any

import torch

_counter = itertools.count()
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096  # what mmap maps whole
TAIL_POISON = 0xFF  # NaN in every floating dtype, -1 in integers (the kept-state rule's byte)


@dataclass(frozen=True)
class SharedHandle:
    device: str
    dtype: str  # e.g. "float32"
    shape: tuple[int, ...]
    path: str | None = None  # CPU: the mapped file
    nbytes: int = 0
    cuda_args: tuple[Any, ...] | None = None  # CUDA: arguments of torch's rebuild_cuda_tensor


def dtype_from_name(name: str) -> torch.dtype:
    dt = getattr(torch, name, None)
    if not isinstance(dt, torch.dtype):
        raise ValueError(f"not a torch dtype: {name!r}")
    return dt


class SharedArena:
    """Owns the parent's shared buffers for one candidate; `close()` releases them all."""

    def __init__(self, device: torch.device):
        self.device = device
        self.dir = tempfile.mkdtemp(prefix="kgym-shm-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        os.chmod(self.dir, 0o700)
        self._alive: list[torch.Tensor] = []
        self._files: dict[int, tuple[str, int, int, int]] = {}  # CPU: id(buffer) -> (path, st_dev, st_ino, size)
        self._tails: dict[int, torch.Tensor] = {}  # CPU: id(buffer) -> its file's bytes past the buffer
        self._pool: Any = None  # CUDA: the memory pool of every buffer lent to this candidate

    def empty(self, shape: tuple[int, ...], dtype: torch.dtype) -> tuple[torch.Tensor, SharedHandle]:
        """A new contiguous buffer that both processes can see."""
        name = str(dtype).removeprefix("torch.")
        numel = 1
        for s in shape:
            numel *= s
        if self.device.type == "cuda":
            if self._pool is None:
                self._pool = lent_memory_pool(self.device)
            # A lent block the child has let go of stays held (torch's CUDA IPC "limbo") until the
            # producer collects it: without this every case's buffers stayed until the candidate ended.
            torch.cuda.ipc_collect()
            t = empty_in_pool(self._pool, shape, dtype, self.device)
            from torch.multiprocessing.reductions import reduce_tensor

            _, args = reduce_tensor(t)
            handle = SharedHandle("cuda", name, tuple(shape), cuda_args=tuple(args))
        else:
            # Whole pages: every byte the child's mapping reaches is in the parent's storage, and the
            # bytes past the tensor are poison, rewritten before every run (`poison_tails`).
            nbytes = -(-max(numel * dtype.itemsize, 1) // PAGE_BYTES) * PAGE_BYTES
            path = os.path.join(self.dir, f"t{next(_counter)}")
            raw = torch.from_file(path, shared=True, size=nbytes, dtype=torch.uint8)
            t = raw[: numel * dtype.itemsize].view(dtype).view(shape)
            handle = SharedHandle("cpu", name, tuple(shape), path=path, nbytes=nbytes)
            st = os.stat(path)
            self._files[id(t)] = (path, st.st_dev, st.st_ino, nbytes)
            self._tails[id(t)] = raw[numel * dtype.itemsize:]
            self._tails[id(t)].fill_(TAIL_POISON)
        self._alive.append(t)
        return t, handle

    def share_copy(self, src: torch.Tensor) -> tuple[torch.Tensor, SharedHandle]:
        t, h = self.empty(tuple(src.shape), src.dtype)
        t.copy_(src)
        return t, h

    def free(self, *tensors: torch.Tensor) -> None:
        """Drop buffers the child is done with (multi-GB cases must not pile up)."""
        ids = {id(t) for t in tensors}
        self._alive = [t for t in self._alive if id(t) not in ids]
        for i in ids:
            self._files.pop(i, None)
            self._tails.pop(i, None)

    def poison_tails(self) -> None:
        """Rewrite every byte past each live lent buffer with poison (CPU: the rest of its file's last
        page), so nothing a kernel wrote out of bounds of a lent tensor reaches a later forward or timed
        run. Called by the parent before every forward and every timed run (the child's process is
        waiting for its command then). CUDA: nothing yet (module docstring)."""
        for tail in self._tails.values():
            tail.fill_(TAIL_POISON)

    def shrunk(self) -> str | None:
        """CPU: why a lent buffer's file is no longer whole (the candidate truncated, removed or replaced
        it), else None. A mapped page past a file's end is a SIGBUS in whoever touches it: checked after
        every reply, before the parent reads or writes a lent buffer. The file at each path must still be
        the inode the parent mapped (a mapped inode is never freed, so its number is not reused) and at
        least its size. Landlock refuses all three outright (confine.py); this check is what is left
        where the kernel has none. No descriptor is held (a hybrid lends every parameter)."""
        for path, dev, ino, nbytes in self._files.values():
            try:
                st = os.stat(path)
            except OSError:
                st = None
            if st is None or (st.st_dev, st.st_ino) != (dev, ino):
                return (f"a buffer the parent lent ({os.path.basename(path)}) was removed or replaced: the "
                        f"candidate's process may write a lent buffer's contents, never its file")
            if st.st_size < nbytes:
                return (f"a buffer the parent lent was cut to {st.st_size} of its {nbytes} bytes (its file "
                        f"truncated): the candidate's process may write a lent buffer's contents, never its size")
        return None

    def close(self) -> None:
        self._files.clear()
        self._tails.clear()
        self._alive.clear()
        self._pool = None  # its segments go back to the driver at the next empty_cache once unused
        shutil.rmtree(self.dir, ignore_errors=True)


def _cuda_index(device: torch.device) -> int:
    return device.index if device.index is not None else torch.cuda.current_device()


def lent_memory_pool(device: torch.device) -> Any:
    """A CUDA memory pool on `device` for buffers lent to one candidate (see the module docstring)."""
    with torch.cuda.device(_cuda_index(device)):
        return torch.cuda.MemPool()


def empty_in_pool(pool: Any, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A CUDA tensor allocated in `pool`. Only this thread's allocations inside the block go there:
    those of other threads, and of this thread after it, go to their usual pools."""
    index = _cuda_index(device)
    with torch.cuda.use_mem_pool(pool, device=index):
        return torch.empty(shape, dtype=dtype, device=torch.device("cuda", index))


# Bound when the child imports this module, before the candidate exists: open_handle runs under the
# dispatch guard after the candidate is loaded and must not look anything up that it could replace.
_storage_from_file = torch.UntypedStorage.from_file
_empty = torch.empty
_set = torch._C.TensorBase.set_


def open_handle(h: SharedHandle) -> torch.Tensor:
    """In the child: map a buffer the parent lent. Only allocation and set_ reach the dispatcher
    (the guard allows them), so this needs no exemption from the guard."""
    if type(h) is not SharedHandle:
        raise TypeError("not a SharedHandle")
    dtype = dtype_from_name(h.dtype)
    if h.device == "cuda":
        return _rebuild_cuda_tensor(*h.cuda_args)
    storage = _storage_from_file(h.path, True, h.nbytes)
    strides, step = [], 1
    for s in reversed(h.shape):
        strides.append(step)
        step *= s
    # Typed from the start (set_ with size and strides): no bit-cast view, which the guard refuses.
    return _set(_empty(0, dtype=dtype), storage, 0, tuple(h.shape), tuple(reversed(strides)))


from torch.multiprocessing.reductions import rebuild_cuda_tensor as _rebuild_cuda_tensor  # noqa: E402
