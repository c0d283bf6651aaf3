"""Spares forked from the zygote (kgym.verify.candidate.zygote, docs/spares.md): isolation and housekeeping.

Real processes on the CPU, no mocks. The isolation tests verify a candidate that writes somewhere a
fork could carry over (module state, the zygote's memory and signals, the Triton cache, the process
environment), then the candidate after it, forked from the same zygote *after* the first one ran
(a verifier with no spare: every candidate's process is forked when it is acquired). The second
candidate checks, at import, that nothing of the first is there, and raises if it is: its verdict
must be a pass. The first candidate proves its writes took in its own process by raising
'planted:ok' once they are in place (runtime rules only: the static policy would refuse the code
before any process ran).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "exploits"))
from cache_dirs import TEST_CACHE  # noqa: E402

from kgym.verify import Verifier, VerifyConfig  # noqa: E402
from kgym.verify.candidate.zygote import proc_stat  # noqa: E402
from kgym.verify.parent.sandbox import CandidateProcess, Sandbox  # noqa: E402

from exploit_helpers import candidate, describe  # noqa: E402

MODEL = '''
class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        launch(x, out)
        return out
'''


def source(prelude: str) -> str:
    """The honest ReLU with `prelude` run at import time."""
    return candidate(prelude.strip("\n") + "\n\n" + MODEL)


@pytest.fixture(scope="module")
def zverifier():
    """No spare: each candidate's process is forked from the zygote when the candidate comes."""
    with Verifier(VerifyConfig(device="cpu", timed_runs=3, warmup_runs=1, max_remeasure=0), spares=0,
                  cache_dir=TEST_CACHE, case_secret=b"kgym-tests", zygote=True) as v:
        yield v


def verify(v: Verifier, ref: str, src: str):
    return v.verify(ref, src, static_policy=False)


def assert_planted(v) -> None:
    assert v.error is None, v.error
    assert "planted:ok" in v.reason, describe(v)


def assert_clean_pass(v) -> None:
    assert v.error is None, v.error
    assert v.passed, describe(v)


