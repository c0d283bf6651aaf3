"""The zygote: one process per `Sandbox` that has imported torch, Triton and kgym's child code, and
forks fresh candidate processes from that state (docs/spares.md).

A cold candidate process spends most of its start importing torch and Triton; a process forked from
one that has already imported them starts with all of that in place (shared copy-on-write pages)
and only has its device part (CUDA context, the warm-up kernel, the profiler) left to do. The
fresh-process rule stands: every candidate still gets a process of its own, and nothing of one
candidate can reach the zygote, so nothing reaches the next one.

The zygote is started like a candidate process (`python -P`, calling `main` here: scrubbed
environment, its own session and temp dir, stdin from /dev/null, stdout/stderr to files), imports,
and then waits on a control socket (SOCK_SEQPACKET, JSON both ways: it unpickles nothing) for:
  spawn    with four descriptors attached (SCM_RIGHTS): the child's socket to the parent, the
           tripwires' report pipe, stdout and stderr files. It forks; the child becomes what a
           Popen'd `kgym.verify.candidate.child` is (`_become_child`) and runs the child's normal start; the
           zygote answers `forked` with the pid once the child is set up.
  release  the parent is done with a child that has exited: reap it (until then the zygote keeps
           it a zombie, so its pid, which the parent may still signal, cannot be reused).
  status   what the zygote holds: threads, descriptors, whether CUDA or Triton's driver started.
  sweep    end every process in the zygote's tree that it did not fork (what a dead candidate left
           behind: `_Server.sweep`) and answer how many there were since the last sweep.
  exit
and reports `exited` (pid, exit code) for each child that ends. It never touches the device, never
sees a reference, candidate, seed or input, and never runs anything a candidate sent: its only
input is the parent's control socket, whose messages it parses as bounded JSON.

The parent's side is `ZygoteClient` (used by kgym.verify.parent.sandbox).
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys
import time
from typing import Any

MAX_MESSAGE = 1 << 20
N_FDS = 4  # child socket, report pipe, stdout, stderr
CHILD_FD, REPORT_FD = 3, 4  # where the forked child finds its socket and report pipe (KGYM_CHILD_FD/REPORT_FD)
PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 3, 4, 36
SETUP_TIMEOUT_S = 30.0
# rlimits the parent has now and the child gets (the zygote's own were the parent's at its start)
RLIMITS = ("RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_STACK", "RLIMIT_CPU",
           "RLIMIT_FSIZE", "RLIMIT_MEMLOCK", "RLIMIT_CORE")


class ZygoteError(Exception):
    """The zygote is gone, did not start, or broke its protocol."""


# --- both sides ---------------------------------------------------------------------------------
def file_tail(path: str, n: int) -> str:
    """The last `n` bytes of a file as text ('' when it cannot be read): a process's stderr."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - n))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def proc_stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state letter, ppid, process group, start time in clock ticks) of a process, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    try:
        return fields[0], int(fields[1]), int(fields[2]), int(fields[19])
    except (IndexError, ValueError):
        return None


