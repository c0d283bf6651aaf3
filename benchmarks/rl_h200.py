"""The RL job for real on one GPU: `python -m jobs.rl` with jobs/configs/rl_h200.toml on a random-weight
model of a real shape, killed mid-step and resumed, then its step split read back from the records.

    python benchmarks/rl_h200.py --shape qwen2-1.5b --workdir /tmp/kgym-h200 --out OUT --kill-at-step 4 --scripted
    python benchmarks/rl_h200.py --shape qwen2-7b --workdir /tmp/kgym-h200 --out OUT --steps 3
    python benchmarks/rl_h200.py --shape qwen2-7b --workdir /tmp/kgym-h200 --out OUT --steps 4 \
        --run-id h200-7b-overlap --set offpolicy.overlap=true     # one step off-policy (docs/rl.md)

What it does, in order:
1. builds the model once (`benchmarks/random_model.py`: Qwen2 shape, full byte-level vocabulary, the
   Qwen3-family chat template given by `--chat-template`, default `trl:qwen3_8`);
2. runs the job as users do (a subprocess, an embedded Ray); with `--scripted`, every turn is one of
   relu's scripted answers (its solution, its known-wrong answer, each as a fence or a submit_kernel
   call, or no code), so a random model's episodes reach the verifier and rewards vary; without it
   the model writes max_tokens of noise and no answer is verified (generation and learning at their
   real size);
3. with `--kill-at-step K`: `--kill-delay` seconds after step K's rollout began, SIGKILLs the job's
   process group (the driver and its embedded Ray) and starts it again with the same run id, which
   resumes from step K-1's checkpoint;
4. after every finished step, saves both Prometheus endpoints (the farm's sink and the RL driver's)
   and the GPU's memory in use;
5. at the end: checks that every step 1..N is counted once (no step lost or doubled), prints the
   step split (generation with tokens/s, verification, learning, sync, sleep/wake, checkpoint) and
   writes `steps.csv`, `summary.json`, `metrics-rl.txt`, `metrics-farm.txt` and the job's log under `--out`.
   With `--set offpolicy.overlap=true` the summary also has, per step, the seconds its rollout ran
   beside the previous learner step and the versions its samples came from (the job's log line: not
   step-row columns), and whether the job ran overlapped or fell back (its placement log line); a
   `--kill-at-step K` then lands in step K-1's learner step (step K's rollout is sent before it).
A run cut by `--deadline` stops cleanly (summary says incomplete); the same command resumes it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SPLIT = ("step_s", "rollout_s", "generation_s", "generation_tokens_per_s", "verification_s", "verify_busy_s",
         "learning_s", "sleep_s", "wake_s", "sync_s", "checkpoint_s", "generate_calls", "mean_batch")


def scrape(port: int) -> str | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            return r.read().decode()
    except OSError:
        return None


def gpu_memory() -> str | None:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=memory.used,memory.total", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None


class Launch:
    """One launch of the job: its output streamed to the console and the log, watched for steps."""

    def __init__(self, cmd: list[str], env: dict[str, str], log, out: Path, kill_at: int | None, delay: float):
        self.proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True)
        self.log, self.out, self.kill_at, self.delay = log, out, kill_at, delay
        self.killed_at: float | None = None
        self.memory: list[dict[str, object]] = []
        self.overlap: dict[str, dict[str, object]] = {}  # step -> seconds beside the previous learner step
        self.notes: list[str] = []  # the job's overlap decision

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _kill_later(self) -> None:
        time.sleep(self.delay)
        self.killed_at = time.time()
        self.log.write(f"rl_h200: SIGKILL to the job's process group, {self.delay:g} s into step {self.kill_at}\n")
        self.kill()

    def watch(self, deadline: float) -> int | None:
        assert self.proc.stdout is not None
        timer = threading.Timer(max(1.0, deadline - time.monotonic()), self.kill)
        timer.start()
        try:
            for line in self.proc.stdout:
                sys.stdout.write(line)
                sys.stdout.flush()
                self.log.write(line)
                self.log.flush()
                if self.kill_at is not None and line.startswith(f"jobs.rl: step {self.kill_at}: rolling out"):
                    threading.Thread(target=self._kill_later, daemon=True).start()
                    self.kill_at = None
                if line.startswith("jobs.rl: [offpolicy] overlap"):
                    self.notes.append(line.strip())
                if line.startswith("jobs.rl: step ") and "/" in line.split()[2]:
                    got = re.search(r" overlap ([0-9.]+)s", line)
                    made = re.search(r"samples \d+ of (\S+) \(staleness (\S+)\)", line)
                    self.overlap[line.split()[2].split("/")[0]] = {
                        "overlap_s": float(got.group(1)) if got else None,
                        "samples_of": made.group(1) if made else None,
                        "staleness": made.group(2) if made else None}
                    for name, port in (("rl", 9465), ("farm", 9464)):
                        text = scrape(port)
                        if text:
                            (self.out / f"metrics-{name}.txt").write_text(text)
                    self.memory.append({"after": line.split()[2], "gpu_memory": gpu_memory()})
        finally:
            timer.cancel()
        return self.proc.wait()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="rl_h200.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", default="qwen2-1.5b")
    p.add_argument("--chat-template", default="trl:qwen3_8", help="Jinja file or trl:NAME")
    p.add_argument("--workdir", type=Path, default=Path("/tmp/kgym-h200"))
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--run-id", default=None, help="default: h200-SHAPE")
    p.add_argument("--scripted", action="store_true", help="turns constrained to relu's scripted answers")
    p.add_argument("--kill-at-step", type=int, default=None)
    p.add_argument("--kill-delay", type=float, default=8.0)
    p.add_argument("--deadline", type=float, default=540.0, help="seconds for this invocation")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args(argv)
    t_start = time.monotonic()
    deadline = t_start + args.deadline
    args.out.mkdir(parents=True, exist_ok=True)
    args.workdir.mkdir(parents=True, exist_ok=True)
    model = args.workdir / f"model-{args.shape}"
    if not (model / "config.json").is_file():
        # In a process of its own: a 7B model drawn on the GPU leaves ~30 GiB in torch's cache of the
        # process that drew it, which the job's engine and learner would then not have (the first
        # overlapped 7B run on an H100 ran its learner out of memory that way, 2026-12-07).
        t0 = time.perf_counter()
        build = [sys.executable, str(REPO / "benchmarks" / "random_model.py"), str(model), "--shape", args.shape,
                 "--device", "cuda" if gpu_memory() else "cpu"]
        if args.chat_template:
            build += ["--chat-template", args.chat_template]
        subprocess.run(build, cwd=REPO, check=True)
        print(f"rl_h200: built {args.shape} in {time.perf_counter() - t0:.1f} s", flush=True)
    run_id = args.run_id or f"h200-{args.shape}"
    sets = [f'model="{model}"', f'records.out="{args.workdir / "records"}"', f"steps={args.steps}",
            f'records.run_id="{run_id}"', *args.overrides]
    if args.scripted:
        sys.path.insert(0, str(REPO / "tests" / "rljob"))
        from rljob_helpers import write_choice_file

        sets.append(f'sampling.choice_file="{write_choice_file(args.workdir / "choices.json")}"')
    cmd = [sys.executable, "-m", "jobs.rl", "--config", "jobs/configs/rl_h200.toml"]
    for s in sets:
        cmd += ["--set", s]
    before = gpu_memory()  # what the job's placement will find in use (should be ~0: nothing of ours yet)
    print(f"rl_h200: GPU memory before the job (used, total): {before}", flush=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "RAY_raylet_start_wait_time_s": "180"}
    env.pop("RAY_ADDRESS", None)
    launches: list[dict[str, object]] = []
    kill_at = args.kill_at_step
    with open(args.out / "job.log", "a") as log:
        while time.monotonic() < deadline:
            t0 = time.monotonic()
            launch = Launch(cmd, env, log, args.out, kill_at, args.kill_delay)
            rc = launch.watch(deadline)
            launches.append({"rc": rc, "seconds": round(time.monotonic() - t0, 1), "killed": launch.killed_at
                             is not None, "gpu_memory": launch.memory, "overlap_decision": launch.notes,
                             "overlap": launch.overlap})
            subprocess.run(["ray", "stop", "--force"], capture_output=True, timeout=120)
            if launch.killed_at is None or rc == 0:
                break
            kill_at = None  # killed once, as planned: the next launch resumes and finishes
    from kgym.records.rl_records import Table, load, read_raw

    run = args.workdir / "records" / run_id
    summary: dict[str, object] = {"shape": args.shape, "run": str(run), "launches": launches,
                                  "gpu_memory_before_job": before, "wall_s": round(time.monotonic() - t_start, 1)}
    try:
        steps = load(run, Table.STEPS)
        raw = read_raw(run, Table.STEPS)
    except Exception as e:  # noqa: BLE001 - no step finished: say so
        summary["error"] = f"{type(e).__name__}: {e}"
        (args.out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
        print(json.dumps(summary, indent=1, default=str))
        return 1
    done = sorted(int(s) for s in steps["step"])
    summary.update(complete=done == list(range(1, args.steps + 1)), steps_counted=done,
                   step_rows_written=len(raw), attempts=sorted(set(int(a) for a in steps["attempt"])))
    cols = [c for c in ("step", "attempt", *SPLIT, "reward_mean", "episodes", "verifications", "train_tokens",
                        "generated_tokens", "kl", "logprob_drift", "status") if c in steps.columns]
    steps[cols].to_csv(args.out / "steps.csv", index=False)
    summary["median"] = {c: float(steps[c].median()) for c in SPLIT if c in steps.columns
                         and steps[c].notna().any()}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    print(steps[cols].to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    print(json.dumps(summary, indent=1, default=str))
    return 0 if summary["complete"] else 1


if __name__ == "__main__":
    sys.exit(main())
