"""The candidate's process writes files only where it may, enforced by the kernel (Landlock).

The audit hook (`audit.py`) refuses Python's `open` for writing outside the private dir, but native
code raises no audit event: `torch.UntypedStorage.from_file(path, True, n)` opens (and creates) any
path from C++ and maps it writable, and so do torch's zip writer, TorchScript's save, the profiler's
trace export and any native library. A candidate (static policy off) wrote a file of its choosing
next to the verifier: a module on the trusted parent's path, kgym's own source, the baseline cache.
Likewise TCP sockets opened from C++ (`torch.distributed.TCPStore`) raise no `socket.` event.

`confine(writable, devices)` applies a Landlock ruleset to the calling thread and every thread or
process it starts later: creating, writing, truncating, removing, renaming or linking files is
allowed only beneath the `writable` directories (and writing to the `devices` files, /dev/null and
the GPU's device nodes, and to the existing files of the `lent` dirs, never truncating them or making
new ones); no TCP bind or connect (ABI >= 4); no signal to, or abstract unix socket
of, a process outside the domain (ABI >= 6). Reading is left alone. Restrictions only add up: the
child applies one layer when it starts (its private dir and /dev/shm, where lent buffers live, on
its only thread, so the threads started later inherit it) and a second one at `load`, once the
lent buffers' own dir is known: there only the parent's existing files may be written (verifier 25:
a candidate truncated a lent input after its forward and the parent died of SIGBUS comparing it).
Returns the Landlock ABI used, 0 where the kernel has none (the process then runs unconfined, as
before this rule: the verdict says so in a note).

Only CPU candidates are confined for now (`CONFINE_CUDA`): the rule was written and tested on the CPU
on 2026-12-03 with no device time left, and on CUDA the driver, Triton's ptxas and torch's CUDA IPC
(its reference-count files in /dev/shm, outside the lent buffers' dir of the second layer) may need
paths the ruleset does not allow, which would fail every honest GPU candidate, as two GPU-only rules
of 2026-12-01 did before they were run on an H200. Turn it on after `tests/test_gpu.py` and
`tests/exploits/test_native_file_write.py` pass on a GPU with it on. To try it there, set
`KGYM_CONFINE_CUDA=1` in the verifier's (the trusted parent's) environment: the sandbox hands it to the
candidate's process, which reads it before any candidate code exists.
"""

from __future__ import annotations

import ctypes
import glob
import os
import platform

_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}  # create_ruleset, add_rule, restrict_self
_PR_SET_NO_NEW_PRIVS = 38
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

# filesystem access rights (uapi/linux/landlock.h)
_WRITE_FILE = 1 << 1
_REMOVE_DIR, _REMOVE_FILE = 1 << 4, 1 << 5
_MAKE_CHAR, _MAKE_DIR, _MAKE_REG, _MAKE_SOCK, _MAKE_FIFO, _MAKE_BLOCK, _MAKE_SYM = (1 << k for k in range(6, 13))
_REFER = 1 << 13  # ABI 2
_TRUNCATE = 1 << 14  # ABI 3
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


CONFINE_CUDA = False  # see the module docstring


def applies(device: str) -> bool:
    """Whether a candidate process on `device` ("cpu", "cuda", "cuda:N") is confined."""
    return device == "cpu" or CONFINE_CUDA or os.environ.get("KGYM_CONFINE_CUDA") == "1"


def abi_version() -> int:
    """The kernel's Landlock ABI, 0 if it has none (or it is disabled)."""
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None:
        return 0
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    v = libc.syscall(ctypes.c_long(numbers[0]), None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(v))