def children_of(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def zombies_of(pid: int) -> list[int]:
    return [c for c in children_of(pid) if (proc_stat(c) or ("?",))[0] == "Z"]


def wait_until(pred, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


# --- isolation: one attack class each ------------------------------------------------------------
PLANT_MODULE_STATE = source('''
_m = torch.sys.modules
_child = _m.get("kgym.verify.candidate.child") or _m["__main__"]
_child.MAX_TEXT = 1
_child._kgym_planted = "A"


def planted(*args, **kwargs):
    raise RuntimeError("the earlier candidate's relu")


torch.relu = planted
torch.nn.functional.relu = planted
torch.Tensor.kgym_planted = True
_m["kgym_planted"] = torch
if not (torch.relu is planted and _m["kgym_planted"] is torch and _child._kgym_planted == "A"):
    raise RuntimeError("the writes did not take")
raise RuntimeError("planted:ok")
''')

CHECK_MODULE_STATE = source('''
_m = torch.sys.modules
_child = _m.get("kgym.verify.candidate.child") or _m["__main__"]
_seen = [name for name, bad in (
    ("a kgym.verify.candidate.child global",
     getattr(_child, "_kgym_planted", None) is not None or _child.MAX_TEXT != 4000),
    ("torch.relu", getattr(torch.relu, "__name__", "") == "planted"),
    ("torch.nn.functional.relu", getattr(torch.nn.functional.relu, "__name__", "") == "planted"),
    ("a torch.Tensor attribute", hasattr(torch.Tensor, "kgym_planted")),
    ("a sys.modules entry", "kgym_planted" in _m),
) if bad]
if _seen:
    raise RuntimeError("saw the earlier candidate's writes: " + ", ".join(_seen))
''')


def test_module_state_written_by_a_candidate_is_not_seen_by_the_next(zverifier, relu_reference):
    planted = verify(zverifier, relu_reference, PLANT_MODULE_STATE)
    # The writes took (the candidate checks them before "planted:ok"); since 2026-12-04 the child
    # names the write into its own module as tampering before the candidate's error.
    assert planted.error is None and not planted.passed, describe(planted)
    assert "planted:ok" in planted.reason \
        or "tampering: kgym.verify.candidate.child.MAX_TEXT was replaced" in planted.reason \
        or "tampering: __main__.MAX_TEXT was replaced" in planted.reason, describe(planted)
    assert_clean_pass(verify(zverifier, relu_reference, CHECK_MODULE_STATE))


ATTACK_ZYGOTE = source('''
_os = torch.os
_ppid = _os.getppid()
_tried = []
try:  # the zygote's memory: patch it and every later fork carries the patch
    with open("/proc/%d/mem" % _ppid, "r+b") as _f:
        _tried.append("mem opened")
except PermissionError:
    _tried.append("mem refused")
try:  # stop the zygote, then kill it
    _os.kill(_ppid, 19)
    _os.kill(_ppid, 9)
except PermissionError:
    _tried.append("kill refused")
raise RuntimeError("zygote attack: %s (ppid %d)" % (", ".join(_tried), _ppid))
''')


def test_the_zygotes_memory_and_signals_are_out_of_a_candidates_reach(zverifier, relu_reference):
    zygote = zverifier.sandbox.zygote
    zygote.wait_hello(120)
    pid = zygote.pid
    v = verify(zverifier, relu_reference, ATTACK_ZYGOTE)
    assert v.error is None, v.error
    assert not v.passed and v.gate == "policy", describe(v)
    assert f"open('/proc/{pid}/mem'" in v.reason, describe(v)  # its parent is the zygote, and it is refused
    # the zygote was neither written, stopped nor killed: the same process serves the next candidate
    assert proc_stat(pid)[0] not in ("T", "Z", "X"), proc_stat(pid)
    assert_clean_pass(verify(zverifier, relu_reference, source("")))
    assert zverifier.sandbox.zygote is zygote and zygote.pid == pid and zygote.alive()
    assert zverifier.sandbox.zygote_starts == 1 and zverifier.sandbox.zygote_fallback is None


PLANT_TRITON_CACHE = source('''
import triton

_os = torch.os
_paths = [triton.knobs.cache.dir, _os.path.join(triton.knobs.cache.home_dir, ".triton", "cache")]
for _d in _paths:
    _os.makedirs(_d, exist_ok=True)
    with open(_os.path.join(_d, "planted.json"), "w") as _f:
        _f.write('{"child_paths": {}}')
raise RuntimeError("planted:ok cache=%s home=%s cwd=%s" % (triton.knobs.cache.dir, triton.knobs.cache.home_dir,
                                                           _os.getcwd()))
''')

CHECK_TRITON_CACHE = source('''
import triton

_os = torch.os
_cwd = _os.getcwd()
_problems = []
if not triton.knobs.cache.dir.startswith(_cwd + "/"):
    _problems.append("Triton's cache dir %s is not under this process's dir" % triton.knobs.cache.dir)
if triton.knobs.cache.home_dir.rstrip("/") != _cwd:
    _problems.append("Triton's home dir %s is not this process's" % triton.knobs.cache.home_dir)
for _d in (triton.knobs.cache.dir, _os.path.join(triton.knobs.cache.home_dir, ".triton", "cache")):
    if _os.path.exists(_os.path.join(_d, "planted.json")):
        _problems.append("planted.json in " + _d)
if _problems:
    raise RuntimeError("; ".join(_problems))
''')


def test_the_triton_cache_a_candidate_wrote_is_not_the_next_ones(zverifier, relu_reference):
    v = verify(zverifier, relu_reference, PLANT_TRITON_CACHE)
    assert_planted(v)
    # the last match: the message, not the source line the traceback quotes
    cache, home, cwd = re.findall(r"cache=(/\S+) home=(/\S+) cwd=(/\S+)", v.reason)[-1]
    # Triton's paths in the forked process are its own, not the zygote's (whose imports computed the
    # home dir default from the zygote's HOME)
    assert cache.startswith(cwd + "/") and home.rstrip("/") == cwd and "kgym-cand-" in cwd, v.reason
    assert not os.path.exists(cwd)  # the workdir went with the process
    assert_clean_pass(verify(zverifier, relu_reference, CHECK_TRITON_CACHE))
    # the zygote's own dir holds no Triton cache: nothing compiled or planted there
    zdir = zverifier.sandbox.zygote.workdir
    assert not os.path.exists(os.path.join(zdir, "triton-cache")), os.listdir(zdir)
    assert not os.path.exists(os.path.join(zdir, ".triton")), os.listdir(zdir)


PLANT_ENVIRONMENT = source('''
_os = torch.os
_os.environ._data[b"KGYM_PLANTED"] = b"A"  # Python's view only (os.putenv is refused by the audit hook)
if _os.environ.get("KGYM_PLANTED") != "A":
    raise RuntimeError("the write did not take")
raise RuntimeError("planted:ok")
''')

CHECK_ENVIRONMENT = source('''
_os = torch.os
_env = dict(_os.environ)
_cwd = _os.getcwd()
_problems = []
if "KGYM_PLANTED" in _env:
    _problems.append("KGYM_PLANTED")
if "KGYM_ZYGOTE_FD" in _env:
    _problems.append("the zygote's descriptor variable")
for _k in ("HOME", "TMPDIR"):
    if _env.get(_k) != _cwd:
        _problems.append("%s=%s" % (_k, _env.get(_k)))
if _env.get("TRITON_CACHE_DIR") != _os.path.join(_cwd, "triton-cache"):
    _problems.append("TRITON_CACHE_DIR=%s" % _env.get("TRITON_CACHE_DIR"))
if _env.get("KGYM_CHILD_FD") != "3" or _env.get("KGYM_REPORT_FD") != "4":
    _problems.append("descriptor variables %s %s" % (_env.get("KGYM_CHILD_FD"), _env.get("KGYM_REPORT_FD")))
_zyg = [k for k, v in _env.items() if "kgym-zygote-" in v]
for _mod in list(torch.sys.modules.values()):  # module globals, and one level into the objects they hold
    for _k, _v in list(getattr(_mod, "__dict__", {}).items()):
        _vals = [(_k, _v)]
        _d = getattr(_v, "__dict__", None)
        if type(_d) is dict:
            _vals += [(_k + "." + str(_k2), _v2) for _k2, _v2 in list(_d.items())]
        for _name, _x in _vals:
            if type(_x) is not str and type(_x).__name__.endswith("Path"):
                _x = str(_x)
            if type(_x) is str and "kgym-zygote-" in _x:
                _zyg.append("%s.%s" % (getattr(_mod, "__name__", "?"), _name))
if _zyg:
    _problems.append("the zygote's dir is named by " + ", ".join(_zyg[:5]))
if _problems:
    raise RuntimeError("; ".join(_problems))
''')


def test_the_environment_a_candidate_wrote_is_not_the_next_ones(zverifier, relu_reference):
    assert_planted(verify(zverifier, relu_reference, PLANT_ENVIRONMENT))
    assert_clean_pass(verify(zverifier, relu_reference, CHECK_ENVIRONMENT))


# --- what a fork shares -----------------------------------------------------------------------------
DRAW = source('''
_m = torch.sys.modules
_np = _m.get("numpy")
raise RuntimeError("draws random=%r numpy=%r torch=%r" % (
    _m["random"].random(), _np.random.random() if _np is not None else None, torch.initial_seed()))
''')


def test_forked_siblings_draw_different_random_numbers(zverifier, relu_reference):
    draws = []
    for _ in range(2):
        v = verify(zverifier, relu_reference, DRAW)
        assert v.error is None and "draws" in v.reason, describe(v)
        draws.append(re.findall(r"random=([0-9.e-]+) numpy=(\S+) torch=([0-9]+)", v.reason)[-1])
    (r1, n1, t1), (r2, n2, t2) = draws
    assert r1 != r2, draws  # Python's random
    assert n1 != n2 and n1 != "None", draws  # numpy's global generator (torch imports numpy)
    assert t1 != t2, draws  # torch's default generator


CRASH_AT_IMPORT = source('''
torch.os._exit(3)
''')


def test_no_zombies_remain_after_a_batch(zverifier, relu_reference):
    zygote = zverifier.sandbox.zygote
    for src in (source(""), CRASH_AT_IMPORT, PLANT_MODULE_STATE):
        verify(zverifier, relu_reference, src)
    v = verify(zverifier, relu_reference, CRASH_AT_IMPORT)
    assert v.gate == "crash" and "exited with code 3" in v.reason, describe(v)  # the zygote reported the code
    # every candidate process was released and reaped: the zygote has no child left, dead or alive
    assert wait_until(lambda: not children_of(zygote.pid)), [(c, proc_stat(c)) for c in children_of(zygote.pid)]
    assert not zombies_of(os.getpid())


def test_the_zygote_holds_no_device_state(zverifier, relu_reference):
    assert_clean_pass(verify(zverifier, relu_reference, source("")))  # a spare has warmed up since
    zygote = zverifier.sandbox.zygote
    st = zygote.status()
    assert st["pid"] == zygote.pid
    assert st["cuda_initialized"] is False and st["triton_driver_started"] is False, st
    assert st["libcuda_mapped"] is False and st["device_files_mapped"] is False, st
    assert st["cuda_driver_initialized"] is None and st["device_fds"] == [], st
    assert st["threads"] == 1, st  # single-threaded when it forks (numpy's BLAS pool is shut down at fork)
    assert st["dumpable"] == 0, st  # PR_SET_DUMPABLE 0
    # and from outside, as the kernel sees it
    with open(f"/proc/{zygote.pid}/maps") as f:
        maps = f.read()
    assert "libcuda" not in maps and "/dev/nvidia" not in maps
    fds = [os.readlink(f"/proc/{zygote.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{zygote.pid}/fd")]
    assert not [t for t in fds if t.startswith("/dev/nvidia")], fds
    for name in ("torch", "triton", "kgym.verify.candidate.child", "warmup_kernel", "torch._dynamo"):
        assert name in st["modules"], (name, st["modules"])


LIST_FOREIGN_MODULES = source('''
_m = torch.sys.modules
raise RuntimeError("foreign:" + ",".join(sorted(n for n in _m if n.startswith(("kgym.verify.parent",
                                                                             "kgym.verify.policy")))) + ":end")
''')


@pytest.mark.parametrize("zygote", [True, False], ids=["forked", "cold"])
def test_a_candidates_process_holds_no_parent_module(zygote, zverifier, relu_reference):
    """What the candidate's own code can find in its process (forked from the zygote or started cold),
    once the child has started and is loading it: none of the trusted parent's modules (verifier,
    reference, cases, baselines, sandbox) nor the static policy's (tests/test_imports.py holds the
    import paths; this holds the running process)."""
    if zygote:
        v = verify(zverifier, relu_reference, LIST_FOREIGN_MODULES)
    else:
        with Verifier(VerifyConfig(device="cpu", timed_runs=3, warmup_runs=1, max_remeasure=0), spares=0,
                      cache_dir=TEST_CACHE, case_secret=b"kgym-tests", zygote=False) as cold:
            v = verify(cold, relu_reference, LIST_FOREIGN_MODULES)
    assert v.error is None, v.error
    assert "foreign::end" in v.reason, describe(v)


# --- the forked process is what Popen makes ----------------------------------------------------------
def _environ(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as f:
        return dict(kv.decode().split("=", 1) for kv in f.read().split(b"\0") if b"=" in kv)


def _limits(pid: int) -> str:
    with open(f"/proc/{pid}/limits") as f:
        return f.read()


def _fd_kinds(pid: int, workdir: str) -> dict[int, str]:
    out = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        t = os.readlink(f"/proc/{pid}/fd/{fd}")
        out[int(fd)] = ("socket" if t.startswith("socket:") else "pipe" if t.startswith("pipe:")
                        else t.replace(workdir, "WORKDIR"))
    return out


def _threads(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(f.read().split("Threads:")[1].split()[0])


def test_a_forked_process_is_what_popen_starts(monkeypatch):
    monkeypatch.setenv("KGYM_SECRET_TOKEN", "must-not-leak")
    with Sandbox("cpu", spares=0, zygote=True) as sandbox:
        forked = sandbox.acquire()
        cold = CandidateProcess("cpu")
        try:
            assert forked.forked and not cold.forked
            for p in (forked, cold):
                p.wait_ready(300)
            f_env, c_env = _environ(forked.proc.pid), _environ(cold.proc.pid)
            assert "KGYM_SECRET_TOKEN" not in f_env and "KGYM_ZYGOTE_FD" not in f_env
            assert set(f_env) == set(c_env)
            same = {k for k in c_env if k not in ("HOME", "TMPDIR", "TRITON_CACHE_DIR", "KGYM_CHILD_FD",
                                                  "KGYM_REPORT_FD")}
            assert {k: f_env[k] for k in same} == {k: c_env[k] for k in same}
            for p, env in ((forked, f_env), (cold, c_env)):
                assert env["HOME"] == env["TMPDIR"] == p.workdir
                assert os.readlink(f"/proc/{p.proc.pid}/cwd") == p.workdir
                assert os.getpgid(p.proc.pid) == os.getsid(p.proc.pid) == p.proc.pid  # own session
                kinds = _fd_kinds(p.proc.pid, p.workdir)
                fds = {int(env["KGYM_CHILD_FD"]): "socket", int(env["KGYM_REPORT_FD"]): "pipe",
                       0: "/dev/null", 1: "WORKDIR/stdout.txt", 2: "WORKDIR/stderr.txt"}
                assert {fd: k for fd, k in kinds.items() if fd in fds} == fds, kinds
                # nothing else but Python's own module files while importing (none once ready)
                assert not [k for fd, k in kinds.items() if fd not in fds and k in ("socket", "pipe")], kinds
            assert _limits(forked.proc.pid) == _limits(cold.proc.pid)
            assert _threads(forked.proc.pid) == _threads(cold.proc.pid)  # thread pools as a cold start has them
            assert proc_stat(forked.proc.pid)[1] == sandbox.zygote.pid  # the zygote is its parent
        finally:
            forked.kill()
            cold.kill()


def test_pause_and_kill_reach_a_forked_process_group():
    with Sandbox("cpu", spares=0, zygote=True) as sandbox:
        p = sandbox.acquire()
        p.wait_ready(300)
        pid = p.proc.pid
        assert p.pause() and proc_stat(pid)[0] == "T"
        p.resume()
        assert wait_until(lambda: proc_stat(pid)[0] != "T")
        os.kill(pid, signal.SIGKILL)  # dies on its own: the zygote reports how
        assert p.proc.wait(timeout=10) == -signal.SIGKILL
        p.kill()
        assert wait_until(lambda: proc_stat(pid) is None)  # reaped by the zygote once released


# --- the zygote itself ---------------------------------------------------------------------------
def test_the_zygote_parses_json_only_and_survives_junk():
    import pickle

    with Sandbox("cpu", spares=0, zygote=True) as sandbox:
        z = sandbox.zygote
        z.wait_hello(300)

        class Boom:
            def __reduce__(self):
                return (os.kill, (z.pid, signal.SIGKILL))

        for junk in (pickle.dumps(Boom()), b"\xff\x00 not json", b"[1, 2]"):
            z.sock.send(junk)
        socket.send_fds(z.sock, [b'{"op": "spawn", "id": 99, "env": {}, "workdir": "/"}'], [0])  # one fd, not four
        z._wait_reply(99, 30)
        assert z.alive() and proc_stat(z.pid)[0] != "Z"
        p = sandbox.acquire()  # and it still forks
        assert p.wait_ready(300)["op"] == "ready"
        p.kill()


def test_a_dead_parent_leaves_no_spare_behind(tmp_path):
    # The worker is killed while a spare is stopped (quiet's pause): the zygote sees its socket close
    # and kills and reaps its children; a stopped spare would otherwise never run to notice.
    import subprocess

    script = tmp_path / "parent.py"
    script.write_text(
        "import sys, time\n"
        "from kgym.verify.parent.sandbox import Sandbox\n"
        "sb = Sandbox('cpu', spares=1, zygote=True)\n"
        "p = sb._ready[0]\n"
        "p.wait_ready(300)\n"
        "assert p.pause()\n"
        "print(sb.zygote.pid, p.proc.pid, flush=True)\n"
        "time.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                              cwd=str(Path(__file__).resolve().parents[1]))
    try:
        zpid, spid = (int(x) for x in parent.stdout.readline().split())
        assert proc_stat(spid)[0] == "T"
        parent.kill()
        parent.wait(10)
        assert wait_until(lambda: (proc_stat(spid) or ("gone",))[0] in ("gone", "Z", "X"), 15), proc_stat(spid)
        assert wait_until(lambda: (proc_stat(zpid) or ("gone",))[0] in ("gone", "Z", "X"), 15), proc_stat(zpid)
    finally:
        if parent.poll() is None:
            parent.kill()


def test_a_dead_zygote_is_replaced_and_the_candidate_at_hand_is_unaffected(relu_reference):
    # A candidate that got past every tripwire could kill its parent, the zygote (same uid). Here the
    # test kills it while a spare forked from it waits for the next candidate, twice.
    with Verifier(VerifyConfig(device="cpu", timed_runs=3, warmup_runs=1, max_remeasure=0), spares=1,
                  cache_dir=TEST_CACHE, case_secret=b"kgym-tests", zygote=True) as v:
        sandbox = v.sandbox
        first = sandbox.zygote
        sandbox._ready[0].wait_ready(300)
        os.kill(first.pid, signal.SIGKILL)
        assert wait_until(lambda: not first.alive())
        # the candidate at hand runs in the dead zygote's spare (orphaned, alive): a pass stays a pass
        assert_clean_pass(v.verify(relu_reference, source("")))
        second = sandbox.zygote
        assert second is not first and second.alive() and sandbox.zygote_starts == 2
        spare = sandbox._ready[0]
        assert proc_stat(spare.proc.pid)[1] == second.pid  # the next spare was forked by the new zygote
        spare.wait_ready(300)
        os.kill(second.pid, signal.SIGKILL)
        assert wait_until(lambda: not second.alive())
        # and a crash stays a crash, though its exit code went with the zygote
        crash = v.verify(relu_reference, CRASH_AT_IMPORT, static_policy=False)
        assert crash.error is None and crash.gate == "crash", describe(crash)
        assert "exit status was lost with its zygote" in crash.reason, describe(crash)
        assert_clean_pass(v.verify(relu_reference, source("")))
        assert sandbox.zygote_starts == 3 and sandbox.zygote_fallback is None


def test_a_zygote_that_cannot_start_falls_back_to_popen_with_a_warning():
    with pytest.warns(RuntimeWarning, match="started cold"):
        sandbox = Sandbox("cpu", spares=1, zygote=True, zygote_start_timeout_s=0.01)  # no hello in 10 ms
    with sandbox:
        assert sandbox.zygote is None and not sandbox.use_zygote and sandbox.zygote_starts == 2
        assert "failed twice" in sandbox.zygote_fallback
        spare = sandbox._ready[0]
        assert not spare.forked
        assert spare.wait_ready(300)["op"] == "ready"
        assert not zombies_of(os.getpid())  # both zygotes were killed and reaped


def test_the_triton_seed_is_planted_only_as_taken(tmp_path):
    from kgym.verify.parent.sandbox import TritonSeed

    src = tmp_path / "spare-cache"
    (src / "ABC").mkdir(parents=True)
    (src / "ABC" / "cuda_utils.so").write_bytes(b"\x7fELF trusted")
    (src / "ABC" / "evil-link").symlink_to("/etc/passwd")  # never taken: regular files only
    (src / "K1").mkdir()
    (src / "K1" / "k.cubin").write_bytes(b"cubin")
    # Triton's group files name their members by absolute path: in each copy they name the copy's own
    (src / "K1" / "__grp__k.json").write_text(json.dumps({"child_paths": {"k.cubin": str(src / "K1" / "k.cubin")}}))
    (src / "K2").mkdir()
    (src / "K2" / "__grp__x.json").write_text(json.dumps({"child_paths": {"x": "/etc/passwd"}}))  # left out
    seed = TritonSeed()
    assert seed.take(str(src))
    assert sorted(seed._files(seed.dir)) == ["ABC/cuda_utils.so", "K1/__grp__k.json", "K1/k.cubin"]
    assert seed.plant(str(tmp_path / "copy"))
    assert json.loads((tmp_path / "copy" / "K1" / "__grp__k.json").read_text()) == \
        {"child_paths": {"k.cubin": str(tmp_path / "copy" / "K1" / "k.cubin")}}
    assert seed.plant(str(tmp_path / "next")) and (tmp_path / "next" / "ABC" / "cuda_utils.so").read_bytes() == \
        b"\x7fELF trusted"
    (tmp_path / "next" / "ABC" / "cuda_utils.so").write_bytes(b"a candidate's own copy")  # its own dir: no effect
    assert seed.plant(str(tmp_path / "third"))
    with open(os.path.join(seed.dir, "ABC", "cuda_utils.so"), "wb") as f:  # the seed itself rewritten
        f.write(b"\x7fELF planted")
    assert not seed.plant(str(tmp_path / "fourth")) and not (tmp_path / "fourth").exists()
    assert seed.dir is None and "changed" in seed.dropped and not seed.take(str(src))  # dropped for good


@pytest.mark.gpu
def test_the_zygote_holds_no_cuda_context_on_a_gpu():
    import torch

    from kgym.verify.candidate.zygote import _cuda_driver_initialized, holdings, touched_device

    # the probe tells an initialised driver from one that is only loaded: here, in this process
    torch.cuda.init()
    with open("/proc/self/maps") as f:
        assert _cuda_driver_initialized(f.read()) is True
    assert "the CUDA driver was initialised (cuInit)" in touched_device(holdings())
    with Sandbox("cuda:0", spares=2, zygote=True, triton_seed=True) as sandbox:
        assert sandbox.zygote_fallback is None, sandbox.zygote_fallback
        for p in sandbox._ready:
            assert p.forked
            assert p.wait_ready(300)["op"] == "ready"  # each spare started CUDA and ran the warm-up kernel
            fds = [os.readlink(f"/proc/{p.proc.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{p.proc.pid}/fd")]
            assert [t for t in fds if t.startswith("/dev/nvidia")], fds  # a started device shows, here
        # the first forked spare seeds the Triton cache of the spares forked after it
        first = sandbox.acquire()
        assert first.wait_ready(300) and sandbox.triton_seed.dir is not None
        second = sandbox.acquire()
        third = sandbox._ready[-1]  # forked after the seed was taken
        assert third.seeded and os.listdir(os.path.join(third.workdir, "triton-cache"))
        for base, _, files in os.walk(os.path.join(third.workdir, "triton-cache")):
            for name in files:
                if name.startswith("__grp__"):
                    with open(os.path.join(base, name)) as f:
                        paths = json.load(f)["child_paths"].values()
                    assert all(p.startswith(third.workdir + "/") and os.path.exists(p) for p in paths), paths
        assert third.wait_ready(300)["op"] == "ready"
        for p in (first, second):
            p.kill()
        z = sandbox.zygote
        st = z.status()
        assert touched_device(st) == [], st
        assert st["cuda_initialized"] is False and st["triton_driver_started"] is False, st
        # torch's CUDA build loads libcuda at import; the driver is loaded, never started
        assert st["cuda_driver_initialized"] in (False, None) and st["device_fds"] == [], st
        with open(f"/proc/{z.pid}/maps") as f:
            assert "/dev/nvidia" not in f.read()
        fds = [os.readlink(f"/proc/{z.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{z.pid}/fd")]
        assert not [t for t in fds if t.startswith("/dev/nvidia")], fds
