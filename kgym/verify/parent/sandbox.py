"""The parent's side of the sandbox: fresh candidate processes, pre-warmed spares, hard deadlines.

Each candidate gets its own process (`kgym.verify.candidate.child`), started in its own session (so the whole
process group can be killed), in a private temp dir as its cwd, with a scrubbed environment, no
inherited descriptors but one socket (and the tripwires' report pipe), stdout/stderr to files. Spares
are kept started and warm (torch and Triton imported, device and profiler initialised) so that cost
is paid ahead of time. A hang, a crash or a malformed reply raises `ChildFailure`, which the verifier
turns into a `timeout` or `crash` verdict; the process is then killed and never reused.

A process is started one of two ways (`Sandbox(zygote=...)`): forked from the sandbox's zygote
(kgym.verify.candidate.zygote: a process that has imported torch, Triton and the child's code and touched
neither the device nor any secret), the default; or, the old path, as a cold
`python -m kgym.verify.candidate.child` through Popen. Either way the result is the same process (docs/spares.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections import deque
from typing import Any

from kgym.verify.candidate.zygote import CHILD_FD, REPORT_FD, ZygoteClient, ZygoteError, file_tail, proc_stat
from kgym.verify.wire import WireError, WireTimeout, recv_reply, send_command

_KGYM_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# Environment variables a child keeps (device selection, compilers, libraries); everything else goes.
_KEEP_ENV = ("PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH",
             "TRITON_PTXAS_PATH", "TRITON_CUOBJDUMP_PATH", "TRITON_NVDISASM_PATH", "TRITON_LIBCUDA_PATH",
             "CC", "LANG", "LC_ALL", "NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
             "NVSHMEM_DISABLE_NVLS", "KGYM_CONFINE_CUDA")


class ChildFailure(Exception):
    """The candidate's process hung (kind='timeout') or died / misbehaved (kind='crash')."""

    def __init__(self, kind: str, reason: str):
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