def gpu_device_files() -> list[str]:
    """The GPU's device nodes a CUDA process may open for writing."""
    return sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri/*"))


def confine(writable: list[str], devices: list[str] = (), lent: list[str] = ()) -> int:
    """Apply the ruleset to this thread and what it starts later (see the module docstring). `lent`:
    dirs whose existing files may be opened for writing (the parent's lent buffers, mapped shared) and
    nothing else: no file created, truncated, grown by truncate, removed, renamed or linked beneath
    them. Returns the ABI used, 0 where Landlock is unavailable. Raises OSError if it is available and
    fails."""
    abi = abi_version()
    if abi <= 0:
        return 0
    create, add_rule, restrict = _SYSCALLS[platform.machine()]
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    dir_rights = (_WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE_CHAR | _MAKE_DIR | _MAKE_REG | _MAKE_SOCK
                  | _MAKE_FIFO | _MAKE_BLOCK | _MAKE_SYM)
    file_rights = _WRITE_FILE
    if abi >= 2:
        dir_rights |= _REFER
    if abi >= 3:
        dir_rights |= _TRUNCATE
        file_rights |= _TRUNCATE
    attr = _RulesetAttr(dir_rights, 0, 0)
    size = 8
    if abi >= 4:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
        size = 16
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
        size = 24
    fd = libc.syscall(ctypes.c_long(create), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        # A lent dir's files take the write right alone, never truncate (ABI >= 3 handles it): the parent
        # maps them too, and a file the candidate shrank, or a /dev/shm it filled, made the parent's next
        # touch of the mapping a SIGBUS that killed the verifier (the farm's worker), not the candidate.
        rules = ([(p, dir_rights) for p in writable] + [(p, file_rights) for p in devices]
                 + [(p, _WRITE_FILE) for p in lent])
        for path, rights in rules:
            if not os.path.exists(path):
                continue
            if not os.path.isdir(path):
                rights &= file_rights  # a file takes file rights only
            pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneathAttr(rights, pfd)
                if libc.syscall(ctypes.c_long(add_rule), ctypes.c_int(fd), ctypes.c_int(_RULE_PATH_BENEATH),
                                ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}: {os.strerror(ctypes.get_errno())}")
            finally:
                os.close(pfd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(ctypes.c_long(restrict), ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)
    return abi


# --- no process of the candidate's (seccomp), the CPU only -----------------------------------------
_SECCOMP = {  # seccomp(2), AUDIT_ARCH, clone, clone3, and the calls refused outright (fork, vfork, execve, execveat)
    "x86_64": (317, 0xC000003E, 56, 435, (57, 58, 59, 322)),
    "aarch64": (277, 0xC00000B7, 220, 435, (221, 281)),
}
# Calls that act on another process by pid (verifier 28: forward() pinned the trusted parent to one CPU and
# reniced it to 19 with os.sched_setaffinity / os.setpriority, which raise no audit event and which Landlock
# does not scope; the parent timed every later baseline so). Each passes only on the calling process
# itself: (number, argument index, value it must have, argument that must be 0 or None); the last group
# acts on another process's memory or descriptors and is refused outright. Numbers checked against
# x86_64's unistd_64.h only: another architecture gets the process rule alone.
_SELF_ONLY = {
    "x86_64": (
        (141, 0, 0, 1),  # setpriority(which=PRIO_PROCESS, who=0): not a group's, not the user's
        (251, 0, 1, 1),  # ioprio_set(which=IOPRIO_WHO_PROCESS, who=0)
        # sched_setparam, sched_setscheduler, sched_setaffinity, sched_setattr (0)
        (142, 0, 0, None), (144, 0, 0, None), (203, 0, 0, None), (314, 0, 0, None),
        (302, 0, 0, None),  # prlimit64(0)
        (256, 0, 0, None), (279, 0, 0, None),  # migrate_pages(0), move_pages(0)
    ),
}
_OTHERS_REFUSED = {"x86_64": (101, 310, 311, 438, 440)}  # ptrace, process_vm_readv/writev, pidfd_getfd, process_madvise
_CLONE_THREAD = 0x00010000
_EPERM, _ENOSYS = 1, 38
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_ABS_W, _JEQ, _JSET, _RET = 0x20, 0x15, 0x45, 0x06
_SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC = 1, 1


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def _no_process_program(arch: int, clone: int, clone3: int, refused: tuple[int, ...],
                        self_only: tuple = (), others_refused: tuple[int, ...] = ()) -> list[tuple[int, int, int, int]]:
    """The filter: a new thread (clone with CLONE_THREAD) passes, every other clone and fork, vfork,
    execve, execveat fail with EPERM; clone3, whose flags a filter cannot read, fails with ENOSYS, on
    which glibc's pthread_create falls back to clone. Another architecture's calls fail with EPERM.
    `self_only` and `others_refused` (`_SELF_ONLY`): a call acting on another process fails with EPERM.
    Arguments are read by their low 32 bits (pids and the `which` selectors are C ints)."""
    deny = _RET_ERRNO | _EPERM
    prog = [(_LD_ABS_W, 0, 0, 4),  # seccomp_data.arch
            (_JEQ, 1, 0, arch),
            (_RET, 0, 0, deny)]
    for nr, arg, value, zero in self_only:
        if zero is None:  # the call passes only if args[arg] == value
            prog += [(_LD_ABS_W, 0, 0, 0), (_JEQ, 0, 4, nr),
                     (_LD_ABS_W, 0, 0, 16 + 8 * arg), (_JEQ, 0, 1, value), (_RET, 0, 0, _RET_ALLOW), (_RET, 0, 0, deny)]
        else:  # ... and args[zero] == 0
            prog += [(_LD_ABS_W, 0, 0, 0), (_JEQ, 0, 6, nr),
                     (_LD_ABS_W, 0, 0, 16 + 8 * arg), (_JEQ, 0, 3, value),
                     (_LD_ABS_W, 0, 0, 16 + 8 * zero), (_JEQ, 0, 1, 0), (_RET, 0, 0, _RET_ALLOW), (_RET, 0, 0, deny)]
    prog.append((_LD_ABS_W, 0, 0, 0))  # seccomp_data.nr
    refused = (*refused, *others_refused)
    for nr in refused:
        prog += [(_JEQ, 0, 1, nr), (_RET, 0, 0, deny)]
    prog += [(_JEQ, 0, 1, clone3), (_RET, 0, 0, _RET_ERRNO | _ENOSYS),
             (_JEQ, 1, 0, clone), (_RET, 0, 0, _RET_ALLOW),
             (_LD_ABS_W, 0, 0, 16),  # the low half of clone's flags (args[0]), little-endian
             (_JSET, 0, 1, _CLONE_THREAD), (_RET, 0, 0, _RET_ALLOW),
             (_RET, 0, 0, deny)]
    return prog


def no_new_processes() -> bool:
    """From now on no thread of this process starts a process or runs a program, nor acts on another
    process's scheduling, limits, memory or descriptors (seccomp, on every thread at once: TSYNC);
    threads may still start and set their own process's scheduling. False where the architecture is not known or
    the kernel refuses the filter (the process then runs as before this rule). For the CPU, where the
    interpreter runs no toolchain once the candidate is loaded: on a GPU Triton runs ptxas (2026-12-07,
    verifier 28: torch's libshm forked and exec'd a script of the candidate's as its manager from C++,
    which no audit event sees, and the script computed the ReLU the candidate returned)."""
    numbers = _SECCOMP.get(platform.machine())
    if numbers is None:
        return False
    seccomp, arch, clone, clone3, refused = numbers
    prog = _no_process_program(arch, clone, clone3, refused, _SELF_ONLY.get(platform.machine(), ()),
                               _OTHERS_REFUSED.get(platform.machine(), ()))
    filters = (_SockFilter * len(prog))(*[_SockFilter(*ins) for ins in prog])
    fprog = _SockFprog(len(prog), filters)
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return libc.syscall(ctypes.c_long(seccomp), ctypes.c_uint(_SECCOMP_SET_MODE_FILTER),
                        ctypes.c_uint(_SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(fprog)) == 0