def _send(sock: socket.socket, msg: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(msg).encode()
    if fds:
        socket.send_fds(sock, [data], fds)
    else:
        sock.send(data)


def _decode(data: bytes) -> dict[str, Any]:
    try:
        msg = json.loads(data)
    except ValueError as e:
        raise ZygoteError(f"malformed message: {e}") from None
    if not isinstance(msg, dict):
        raise ZygoteError("malformed message: not an object")
    return msg


def dumpable() -> int | None:
    """This process's PR_GET_DUMPABLE, None where prctl cannot be called."""
    try:
        return int(ctypes.CDLL(None, use_errno=True).prctl(PR_GET_DUMPABLE, 0, 0, 0, 0))
    except (OSError, AttributeError):
        return None


def _prctl(option: int, arg: int) -> bool:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _set_undumpable() -> bool:
    """PR_SET_DUMPABLE 0: for a process of the same non-root uid, /proc/<pid>/mem, ptrace and the
    other ptrace-checked /proc files of this process are refused (root keeps them: CAP_SYS_PTRACE).
    Inherited by fork (execve resets it)."""
    return _prctl(PR_SET_DUMPABLE, 0)


# --- the zygote process ---------------------------------------------------------------------------
def _preload() -> None:
    """Everything a candidate process imports before its first command, nothing that starts a device:
    torch, Triton (the interpreter on the CPU, where TRITON_INTERPRET is set in this environment
    already), kgym's child code and the warm-up kernel's module (decorated, never compiled here)."""
    import torch  # noqa: F401
    import torch._dynamo  # noqa: F401 - a dispatch mode's first use imports it (2.7 s on a CPU here)
    import torch.profiler  # noqa: F401
    import torch.utils._python_dispatch  # noqa: F401
    import triton  # noqa: F401
    import triton.language  # noqa: F401
    import triton.runtime.jit  # noqa: F401

    from kgym.verify.candidate import child

    try:
        from torch._C._profiler import _ExperimentalConfig  # noqa: F401
    except ImportError:
        pass
    here = os.path.dirname(child.__file__)
    sys.path.insert(0, here)
    try:
        import warmup_kernel  # noqa: F401 - the module the child's warm_up imports by this name
    finally:
        sys.path.remove(here)


def holdings() -> dict[str, Any]:
    """What this process holds that a candidate must not inherit: checked by the tests and by the
    parent at hello (a zygote that started CUDA or threads is refused)."""
    info: dict[str, Any] = {"pid": os.getpid(), "dumpable": dumpable()}
    try:
        tasks = os.listdir("/proc/self/task")
        info["threads"] = len(tasks)
    except OSError:
        info["threads"] = None
    try:
        info["fds"] = sorted(int(f) for f in os.listdir("/proc/self/fd"))
    except OSError:
        info["fds"] = None
    info["modules"] = [m for m in ("torch", "torch._dynamo", "triton", "triton.runtime.jit",
                                   "kgym.verify.candidate.child", "warmup_kernel", "numpy") if m in sys.modules]
    torch = sys.modules.get("torch")
    info["cuda_initialized"] = bool(torch is not None and torch.cuda.is_initialized())
    drv = sys.modules.get("triton.runtime.driver")
    cfg = getattr(drv, "driver", None)
    info["triton_driver_started"] = bool(cfg is not None and (getattr(cfg, "_default", None) is not None
                                                              or getattr(cfg, "_active", None) is not None))
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
        info["libcuda_mapped"] = "libcuda.so" in maps  # loaded (torch's CUDA build links it): not started
        info["device_files_mapped"] = "/dev/nvidia" in maps
    except OSError:
        maps = ""
        info["libcuda_mapped"] = info["device_files_mapped"] = None
    info["cuda_driver_initialized"] = _cuda_driver_initialized(maps)
    try:
        info["device_fds"] = [t for t in (os.readlink(f"/proc/self/fd/{fd}") for fd in info["fds"] or []
                                          if os.path.exists(f"/proc/self/fd/{fd}"))
                              if t.startswith("/dev/nvidia")]
    except OSError:
        info["device_fds"] = None
    try:
        info["thread_names"] = sorted(open(f"/proc/self/task/{t}/comm").read().strip()
                                      for t in os.listdir("/proc/self/task"))
    except OSError:
        info["thread_names"] = None
    return info


def touched_device(info: dict[str, Any]) -> list[str]:
    """What in `holdings()` says the process started a device (a zygote must show none of it)."""
    found = []
    if info.get("cuda_initialized"):
        found.append("torch initialised CUDA")
    if info.get("cuda_driver_initialized"):
        found.append("the CUDA driver was initialised (cuInit)")
    if info.get("triton_driver_started"):
        found.append("Triton's driver was started")
    if info.get("device_files_mapped") or info.get("device_fds"):
        found.append("a /dev/nvidia* device is open or mapped")
    return found


def _cuda_driver_initialized(maps: str) -> bool | None:
    """Has this process called cuInit? Asked without starting anything: only where libcuda is loaded
    already (None where it is not: then it cannot have been), through cuCtxGetCurrent, which answers
    CUDA_ERROR_NOT_INITIALIZED (3) before cuInit."""
    if "libcuda.so" not in maps:
        return None
    try:
        lib = ctypes.CDLL("libcuda.so.1")  # loaded already: dlopen hands back the same library
        ctx = ctypes.c_void_p()
        return lib.cuCtxGetCurrent(ctypes.byref(ctx)) != 3
    except (OSError, AttributeError):
        return None


class _Server:
    def __init__(self, ctrl: socket.socket):
        self.ctrl = ctrl
        self.children: dict[int, dict[str, Any]] = {}  # pid -> {"code": int|None, "released": bool}
        self.strangers = 0  # processes it did not fork, reaped or killed since the last sweep
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wakeup fd fires
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.ctrl, selectors.EVENT_READ)
        self.sel.register(self.wake_r, selectors.EVENT_READ)

    def run(self) -> None:
        while True:
            for key, _ in self.sel.select(timeout=1.0):
                if key.fileobj is self.ctrl:
                    try:
                        data, fds, _flags, _addr = socket.recv_fds(self.ctrl, MAX_MESSAGE, N_FDS)
                    except OSError:
                        return
                    if not data:
                        for fd in fds:
                            os.close(fd)
                        self.end_children()
                        return  # the parent is gone
                    if not self.handle(data, fds):
                        return
                else:
                    try:
                        while os.read(self.wake_r, 4096):
                            pass
                    except BlockingIOError:
                        pass
            self.check_children()

    def reply(self, msg: dict[str, Any]) -> None:
        try:
            _send(self.ctrl, msg)
        except OSError:
            pass  # the parent is gone: the next recv says so

    def handle(self, data: bytes, fds: list[int]) -> bool:
        try:
            msg = _decode(data)
        except ZygoteError as e:
            for fd in fds:
                os.close(fd)
            self.reply({"op": "error", "reason": str(e)})
            return True
        op = msg.get("op")
        if op == "spawn":
            self.spawn(msg, fds)
            return True
        for fd in fds:
            os.close(fd)
        if op == "release":
            self.release(msg.get("pid"))
        elif op == "status":
            self.reply({"op": "status", "id": msg.get("id"), **holdings()})
        elif op == "sweep":
            left = self.sweep(msg.get("pid"))
            self.reply({"op": "swept", "id": msg.get("id"), "found": self.strangers, "left": left})
            self.strangers = 0
        elif op == "exit":
            return False
        else:
            self.reply({"op": "error", "id": msg.get("id"), "reason": f"unknown op {str(op)[:50]}"})
        return True

    def spawn(self, msg: dict[str, Any], fds: list[int]) -> None:
        rid = msg.get("id")
        if len(fds) != N_FDS or not isinstance(msg.get("env"), dict) or not isinstance(msg.get("workdir"), str):
            for fd in fds:
                os.close(fd)
            self.reply({"op": "error", "id": rid, "reason": "a spawn needs env, workdir and four descriptors"})
            return
        sync_r, sync_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns into this loop
            code = 1  # what an uncaught exception gives a cold `python -m kgym.verify.candidate.child`
            try:
                os.close(sync_r)
                self._become_child(msg, fds, sync_w)
            except SystemExit as e:  # as the interpreter would handle it
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
                if not isinstance(e.code, int) and e.code is not None:
                    print(e.code, file=sys.stderr, flush=True)
            except BaseException:  # noqa: BLE001 - written to the child's own stderr file
                try:
                    import traceback

                    traceback.print_exc()
                    sys.stderr.flush()
                except BaseException:  # noqa: BLE001
                    pass
            finally:
                os._exit(code)
        for fd in fds:
            os.close(fd)
        os.close(sync_w)
        self.children[pid] = {"code": None, "released": False}
        ok = self._wait_setup(sync_r)
        os.close(sync_r)
        stat = proc_stat(pid)
        if not ok or stat is None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.reply({"op": "error", "id": rid, "pid": pid, "reason": "the forked child failed its set-up"})
            self.children[pid]["released"] = True
            self.check_children()
            return
        self.reply({"op": "forked", "id": rid, "pid": pid, "starttime": stat[3], "pgrp": stat[2]})

    @staticmethod
    def _wait_setup(sync_r: int) -> bool:
        """The child writes one byte once it is set up (own session, descriptors, environment)."""
        sel = selectors.DefaultSelector()
        sel.register(sync_r, selectors.EVENT_READ)
        try:
            if not sel.select(SETUP_TIMEOUT_S):
                return False
            return os.read(sync_r, 1) == b"1"
        finally:
            sel.close()

    def _become_child(self, msg: dict[str, Any], fds: list[int], sync_w: int) -> None:
        """Turn this forked process into what the parent's Popen makes of `python -m kgym.verify.candidate.child`,
        then run the child's start. Nothing of the zygote's loop survives: its socket, selector and
        wakeup pipe are closed, its bookkeeping dropped, its signal handlers reset."""
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self.sel.close()
        os.close(self.ctrl.detach())
        os.close(self.wake_r)
        os.close(self.wake_w)
        self.children.clear()
        zygote_dir = os.getcwd()
        os.setsid()
        # In a session and process group of its own: from here the parent may signal the group.
        os.write(sync_w, b"1")
        os.close(sync_w)
        os.chdir(msg["workdir"])
        # Descriptors: 0 /dev/null, 1 and 2 the workdir's files, 3 the socket, 4 the report pipe;
        # nothing else. Everything is first moved above 9, so that no dup2 below overwrites a
        # descriptor still to be moved.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds]
        for fd in fds:
            os.close(fd)
        devnull = os.open(os.devnull, os.O_RDONLY)
        high.append(fcntl.fcntl(devnull, fcntl.F_DUPFD_CLOEXEC, 10))
        os.close(devnull)
        sock_fd, report_fd, out_fd, err_fd, null_fd = high
        for src, dst in ((null_fd, 0), (out_fd, 1), (err_fd, 2), (sock_fd, CHILD_FD), (report_fd, REPORT_FD)):
            os.dup2(src, dst, inheritable=dst <= 2)
        os.closerange(REPORT_FD + 1, _fd_limit())
        # The environment is replaced by the spare's (os.environ writes through to the C environ).
        env = {str(k): str(v) for k, v in msg["env"].items()}
        env["KGYM_CHILD_FD"], env["KGYM_REPORT_FD"] = str(CHILD_FD), str(REPORT_FD)
        os.environ.clear()
        os.environ.update(env)
        for name, soft, hard in msg.get("rlimits") or []:
            res = getattr(resource, str(name), None)
            if res is None:
                continue
            try:
                resource.setrlimit(res, (int(soft), int(hard)))
            except (ValueError, OSError):
                pass  # a hard limit above the zygote's own cannot be raised: the zygote's stands
        _show_in_proc([sys.executable, "-P", "-m", "kgym.verify.candidate.child"], env)
        from kgym.verify.candidate import child

        child.after_fork(msg.get("threads"), zygote_dir)
        sock = socket.socket(fileno=CHILD_FD)
        sys.argv = [child.__file__]
        child.start(sock)  # exits the process

    def end_children(self) -> None:
        """The parent died (the socket closed without `exit`): no child can serve anyone any more,
        and one the parent had stopped (quiet's SIGSTOP) would never run to notice. Each child's
        group is killed and the child reaped."""
        live = [pid for pid, c in self.children.items() if c["code"] is None]
        for pid in live:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + 5
        for pid in list(self.children):
            while True:
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    break
                if done or time.monotonic() > deadline:
                    break
                time.sleep(0.01)
        self.children.clear()

    def release(self, pid: Any) -> None:
        if isinstance(pid, int) and pid in self.children:
            self.children[pid]["released"] = True
            self.check_children()

    def check_children(self) -> None:
        """Report each child that ended (kept a zombie until released, then reaped)."""
        for pid, c in list(self.children.items()):
            if c["code"] is None:
                try:
                    r = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                except ChildProcessError:
                    r = None
                    c["code"] = -1
                if r is not None:
                    c["code"] = r.si_status if r.si_code == os.CLD_EXITED else -r.si_status
                    self.reply({"op": "exited", "pid": pid, "code": c["code"]})
            if c["code"] is not None and c["released"]:
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass
                del self.children[pid]
        # The zygote is a subreaper: what a candidate started (Triton's compilers, or anything that
        # outlived its process) comes to it once orphaned, and is reaped here as soon as it ends.
        for pid in _other_children(self.children):
            try:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    self.strangers += 1
            except ChildProcessError:
                pass

    def sweep(self, pid: Any = None, limit_s: float = 5.0, exit_limit_s: float = 10.0) -> int:
        """End every process in this process's tree that it did not fork, and return how many are left
        (0 but for a process that would not die within `limit_s`). The zygote is a subreaper, so a
        process a candidate started (natively: torch's libshm forks and execs its shared-memory manager,
        whose path the candidate may set, and no audit event fires) stays in this tree when the
        candidate dies and is reparented here, wherever it moved its session. First every such process
        and all its descendants are stopped (again and again, until a walk finds none running, so none
        forks behind the walk), then killed, then reaped. Spares and their own children (Triton's
        toolchain in a spare's warm-up) are left alone. `pid`: a released child whose whole thread group
        must have exited first: its leader shows as a zombie while its other threads still exit, and the
        children of an exiting thread go to another thread of its process, not here, until the last one
        ends (a process the candidate started was found only after the sweep). The wait is bounded
        (`exit_limit_s`; a GPU context's teardown is in it): past it the sweep goes on as before the rule,
        when a zombie leader was taken for a dead process."""
        deadline = time.monotonic() + exit_limit_s
        while isinstance(pid, int) and pid in self.children and self.children[pid]["released"]:
            self.check_children()  # reaps it once it is released and waitable (every thread gone)
            if pid not in self.children or time.monotonic() >= deadline:
                break
            time.sleep(0.0005)
        deadline = time.monotonic() + limit_s
        stopped: set[int] = set()
        while time.monotonic() < deadline:
            found = [p for p in _tree(_other_children(self.children)) if p not in stopped]
            if not found:
                break
            for p in found:
                try:
                    os.kill(p, signal.SIGSTOP)
                except ProcessLookupError:
                    pass
                stopped.add(p)
        for p in stopped:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        while True:
            others = _other_children(self.children)
            for p in others:
                try:
                    if os.waitpid(p, os.WNOHANG)[0]:
                        self.strangers += 1
                except ChildProcessError:
                    pass
            others = _other_children(self.children)
            if not others:
                return 0
            if time.monotonic() >= deadline:
                return len(_tree(others))
            for p in _tree(others):  # a stopped process's children, reparented here since
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.001)