def _proc_state(pid: int) -> str | None:
    """The process's state letter from /proc (R, S, D, T stopped, Z, ...); None if unknown."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


# Gates a line on the tripwire channel may name: those the child's tripwires report, each a hard gate
# (reward 0). Anything else written there (the channel is an fd in the candidate's process) is
# read as isolation, so a forged line cannot relabel a failure as a softer or a different gate.
TRIPWIRE_GATES = frozenset({"policy", "isolation", "compile"})

# The tripwire channel as the parent reads it (`CandidateProcess.drain_reports`): at most this many bytes per
# drain, and the first this many lines kept (the first decides the verdict).
REPORT_DRAIN_BYTES = 1 << 20
MAX_REPORTS = 64

# The exit code of a forked process whose zygote died before reporting it (real codes are 0-255,
# or a negative signal number).
EXIT_UNKNOWN = 256


# glibc's perturb byte for the candidate's process on the CPU: malloc fills what it hands out with its
# complement, 0x7F (float32 3.4e38, float64 1.4e306, a NaN in float16: no output value near a reference's),
# and free fills with 0x80.
MALLOC_PERTURB = 0x80


def _child_env(device: str, workdir: str, *, threads: int | None, child_fd: int, report_fd: int) -> dict[str, str]:
    """The scrubbed environment of a candidate process (and, with its own workdir, of the zygote)."""
    env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
    env.update({
        "HOME": workdir,
        "TMPDIR": workdir,
        "TRITON_CACHE_DIR": os.path.join(workdir, "triton-cache"),
        "PYTHONPATH": os.pathsep.join([_KGYM_ROOT] + [p for p in sys.path if p and os.path.isdir(p)]),
        "PYTHONDONTWRITEBYTECODE": "1",
        "KGYM_DEVICE": device,
    })
    if child_fd >= 0:
        env["KGYM_CHILD_FD"] = str(child_fd)
        env["KGYM_REPORT_FD"] = str(report_fd)
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
        env["CUDA_VISIBLE_DEVICES"] = ""
        # Memory glibc hands out is filled with 0x7F bytes, never zero (`MALLOC_PERTURB_`, read once at
        # the process's first malloc, so the zygote's setting holds in every spare it forks): an output
        # of 32 MiB or more is a fresh mmap of zero pages, which the poison after each forward never
        # reaches, and a kernel that wrote only its nonzero values (a diag_embed's diagonal) passed
        # every case (`docs/verify.md`, "Every output value is written by its forward").
        env["MALLOC_PERTURB_"] = str(MALLOC_PERTURB)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    return env


class _ForkedProc:
    """A process forked by the zygote, seen through the few parts of Popen's interface the sandbox
    uses (pid, poll, wait, returncode). The zygote is its parent: the exit code is what the zygote
    reports, and the zygote keeps the dead process a zombie (its pid reserved) until `release`. Were
    the zygote to die, the process lives on (reparented to init) and /proc tells whether it is gone;
    its start time guards against a pid used again by another process."""

    def __init__(self, zygote: ZygoteClient, pid: int, starttime: int):
        self.zygote = zygote
        self.pid = pid
        self.starttime = starttime
        self.returncode: int | None = None

    def signal_ok(self) -> bool:
        """May the process group `pid` be signalled? Yes while the leader is this process, and once no
        process has the pid at all (a pid still used as a group id is not given out again, so only
        this group's own members can carry it); no if another process has the pid now."""
        stat = proc_stat(self.pid)
        return stat is None or stat[3] == self.starttime

    def poll(self) -> int | None:
        if self.returncode is not None:
            return self.returncode
        code = self.zygote.exit_code(self.pid)
        if code is not None:
            self.returncode = code
            return code
        stat = proc_stat(self.pid)
        if stat is None or stat[3] != self.starttime:
            self.returncode = EXIT_UNKNOWN  # gone, and nobody told us how
        elif stat[0] in ("Z", "X") and not self.zygote.alive():
            self.returncode = EXIT_UNKNOWN
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = 0.0005
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout)
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
        return self.returncode

    def dead(self) -> bool:
        """Dead (a zombie or gone), whether or not its exit code is known yet."""
        if self.poll() is not None:
            return True
        stat = proc_stat(self.pid)
        return stat is None or stat[3] != self.starttime or stat[0] in ("Z", "X")


class TritonSeed:
    """The Triton cache entries of the harness's own warm-up (the driver's compiled helper module, the
    warm-up kernel's launcher and binary), taken once from a spare forked by the zygote at the moment
    it says `ready`: it has run nothing but the harness, no candidate has been loaded into it. Each
    later forked spare gets a copy in its own, otherwise empty, Triton cache dir, so its warm-up loads
    them instead of compiling them (on an H200 the first launch took 0.69 s seeded, 1.53 s not). On by
    default since it ran on an H200 with the GPU tests green (Sandbox(triton_seed=False) turns it off). Only
    regular files are taken; the copy is checked against the digest taken with it before every plant,
    and dropped (never planted again) if it changed. On the CPU (the interpreter) there is nothing to
    take."""

    def __init__(self) -> None:
        self.dir: str | None = None
        self.digest: str | None = None
        self.dropped: str | None = None

    @staticmethod
    def _files(root: str) -> list[str]:
        out = []
        for base, dirs, files in os.walk(root, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(base, d)))
            for name in sorted(files):
                path = os.path.join(base, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    out.append(os.path.relpath(path, root))
        return out

    @classmethod
    def _digest(cls, root: str) -> str:
        import hashlib

        h = hashlib.sha256()
        for rel in cls._files(root):
            with open(os.path.join(root, rel), "rb") as f:
                data = f.read()
            h.update(rel.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
        return h.hexdigest()

    @staticmethod
    def _is_group(rel: str) -> bool:
        return os.path.basename(rel).startswith("__grp__")

    def take(self, cache_dir: str) -> bool:
        if self.dir is not None or self.dropped is not None or not os.path.isdir(cache_dir):
            return False
        files = [rel for rel in self._files(cache_dir) if not os.path.basename(rel).startswith("tmp.")]
        if not files:
            return False
        root = os.path.realpath(cache_dir)
        dst = tempfile.mkdtemp(prefix="kgym-triton-seed-")
        os.chmod(dst, 0o700)
        plain = {rel for rel in files if not self._is_group(rel)}
        for rel in files:
            os.makedirs(os.path.join(dst, os.path.dirname(rel)), exist_ok=True)
            if not self._is_group(rel):
                shutil.copyfile(os.path.join(cache_dir, rel), os.path.join(dst, rel))
                continue
            # A group file names its members by absolute path (the source spare's dir): kept relative
            # here and made absolute in each planted copy's own dir, never pointing anywhere else.
            try:
                with open(os.path.join(cache_dir, rel)) as f:
                    members = json.load(f)["child_paths"]
                relative = {}
                for name, path in members.items():
                    member = os.path.relpath(os.path.realpath(path), root)
                    if member not in plain:
                        raise ValueError(f"{path} is not a file of this cache")
                    relative[str(name)] = member
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue  # left out: Triton compiles that entry again
            with open(os.path.join(dst, rel), "w") as f:
                json.dump({"child_paths": relative}, f)
        self.dir, self.digest = dst, self._digest(dst)
        return True

    def plant(self, cache_dir: str) -> bool:
        if self.dir is None:
            return False
        if self._digest(self.dir) != self.digest:
            self.drop("the seed's files changed after they were taken")
            return False
        for rel in self._files(self.dir):
            os.makedirs(os.path.join(cache_dir, os.path.dirname(rel)), exist_ok=True)
            if not self._is_group(rel):
                shutil.copyfile(os.path.join(self.dir, rel), os.path.join(cache_dir, rel))
                continue
            with open(os.path.join(self.dir, rel)) as f:
                members = json.load(f)["child_paths"]
            with open(os.path.join(cache_dir, rel), "w") as f:
                json.dump({"child_paths": {k: os.path.join(cache_dir, v) for k, v in members.items()}}, f)
        return True

    def drop(self, why: str = "closed") -> None:
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = self.digest = None
        self.dropped = why


class CandidateProcess:
    def __init__(self, device: str, *, threads: int | None = None, zygote: ZygoteClient | None = None,
                 seed: TritonSeed | None = None):
        """A fresh candidate process: forked by `zygote` when one is given (ZygoteError if it cannot),
        else started cold with Popen. `seed`: trusted Triton cache entries of the warm-up, planted in
        its own (otherwise empty) Triton cache dir first."""
        self.device = device
        self.workdir = tempfile.mkdtemp(prefix="kgym-cand-")
        os.chmod(self.workdir, 0o700)
        parent_sock, child_sock = socket.socketpair()
        # The tripwires' append-only channel: what the child writes here, it cannot take back.
        report_r, report_w = os.pipe()
        os.set_blocking(report_r, False)
        self.stdout_path = os.path.join(self.workdir, "stdout.txt")
        self.stderr_path = os.path.join(self.workdir, "stderr.txt")
        self.forked = zygote is not None
        self._killed: bool | None = None  # kill()'s finding: None until killed, then whether it died
        self.seeded = False
        self.on_ready: Any = None  # called once with this process when `ready` arrives (before any load)
        self.on_start_failure: Any = None  # called once with this process if it dies or hangs before `ready`
        self.started = time.monotonic()
        try:
            with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
                if zygote is not None:
                    self.seeded = seed is not None and seed.plant(os.path.join(self.workdir, "triton-cache"))
                    env = _child_env(device, self.workdir, threads=threads, child_fd=CHILD_FD, report_fd=REPORT_FD)
                    pid, starttime = zygote.spawn(env, self.workdir,
                                                  [child_sock.fileno(), report_w, out.fileno(), err.fileno()],
                                                  threads=threads)
                    self.proc: subprocess.Popen | _ForkedProc = _ForkedProc(zygote, pid, starttime)
                else:
                    env = _child_env(device, self.workdir, threads=threads, child_fd=child_sock.fileno(),
                                     report_fd=report_w)
                    self.proc = subprocess.Popen(
                        [sys.executable, "-P", "-m", "kgym.verify.candidate.child"],
                        cwd=self.workdir, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                        close_fds=True, pass_fds=(child_sock.fileno(), report_w), start_new_session=True)
        except BaseException:
            parent_sock.close()
            os.close(report_r)
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise
        finally:
            child_sock.close()
            os.close(report_w)
        self.sock = parent_sock
        self._report_fd = report_r
        self._report_buf = b""
        self.reports: list[tuple[str, str]] = []  # (gate, reason), in the order the child wrote them
        self.ready_info: dict[str, Any] | None = None
        self.warming = False  # told to warm up (touch the device), not yet seen ready
        # What kill() found of processes the candidate's process started and left behind (the zygote's
        # sweep): how many, ended by then; None on the cold path, where nothing sweeps (docs/spares.md).
        self.strangers: int | None = None

    def _signal_group(self, sig: int) -> bool:
        """Signal the whole process group (the process and any compiler it runs). False if gone."""
        if isinstance(self.proc, _ForkedProc) and not self.proc.signal_ok():
            return False
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def warm(self) -> None:
        """Let the process start its device part (it has been importing on the host until now)."""
        if self.ready_info is None and not self.warming:
            self.warming = True
            try:
                send_command(self.sock, {"op": "warm"})
            except OSError:
                pass  # it died: wait_ready reports how

    def pause(self, settle_s: float = 0.5) -> bool:
        """Stop the whole process group (SIGSTOP: the process and any compiler it runs) and wait, up
        to `settle_s`, until the process is seen stopped (signals are delivered asynchronously).
        Device work it already queued still finishes; it queues no more until `resume`. False if
        the process is gone."""
        if not self._signal_group(signal.SIGSTOP):
            return False
        deadline = time.monotonic() + settle_s
        while _proc_state(self.proc.pid) not in ("T", "t", "Z", "X", None) and time.monotonic() < deadline:
            time.sleep(0.001)
        return True

    def resume(self) -> None:
        self._signal_group(signal.SIGCONT)

    def _recv(self, timeout: float) -> dict[str, Any]:
        """The next message, whole within `timeout` (its first byte and its last: a reply trickled in a
        byte at a time is a timeout, not a wait of a per-read timeout for every byte)."""
        deadline = time.monotonic() + timeout
        sel = selectors.DefaultSelector()
        sel.register(self.sock, selectors.EVENT_READ)
        try:
            if not sel.select(timeout):
                raise ChildFailure("timeout", f"no answer from the candidate's process within {timeout:.0f} s")
        finally:
            sel.close()
        try:
            reply = recv_reply(self.sock, max(deadline, time.monotonic() + 1.0))
            self.sock.settimeout(max(timeout, 1.0))  # the next send's, as before (not what the reads left)
            return reply
        except WireTimeout as e:
            raise ChildFailure("timeout", f"the candidate's process did not finish its answer within {timeout:.0f} s "
                               f"({e})") from None
        except (WireError, OSError) as e:
            raise ChildFailure("crash", self._death_note(str(e))) from None

    def _death_note(self, what: str) -> str:
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            head = f"the candidate's process broke the protocol ({what})"
        elif code == EXIT_UNKNOWN:
            head = "the candidate's process died before answering (its exit status was lost with its zygote)"
        elif code < 0:
            head = f"the candidate's process was killed by signal {signal.Signals(-code).name}"
        else:
            head = f"the candidate's process exited with code {code} before answering"
        tail = self.stderr_tail()
        return head + (f"; stderr:\n{tail}" if tail.strip() else "")

    def stderr_tail(self, n: int = 3000) -> str:
        return file_tail(self.stderr_path, n)

    def drain_reports(self) -> list[tuple[str, str]]:
        """Read what the tripwires wrote; a channel closed while the process lives is tampering.

        Bounded (`REPORT_DRAIN_BYTES` read per call, the first `MAX_REPORTS` lines kept): the channel is an
        fd of the candidate's process, and a forward writing lines to it without end kept this loop
        reading (it stopped only when a read found the pipe empty, which a writer on another core need
        never allow) and the list growing by thousands of entries a millisecond, in the trusted parent: a
        hung, then dead, worker instead of the candidate's verdict. Only the first report decides a
        verdict; the rest stay unread in the pipe, which closes with the process."""
        read = 0
        while read < REPORT_DRAIN_BYTES:
            try:
                chunk = os.read(self._report_fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:
                if self.proc.poll() is None and not self.reports:
                    self.reports.append(("isolation", "tampering: the tripwire channel was closed"))
                break
            read += len(chunk)
            if len(self.reports) < MAX_REPORTS:
                self._report_buf += chunk
                if len(self._report_buf) > 1 << 20:
                    self._report_buf = self._report_buf[-(1 << 20):]
        *lines, self._report_buf = self._report_buf.split(b"\n")
        for line in lines[:max(0, MAX_REPORTS - len(self.reports))]:
            gate, _, reason = line.decode(errors="replace").partition("\t")
            if gate not in TRIPWIRE_GATES:
                gate = "isolation"
            self.reports.append((gate, reason[:2000] or "tripwire"))
        return self.reports

    def wait_ready(self, timeout: float) -> dict[str, Any]:
        self.warm()
        if self.ready_info is None:
            try:
                msg = self._recv(timeout)
                if msg.get("op") != "ready":
                    raise ChildFailure("crash", f"unexpected first message {str(msg)[:200]}")
            except ChildFailure:
                hook, self.on_start_failure = self.on_start_failure, None
                if hook is not None:
                    hook(self)
                raise
            self.on_start_failure = None
            self.ready_info = msg
            self.warming = False
            hook, self.on_ready = self.on_ready, None
            if hook is not None:
                hook(self)
        return self.ready_info

    def request(self, msg: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send a command, return the child's reply to it. A reply that does not carry this request's
        nonce, or that comes with extra bytes behind it, was not written by the harness."""
        nonce = self.send(msg)
        return self.receive((nonce,), timeout)

    def send(self, msg: dict[str, Any]) -> str:
        """Send a command under a fresh nonce (returned) without waiting for the reply (the timing
        lockstep sends a `run` per timed run)."""
        nonce = secrets.token_hex(16)
        try:
            send_command(self.sock, {**msg, "nonce": nonce})
        except OSError as e:
            raise ChildFailure("crash", self._death_note(str(e))) from None
        return nonce

    def receive(self, nonces: tuple[str, ...], timeout: float) -> dict[str, Any]:
        """The next reply, which must carry one of `nonces` and nothing behind it."""
        try:
            reply = self._recv(timeout)
        finally:
            self.drain_reports()
        if reply.get("nonce") not in nonces:
            raise ChildFailure("crash", "a reply without this request's nonce: the candidate wrote to the "
                               "harness's socket")
        self.sock.setblocking(False)  # a timeout would make the peek wait for data
        try:
            extra = self.sock.recv(1, socket.MSG_PEEK)
        except OSError:  # BlockingIOError: nothing behind the reply, as it should be
            extra = b""
        if extra:
            raise ChildFailure("crash", "unexpected data behind a reply: the candidate wrote to the harness's socket")
        return reply

    def kill(self) -> bool:
        """Kill the process group and reap the process; True once it is dead (its GPU work ends with its
        context). Idempotent: a second call signals nothing (the pid may belong to another process by
        then) and reports what the first found."""
        if self._killed is not None:
            return self._killed
        self._signal_group(signal.SIGKILL)
        try:
            if isinstance(self.proc, _ForkedProc):
                deadline = time.monotonic() + 10
                while not self.proc.dead() and time.monotonic() < deadline:
                    time.sleep(0.0005)
                self.proc.zygote.release(self.proc.pid)
            else:
                self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self._killed = bool(self.proc.dead()) if isinstance(self.proc, _ForkedProc) else self.proc.poll() is not None
        if self._killed and isinstance(self.proc, _ForkedProc):
            # Nothing the process started outlives it (verifier 28): the kill reaches its process group
            # only, and a process the candidate started in a session of its own (torch's libshm execs a
            # manager of the candidate's choosing from C++, no audit event) kept a CPU busy while the
            # parent timed the baselines. Once the candidate is dead, all it left alive is in the
            # zygote's tree (a subreaper) and is ended there before this returns; a sweep that could
            # not end them, or no zygote to ask, counts as a process that did not die.
            try:
                swept = self.proc.zygote.sweep(self.proc.pid)
                self.strangers = swept["found"]
                self._killed = swept["left"] == 0
            except ZygoteError:
                self._killed = False
        self.sock.close()
        try:
            os.close(self._report_fd)
        except OSError:
            pass
        shutil.rmtree(self.workdir, ignore_errors=True)
        return self._killed


class Sandbox:
    """Hands out fresh candidate processes for one device, keeping `spares` of them started ahead.

    A spare takes seconds to warm (importing torch, starting CUDA, Triton's first compile: 7.8 s on
    an H200 host); with verifications of ~2.5 s back to back, about three spares keep one ready.
    On a GPU a spare's start has two parts: host imports, which run at once, and the device part
    (CUDA context, first launch, profiler), which only runs outside `quiet()`: a context starting on
    the same GPU during a timed run stretched 20-100 us kernels by tens of microseconds and failed
    honest solutions on the variation gate (measured on an H200)."""

    QUIET_MODES = ("pause", "wait")
    # pause: on four H200s 27 candidates/min per GPU and 2.2 s per verification, against 5.5/min and
    # ~11 s when each timed block waited for the newest spare's device start (benchmarks/farm_throughput.py)
    DEFAULT_QUIET_MODE = "pause"
    # Spares forked from a zygote (kgym.verify.candidate.zygote) rather than started cold (docs/spares.md).
    DEFAULT_ZYGOTE = True
    # Forked spares' Triton caches seeded with the warm-up's entries (TritonSeed; docs/spares.md, "The
    # Triton seed"). On an H200 (2026-12-03): one spare ready in 0.98 s seeded vs 1.85 s, eight at once
    # 2.70 vs 3.26 s.
    DEFAULT_TRITON_SEED = True

    def __init__(self, device: str, *, spares: int = 1, start_timeout_s: float = 300.0,
                 quiet_mode: str = DEFAULT_QUIET_MODE, zygote: bool = DEFAULT_ZYGOTE,
                 zygote_start_timeout_s: float = 120.0, triton_seed: bool = DEFAULT_TRITON_SEED):
        if quiet_mode not in self.QUIET_MODES:
            raise ValueError(f"quiet_mode {quiet_mode!r}: use one of {', '.join(self.QUIET_MODES)}")
        self.device = device
        self.spares = spares
        self.quiet_mode = quiet_mode
        self.start_timeout_s = start_timeout_s
        self.zygote_start_timeout_s = zygote_start_timeout_s
        # On the CPU only forked spares are gated: their whole device part is a burst of host work
        # (the interpreter's first launch, torch's and numpy's thread pools) that began right as the
        # verification that refilled them did, and skewed its timed runs and the parent's baseline
        # re-measure; stopping one costs nothing. A cold spare spends that time importing anyway.
        self.gated = device.startswith("cuda") or zygote
        self._quiet = False
        self.use_zygote = zygote
        self.zygote: ZygoteClient | None = None
        self.zygote_starts = 0  # zygotes started (more than one: one died or broke and was replaced)
        self.zygote_fallback: str | None = None  # why this sandbox went back to Popen, if it did
        self.triton_seed = TritonSeed()  # the warm-up's Triton cache entries, for forked spares
        if not triton_seed:
            self.triton_seed.dropped = "off (Sandbox(triton_seed=False))"
        if zygote:
            self._start_zygote()  # it imports while the caller goes on; the first fork waits for it
        self._ready: deque[CandidateProcess] = deque(self._new_process() for _ in range(spares))
        self._release()

    # --- starting processes ------------------------------------------------------------------
    def _start_zygote(self) -> None:
        workdir = tempfile.mkdtemp(prefix="kgym-zygote-")
        os.chmod(workdir, 0o700)
        env = _child_env(self.device, workdir, threads=None, child_fd=-1, report_fd=-1)
        try:
            self.zygote = ZygoteClient(env, workdir, os.path.join(workdir, "stdout.txt"),
                                       os.path.join(workdir, "stderr.txt"))
        except OSError as e:
            shutil.rmtree(workdir, ignore_errors=True)
            self.zygote = None
            self._fall_back(f"the zygote could not be started: {e}")
            return
        self.zygote_starts += 1

    def _stop_zygote(self) -> None:
        z, self.zygote = self.zygote, None
        if z is not None:
            z.close()
            shutil.rmtree(z.workdir, ignore_errors=True)

    def _fall_back(self, why: str) -> None:
        self.use_zygote = False
        self.zygote_fallback = why
        warnings.warn(f"kgym sandbox: {why[:1500]}; candidate processes are started cold (Popen) from now on",
                      RuntimeWarning, stacklevel=3)

    def _new_process(self) -> CandidateProcess:
        """A fresh process: forked from the zygote (a dead or broken zygote is replaced once; if the
        new one fails too, the sandbox falls back to Popen for good), or started cold."""
        last = ""
        for attempt in range(2):
            if not self.use_zygote:
                break
            if self.zygote is None or not self.zygote.alive():
                self._stop_zygote()
                self._start_zygote()
                if self.zygote is None:
                    break
            try:
                self.zygote.wait_hello(self.zygote_start_timeout_s)
                proc = CandidateProcess(self.device, zygote=self.zygote, seed=self.triton_seed)
                if self.triton_seed.dir is None and self.triton_seed.dropped is None:
                    proc.on_ready = self._take_seed
                if proc.seeded:
                    proc.on_start_failure = self._seeded_spare_failed
                return proc
            except ZygoteError as e:
                last = str(e)
                self._stop_zygote()
                if attempt == 0:
                    continue
        if self.use_zygote:
            self._fall_back(f"the zygote failed twice in a row ({last})")
        return CandidateProcess(self.device)

    def _seeded_spare_failed(self, proc: CandidateProcess) -> None:
        self.triton_seed.drop("a seeded spare failed its start")
        warnings.warn("kgym sandbox: a spare with a seeded Triton cache failed its start; no spare is seeded "
                      "from now on", RuntimeWarning, stacklevel=3)

    def _take_seed(self, proc: CandidateProcess) -> None:
        """A forked spare just said `ready`: nothing but the harness has run in it yet."""
        if not proc.reports and not proc.seeded:
            self.triton_seed.take(os.path.join(proc.workdir, "triton-cache"))

    def _release(self) -> None:
        if not self._quiet:
            for proc in self._ready:
                proc.warm()

    def acquire(self) -> CandidateProcess:
        """The oldest spare (or a new process); the caller waits for `ready` with a deadline."""
        proc = self._ready.popleft() if self._ready else self._new_process()
        proc.warm()
        while len(self._ready) < self.spares:
            self._ready.append(self._new_process())
        self._release()
        return proc

    @contextlib.contextmanager
    def quiet(self):
        """No spare touches the device inside: spares not yet told to warm wait until the block ends;
        spares already warming are stopped for the block's duration and continued after it
        (`quiet_mode="pause"`, the default: only device work they queued before the stop can overlap)
        or finish first (`"wait"`, bounded by the start timeout: their whole device start, seconds,
        is waited for, which made every microsecond task take ~11 s on an H200).
        On the CPU a no-op for cold (Popen) spares, where timing earns no gate and the wait would only
        slow verification; forked spares are gated there too (see __init__)."""
        if not self.gated:
            yield
            return
        paused: list[CandidateProcess] = []
        for proc in self._ready:
            if not proc.warming:
                continue
            if self.quiet_mode == "pause":
                if proc.pause():
                    paused.append(proc)
                continue
            try:
                proc.wait_ready(self.start_timeout_s)
            except ChildFailure:
                pass  # a spare that died is found out when it is acquired
        self._quiet = True
        try:
            yield
        finally:
            for proc in paused:
                proc.resume()
            self._quiet = False
            self._release()

    def close(self) -> None:
        while self._ready:
            self._ready.popleft().kill()
        self._stop_zygote()
        self.triton_seed.drop()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