def _other_children(known: dict[int, Any]) -> list[int]:
    """This process's children (every thread's, from /proc) other than the candidates it forked."""
    return [p for p in _children_of(os.getpid()) if p not in known]


def _children_of(pid: int) -> list[int]:
    """A process's children (every thread's), from /proc; [] once it is gone."""
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            pass
    return out


def _tree(roots: list[int]) -> list[int]:
    """`roots` and all their descendants, as /proc shows them now."""
    seen: list[int] = []
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.append(pid)
        todo += _children_of(pid)
    return seen


def _show_in_proc(argv: list[str], env: dict[str, str]) -> bool:
    """Make /proc/self/cmdline and /proc/self/environ show this process's argv and environment. The
    kernel shows the blocks it laid out at exec (the zygote's); the process's environment as every
    library reads it (environ, getenv, os.environ) was replaced already, and nothing points into the
    old blocks any more, so they are overwritten in place, NUL-padded (what setproctitle and
    PostgreSQL's ps_status do). The zygote's own environment carries KGYM_ENV_PAD so that a
    spare's fits; one that does not is left as it was (False)."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        arg_start, arg_end, env_start, env_end = (int(x) for x in fields[45:49])
    except (OSError, ValueError, IndexError):
        return False
    ok = True
    for start, end, block in ((arg_start, arg_end, b"".join(os.fsencode(a) + b"\0" for a in argv)),
                              (env_start, env_end, b"".join(os.fsencode(f"{k}={v}") + b"\0" for k, v in env.items()))):
        size = end - start
        if not 0 < len(block) <= size:
            ok = False
            continue
        ctypes.memmove(start, block + b"\0" * (size - len(block)), size)
    return ok


def _fd_limit() -> int:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return soft if 0 < soft < (1 << 20) else (1 << 20)


def main() -> None:
    t0 = time.perf_counter()
    fd = int(os.environ.pop("KGYM_ZYGOTE_FD"))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    undumpable = _set_undumpable()
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    ctrl = socket.socket(fileno=fd)
    try:
        _preload()
        from kgym.verify.candidate import child

        paths = child.find_zygote_paths(os.path.realpath(os.getcwd()))
    except BaseException as e:  # noqa: BLE001 - the parent falls back to Popen and shows this
        _send(ctrl, {"op": "failed", "reason": f"{type(e).__name__}: {e}"[:2000]})
        raise
    _send(ctrl, {"op": "hello", "import_s": time.perf_counter() - t0, "set_undumpable": undumpable,
                 "paths_to_rebase": paths,
                 **holdings()})
    _Server(ctrl).run()
    sys.stdout.flush()
    os._exit(0)


# --- the parent's side ----------------------------------------------------------------------------
class ZygoteClient:
    """One zygote process, as the parent (`Sandbox`) sees it: started at once, ready after `hello`.
    Every message from it is bounded JSON; a forked pid is accepted only as a child of the zygote
    in a session of its own."""

    def __init__(self, env: dict[str, str], workdir: str, stdout_path: str, stderr_path: str):
        self.workdir = workdir
        self.stderr_path = stderr_path
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # KGYM_ENV_PAD: room in the exec-time environment block for a spare's (see _show_in_proc)
        env = {**env, "KGYM_ZYGOTE_FD": str(child.fileno()), "KGYM_ENV_PAD": "." * 1024}
        self.started = time.monotonic()
        try:
            with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
                self.proc = subprocess.Popen(  # -c, not -m: the module is imported once, as itself
                    [sys.executable, "-P", "-c", "import kgym.verify.candidate.zygote as z; z.main()"],
                    cwd=workdir, env=env,
                    stdin=subprocess.DEVNULL, stdout=out, stderr=err, close_fds=True,
                    pass_fds=(child.fileno(),), start_new_session=True)
        finally:
            child.close()
        self.sock = parent
        self.hello: dict[str, Any] | None = None
        self.ready_s: float | None = None
        self.exits: dict[int, int] = {}  # pid -> exit code (negative: signal), as the zygote reported
        self._replies: dict[int, dict[str, Any]] = {}
        self._next_id = 0
        self.dead: str | None = None  # why the zygote cannot be used any more

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.dead is None and self.proc.poll() is None

    def _fail(self, why: str) -> ZygoteError:
        if self.dead is None:
            self.dead = why
        tail = self.stderr_tail()
        return ZygoteError(why + (f"; zygote stderr:\n{tail}" if tail.strip() else ""))

    def stderr_tail(self, n: int = 2000) -> str:
        return file_tail(self.stderr_path, n)

    def _pump(self, timeout: float) -> bool:
        """Read what the zygote sent (waiting up to `timeout` for the first message). False if none."""
        if self.dead is not None:
            raise self._fail(self.dead)
        sel = selectors.DefaultSelector()
        sel.register(self.sock, selectors.EVENT_READ)
        got = False
        try:
            wait = timeout
            while sel.select(wait):
                wait = 0
                try:
                    data = self.sock.recv(MAX_MESSAGE)
                except OSError as e:
                    raise self._fail(f"the zygote's socket failed: {e}") from None
                if not data:
                    raise self._fail("the zygote closed its socket (it died)")
                self._dispatch(_decode(data))
                got = True
        finally:
            sel.close()
        return got

    def _dispatch(self, msg: dict[str, Any]) -> None:
        op = msg.get("op")
        if op == "exited" and isinstance(msg.get("pid"), int) and isinstance(msg.get("code"), int):
            self.exits[msg["pid"]] = msg["code"]
        elif op in ("hello", "failed"):
            self._replies[-1] = msg
        elif isinstance(msg.get("id"), int):
            self._replies[msg["id"]] = msg

    def _wait_reply(self, rid: int, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while rid not in self._replies:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._fail(f"no answer from the zygote within {timeout:.0f} s")
            if not self._pump(min(left, 0.5)) and self.proc.poll() is not None:
                raise self._fail(f"the zygote exited with code {self.proc.returncode}")
        return self._replies.pop(rid)

    def wait_hello(self, timeout: float) -> dict[str, Any]:
        if self.hello is not None:
            return self.hello
        msg = self._wait_reply(-1, timeout)
        if msg.get("op") != "hello":
            raise self._fail(f"the zygote failed to import: {str(msg.get('reason'))[:2000]}")
        if msg.get("pid") != self.proc.pid:
            raise self._fail("the zygote's hello names another pid")
        touched = touched_device(msg)
        if touched:
            raise self._fail(f"the zygote touched the device while importing ({'; '.join(touched)}): {msg}")
        self.hello = msg
        self.ready_s = time.monotonic() - self.started
        return msg

    def _request(self, msg: dict[str, Any], fds: list[int] | None, timeout: float) -> dict[str, Any]:
        rid = self._next_id
        self._next_id += 1
        try:
            _send(self.sock, {**msg, "id": rid}, fds)
        except OSError as e:
            raise self._fail(f"the zygote's socket failed: {e}") from None
        return self._wait_reply(rid, timeout)

    def spawn(self, env: dict[str, str], workdir: str, fds: list[int], *, threads: int | None,
              timeout: float = 60.0) -> tuple[int, int]:
        """Fork a candidate process; returns (pid, start time in clock ticks)."""
        self.wait_hello(timeout)
        rlimits = []
        for name in RLIMITS:
            res = getattr(resource, name, None)
            if res is not None:
                rlimits.append([name, *resource.getrlimit(res)])
        reply = self._request({"op": "spawn", "env": env, "workdir": workdir, "threads": threads,
                               "rlimits": rlimits}, fds, timeout)
        if reply.get("op") != "forked":
            pid = reply.get("pid")
            if isinstance(pid, int):
                self.release(pid)
            raise ZygoteError(f"the zygote could not fork: {str(reply.get('reason'))[:500]}")
        pid, start = reply.get("pid"), reply.get("starttime")
        stat = proc_stat(pid) if isinstance(pid, int) and pid > 0 else None
        if stat is None or stat[1] != self.proc.pid or stat[2] != pid or stat[3] != start:
            raise self._fail(f"the zygote answered a pid that is not its child in a session of its own: {reply}")
        return pid, start

    def status(self, timeout: float = 30.0) -> dict[str, Any]:
        self.wait_hello(timeout)
        return self._request({"op": "status"}, None, timeout)

    def sweep(self, pid: int | None = None, timeout: float = 30.0) -> dict[str, Any]:
        """End every process in the zygote's tree it did not fork (`_Server.sweep`), once the released
        child `pid` has wholly exited; returns {"found": processes it did not fork, reaped or killed
        since the last sweep, "left": alive still}."""
        reply = self._request({"op": "sweep", "pid": pid}, None, timeout)
        if reply.get("op") != "swept" or type(reply.get("found")) is not int or type(reply.get("left")) is not int:
            raise self._fail(f"the zygote answered a sweep with {str(reply)[:200]}")
        return reply

    def exit_code(self, pid: int) -> int | None:
        """The child's exit code if the zygote has reported it (reads what is pending, never waits)."""
        if pid not in self.exits and self.dead is None:
            try:
                self._pump(0)
            except ZygoteError:
                pass
        return self.exits.get(pid)

    def release(self, pid: int) -> None:
        self.exits.pop(pid, None)
        if self.dead is not None:
            return
        try:
            _send(self.sock, {"op": "release", "pid": pid})
        except OSError:
            self.dead = "the zygote's socket failed"

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                _send(self.sock, {"op": "exit"})
            except OSError:
                pass
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.dead = self.dead or "closed"
        self.sock.close()


if __name__ == "__main__":
    main()
