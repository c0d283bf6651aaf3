"""The RL job: tasks -> rollouts -> the farm -> the learner -> a new adapter, step after step; resumable.

    python -m jobs.rl --config jobs/configs/rl.toml --set model=/models/qwen [--set sft_adapter=out/sft/adapter]
    python -m jobs.rl --help-config
    ray job submit --working-dir . --runtime-env-json '{"env_vars": {"KGYM_SUBMIT_DIR": "'$PWD'"}}' \
        -- python -m jobs.rl --config jobs/configs/rl.toml

`RLController` is the loop's driver and the only place that knows every component: it wires them in
`setup()` (TaskActor, the farm: record sink + VerifierPool, RolloutActor(s) whose episodes submit
to the farm, LearnerActor) and drives them from `run()`. No component references it or another
component's controller-side state; each call carries plain data (tasks, rollouts, a TrainBatch, an
adapter directory).

Order of events of step s (attempt a, learner at policy version v):
  1. the curriculum's full-size floor for s (`[curriculum]` final-stage schedule), then
     `tasks_per_step` draws from the TaskActor; with `baselines_off_path` told to the farm at once
     (`prefetch`: idle workers measure their baselines while the engines generate; with the eager
     reward no verdict waits for torch.compile, `defer_compile`);
  2. rollout: one group of `group_size` episodes per task, spread over the rollout actors (each
     episode's submit_kernel awaits the farm; the farm's sink records every verification);
  3. scoring (`kgym.episodes.score_group`: loose credit, all-equal flag); every group's outcomes go
     to the curriculum's ladder; groups whose answers all scored the same are resampled (a new draw,
     or the same task) for at most `[resample] max_rounds` rounds; the replaced groups are recorded,
     counted and never trained on; all-equal groups left when the budget is spent are trained on
     (advantage 0: only KL and entropy act) and counted;
  4. the batch: every kept episode flattened to learner samples; samples more than
     `[offpolicy] max_staleness` versions behind v are dropped and counted;
  5. learning: colocated with sleep mode, the engine sleeps first (vLLM frees its weights and KV
     cache); `LearnerActor.step(batch)` (CISPO, one optimizer step) -> version v+1; then the
     learner hands its cached CUDA memory back (`release_memory`) and the engine wakes. Where the
     learner fits beside the awake engine the placement chose sleep level 0 and none of this runs
     (`jobs.rl_placement.decide_sleep`; the reason is in the log and the attempt record);
  6. adapter sync (the rollout's documented order): the learner writes adapter v+1 to a fresh
     directory (`save_adapter`) -> each rollout actor `load_adapter(v+1, dir)` under a fresh LoRA id,
     retiring versions past its window; awaited before step s+1's first generation;
  7. every `[eval] every` steps: the held-out evaluation (single-turn, `samples` per task, the
     current policy), scored and compared with the previous one by a paired bootstrap over tasks;
  8. rows: the step's episodes (train and eval), its evaluation and its stats, each a part file
     visible whole (`kgym.records.rl_records`), tagged (step, attempt);
  9. every `[checkpoint] every` steps: a checkpoint (the learner's state, the curriculum's state,
     the evaluation baseline, the step) written to a temp dir renamed into place;
 10. the step's done marker, last: from now on step s counts; metrics updated.

Placement (`jobs/rl_placement.py`) is planned once Ray is up and before any actor starts: the farm
takes its share first, then (colocated) the engine alone, then the learner in what vLLM left.

Failures: every remote call has a deadline (`[recovery]`); a call that raises (learner OOM, a vLLM
error, a refused adapter), whose actor died, or that does not answer in time (wedged) fails the
step (`StepFailed`): its attempt record is ended "retried" with the reason, every actor is killed and
started afresh (task actor included), and the step is retried from the last checkpoint. After
`max_retries` failures in a row the attempt record ends "failed" with the reason and the job exits 1.

Resume (the same run id again, after a crash of the driver, or in-process after a failed step): the
newest complete checkpoint c is restored (learner, curriculum, evaluation baseline), done markers of
steps after c are removed, and the run continues at c+1 under a new attempt number; rows of
abandoned attempts stay on disk and are ignored by `rl_records.load`. With `checkpoint.every = 1`
(the default) nothing but the step that was running is redone. A verifier worker's death is the
farm's business (replaced, its calls retried). Does not cover the dashboard, notebooks or replay
(they read the records and metrics this writes).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jobs.job_cli import job_main, parser, toml_string
from jobs.rl_config import RLJobConfig
from jobs.sections import ConfigError
from kgym.contract.rl_step import StepRow
from kgym.farm_config import PoolConfig
from kgym.records.rl_records import RLRecords, RowKind, Table
from kgym.training import step_rules as rl_steps

STATE_FILE = "state.json"
STATE_FORMAT = 1


class StepFailed(RuntimeError):
    """A step could not finish: an actor died, a remote call timed out (a wedged engine or learner)
    or raised (learner OOM, a vLLM error, a refused adapter). The controller restores the last
    checkpoint with fresh actors and retries the step ([recovery] max_retries)."""


def latest_controller_checkpoint(root: Path) -> Path | None:
    """The newest complete checkpoint (temp dirs start with a dot and are never complete)."""
    if not root.is_dir():
        return None
    done = sorted(p for p in root.glob("step-*") if (p / STATE_FILE).is_file())
    return done[-1] if done else None


class RLController:
    def __init__(self, config: RLJobConfig, log: Callable[[str], None] = print, placement: Any = None):
        from jobs.rl_placement import plan_placement

        self.config = config
        self.log = log
        self.placement = placement if placement is not None else plan_placement(config, 0)
        self.step = 0  # last finished step
        self.version = 0  # the learner's policy version
        self.learner_step = 0
        self.prev_eval: rl_steps.EvalScore | None = None
        self.prev_eval_step: int | None = None
        self.restarts = 0

    # ---- setup: wire every component ----------------------------------------------------------
    def setup(self, job: Any) -> None:
        """`job` is `jobs.context.farm_job`'s handle (sink + farm). Everything else starts here."""

        from jobs.rl_metrics import RLMetrics
        from kgym.tasks.registry import task_ids

        cfg = self.config
        self.job = job
        self.run_location = job.run_location
        self.records = RLRecords(job.run_location)
        self.ckpt_root = self._checkpoint_root(job)
        self.adapter_root = self.ckpt_root / "adapters"
        self.metrics = RLMetrics()
        self.exporter = None
        if cfg.metrics.rl_port is not None:
            from kgym.metrics import start_exporter, write_targets_file

            self.exporter = start_exporter(self.metrics, cfg.metrics.rl_port)  # type: ignore[arg-type]
            endpoint = f"127.0.0.1:{self.exporter.port}"
            if cfg.metrics.rl_targets_file:
                write_targets_file(cfg.metrics.rl_targets_file, [endpoint], {"job": "kgym-rl"})
            self.log(f"jobs.rl: RL metrics on http://{endpoint}/metrics")
        self.curriculum = cfg.curriculum
        self.task_actor = None
        self._new_task_actor()
        self.families = self._get(self.task_actor.families.remote(), "the task actor's families")
        self.metrics.declare(self.families)
        families = cfg.eval.families or tuple(self.families)
        excluded = set(cfg.curriculum.exclude)
        eval_ids = [t for f in families for t in task_ids(f) if t not in excluded]
        self.eval_specs = rl_steps.held_out_specs(eval_ids, cfg.eval.tasks, cfg.eval.seed)
        self.rollouts: list[Any] = []
        self.learner = None
        self.asleep = False
        self.log(f"jobs.rl: placement {self.placement.describe()}")
        try:
            self._restore(self._start_attempt())
        except StepFailed as e:
            self.records.end_attempt("failed", f"start failed: {e}")
            raise

    def _new_task_actor(self) -> None:
        import ray

        from ray_cluster.task_actor import TaskActor

        if self.task_actor is not None:
            try:
                ray.kill(self.task_actor)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.task_actor = TaskActor.remote(self.curriculum, self.config.curriculum.seed)

    def _get(self, refs: Any, what: str, timeout: float | None = None) -> Any:
        """`ray.get` with a deadline: a call that raises, whose actor died, or that does not answer
        within `timeout` ([recovery] call_timeout_s by default) is a `StepFailed` naming `what`."""
        import ray
        from ray.exceptions import GetTimeoutError, RayActorError, RayError

        limit = self.config.recovery.call_timeout_s if timeout is None else timeout
        try:
            return ray.get(refs, timeout=limit)
        except GetTimeoutError:
            raise StepFailed(f"{what}: no answer in {limit:g} s (wedged)") from None
        except RayActorError as e:
            raise StepFailed(f"{what}: the actor died ({type(e).__name__}: {str(e)[:300]})") from e
        except RayError as e:  # an exception inside the actor's method (OOM, vLLM, peft ...)
            raise StepFailed(f"{what}: {type(e).__name__}: {str(e)[-600:]}") from e

    def _checkpoint_root(self, job: Any) -> Path:
        if self.config.checkpoint.dir is not None:
            from jobs.context import records_root

            return Path(records_root(self.config.checkpoint.dir))
        if "://" in job.run_location:
            raise ConfigError("[checkpoint] dir: records go to a URI; give a checkpoint directory that the learner "
                              "and the rollout actors can all read (a shared filesystem path)")
        return Path(job.run_location + ".checkpoints")

    def _start_attempt(self) -> Path | None:
        ckpt = latest_controller_checkpoint(self.ckpt_root)
        attempt = self.records.begin_attempt({"started_at": time.time(), "resumed_from": str(ckpt) if ckpt else None,
                                              "pid": os.getpid(), "placement": self.placement.to_dict()})
        self.attempt = attempt
        return ckpt

    def _restore(self, ckpt: Path | None) -> None:
        """(Re)start the learner and rollout actors at checkpoint `ckpt` (None: the start)."""
        import ray

        from ray_cluster.learner import LearnerActor
        from ray_cluster.rollout import RolloutActor

        cfg = self.config
        for actor in [*self.rollouts, *([self.learner] if self.learner is not None else [])]:
            try:
                ray.kill(actor)
            except Exception:  # noqa: BLE001 - an actor already gone
                pass
        if self.rollouts or self.learner is not None:  # a retry: the task actor may be what failed
            self._new_task_actor()
        self.rollouts, self.learner, self.asleep = [], None, False
        state: dict[str, Any] = {}
        learner_ckpt = None
        if ckpt is not None:
            state = json.loads((ckpt / STATE_FILE).read_text())
            if state.get("format") != STATE_FORMAT:
                raise ConfigError(f"{ckpt}: checkpoint format {state.get('format')!r}, expected {STATE_FORMAT}")
            learner_ckpt = str(ckpt / "learner" / state["learner_checkpoint"])
            self._get(self.task_actor.load_state_dict.remote(state["curriculum"]), "restoring the curriculum")
            prev = state.get("prev_eval")
            self.prev_eval = None if prev is None else rl_steps.EvalScore(
                tuple(prev["keys"]), tuple(prev["per_task"]), tuple(prev["per_pass"]), prev["reward_mean"])
            self.prev_eval_step = state.get("prev_eval_step")
        self.step = int(state.get("step", 0))
        self.version = int(state.get("policy_version", 0))
        self.learner_step = int(state.get("learner_step", 0))
        dropped = self.records.drop_markers_after(self.step)
        if ckpt is not None and self.step not in self.records.markers():
            self.records_commit(state["commit"])  # the checkpoint was written, its marker not yet
        if ckpt is not None:
            self.log(f"jobs.rl: resuming after step {self.step} (policy version {self.version}) from {ckpt}, "
                     f"attempt {self.attempt}" + (f"; steps {dropped} are redone" if dropped else ""))
        pl, rec = self.placement, cfg.recovery
        name = f"kgym-rl-{cfg.records.run_id}-a{self.attempt}"
        t0 = time.perf_counter()
        rc = cfg.rollout_config(pl)
        self.rollouts = [RolloutActor.options(num_gpus=pl.engine_gpus, num_cpus=0 if pl.engine_gpus else 1,
                                              name=f"{name}-rollout-{i}").remote(rc, self.job.pool.handle)
                         for i in range(pl.engine_actors)]
        if pl.mode == "colocated":
            # vLLM sizes its memory from what is free when it starts: the engine first, alone, then the
            # learner in what it left (the verifier worker was placed before either).
            self._get([r.policy_version.remote() for r in self.rollouts], "starting the rollout engine",
                      rec.start_timeout_s)
        self.learner = LearnerActor.options(num_gpus=pl.learner_gpus, num_cpus=0 if pl.learner_gpus else 1,
                                            name=f"{name}-learner").remote(cfg.learner_config(), learner_ckpt)
        self._get([r.policy_version.remote() for r in self.rollouts], "starting the rollout engines",
                  rec.start_timeout_s)  # the engines started (not a step's time)
        got = self._get(self.learner.policy_version.remote(), "starting the learner", rec.start_timeout_s)
        self.log(f"jobs.rl: {len(self.rollouts)} rollout actor(s) and the learner ready in "
                 f"{time.perf_counter() - t0:.1f} s")
        if got != self.version:
            raise RuntimeError(f"learner resumed at version {got}, the checkpoint says {self.version}")
        if self.version > 0:
            adapter = self._get(self.learner.save_adapter.remote(str(self._adapter_dir())), "saving the adapter")
            self._get([r.load_adapter.remote(self.version, adapter) for r in self.rollouts],
                      f"loading adapter v{self.version}")

    def _adapter_dir(self) -> Path:
        return self.adapter_root / f"attempt-{self.attempt:04d}"

    def records_commit(self, info: dict[str, Any]) -> None:
        self.records.commit(int(info["step"]), info)

    # ---- the loop -----------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        cfg = self.config
        if self.step == 0 and cfg.eval.every and cfg.eval.at_start and self.prev_eval is None:
            self.prev_eval, rows, row = self._evaluate(0)
            self.prev_eval_step = 0
            self.records.write(Table.ROLLOUTS, rows)
            self.records.write(Table.EVALS, [row])
            self.records_commit(self._commit_info(0, None))
            self.log(f"jobs.rl: held-out evaluation of the starting policy: solve rate {self.prev_eval.solve_rate:.3f}")
        failures = 0  # consecutive failures of the step being tried
        while self.step < cfg.steps:
            try:
                self._one_step(self.step + 1)
                failures = 0
            except StepFailed as e:
                failures += 1
                self.restarts += 1
                self.metrics.step_failures.inc()
                why = f"step {self.step + 1} failed: {e}"
                if failures > cfg.recovery.max_retries:
                    self.records.end_attempt("failed", f"{why} (after {cfg.recovery.max_retries} retries)")
                    self.log(f"jobs.rl: {why}; giving up after {cfg.recovery.max_retries} retries")
                    raise
                self.log(f"jobs.rl: {why}; retry {failures}/{cfg.recovery.max_retries} from the last checkpoint "
                         f"with fresh actors")
                self.records.end_attempt("retried", why)
                self._restore_with_retries(cfg.recovery.max_retries - failures)
        self.records.end_attempt("done")
        return {"steps": self.step, "policy_version": self.version, "attempt": self.attempt,
                "restarts": self.restarts}

    def _restore_with_retries(self, left: int) -> None:
        """A new attempt from the last checkpoint; an actor failing to start counts as a retry too."""
        while True:
            try:
                self._restore(self._start_attempt())
                return
            except StepFailed as e:
                if left <= 0:
                    self.records.end_attempt("failed", f"restart failed: {e}")
                    raise
                left -= 1
                self.log(f"jobs.rl: restart failed ({e}); trying again")
                self.records.end_attempt("retried", f"restart failed: {e}")

    def _rollout(self, tasks: list[Any], group_ids: list[str], modes: list[str] | None = None,
                 group_size: int | None = None) -> list[Any]:
        """Groups spread over the rollout actors, results in the order of `tasks`."""
        n = len(self.rollouts)
        parts = [list(range(i, len(tasks), n)) for i in range(n)]
        refs = [(idx, r.rollout.remote([tasks[i] for i in idx], [group_ids[i] for i in idx],
                                       None if modes is None else [modes[i] for i in idx], group_size))
                for r, idx in zip(self.rollouts, parts) if idx]
        out: list[Any] = [None] * len(tasks)
        deadline = time.monotonic() + self.config.recovery.rollout_timeout_s
        for idx, ref in refs:
            left = max(1.0, deadline - time.monotonic())
            for i, g in zip(idx, self._get(ref, f"rolling out {len(idx)} group(s)", left)):
                out[i] = g
        return out

    def _prefetch(self, tasks: list[Any]) -> None:
        """Tell the farm the tasks about to be rolled out: its idle workers measure their baselines
        while the engines generate, so the first submission of a task does not wait for them
        (docs/farm.md, "Baselines off the candidate's path"). Episodes verify with the task's own
        options (`EvalRequest.for_task(task, code)`), which is what `for_task` here prefetches."""
        from kgym.farm.baseline_prefetch import BaselineRequest

        if not self.config.baselines_off_path:
            return
        self.job.pool.prefetch([BaselineRequest.for_task(t) for t in tasks])

    def _engine_stats(self) -> tuple[float, float, int, int, int, float]:
        """(engine-busy seconds, generated tokens, engine calls, requests served, engine iterations,
        requests decoded summed over iterations), summed over engines."""
        stats = self._get([r.stats.remote() for r in self.rollouts], "the engines' stats")
        return (sum(float(s["generate_seconds"]) for s in stats), sum(float(s["generated_tokens"]) for s in stats),
                sum(int(s["engine_calls"]) for s in stats), sum(int(s["requests"]) for s in stats),
                sum(int(s.get("engine_steps") or 0) for s in stats),
                sum(float(s.get("mean_running") or 0.0) * int(s.get("engine_steps") or 0) for s in stats))

    def _sleep(self) -> float:
        """Colocated mode: the engine frees its GPU memory for the learner (vLLM sleep mode)."""
        if not self.placement.sleep_level or self.asleep:
            return 0.0
        t0 = time.perf_counter()
        outs = self._get([r.sleep.remote(self.placement.sleep_level) for r in self.rollouts], "engine sleep")
        bad = [o.reason for o in outs if not o.ok]
        if bad:
            raise StepFailed(f"engine sleep refused: {bad[0]}")
        self.asleep = True
        return time.perf_counter() - t0

    def _wake(self) -> float:
        """The learner hands its cached memory back, then the engine takes its share again."""
        if not self.asleep:
            return 0.0
        t0 = time.perf_counter()
        self._get(self.learner.release_memory.remote(), "learner memory release")
        outs = self._get([r.wake.remote() for r in self.rollouts], "engine wake-up")
        bad = [o.reason for o in outs if not o.ok]
        if bad:
            raise StepFailed(f"engine wake-up refused: {bad[0]}")
        self.asleep = False
        return time.perf_counter() - t0

    def _one_step(self, s: int) -> None:
        cfg = self.config
        t_step = time.perf_counter()
        floor = cfg.curriculum.floor_at(s, cfg.steps)
        self._get(self.task_actor.set_floor_full.remote(floor), "the curriculum floor")
        tasks = self._get(self.task_actor.sample.remote(cfg.tasks_per_step), "drawing tasks")
        self._prefetch(tasks)
        self.log(f"jobs.rl: step {s}: rolling out {len(tasks)} group(s)")

        # 2-3. rollouts, scoring, bounded resampling of all-equal groups
        gen0, tok0, calls0, req0, it0, run0 = self._engine_stats()
        t0 = time.perf_counter()
        groups: list[rl_steps.ScoredGroup] = []
        round_tasks = tasks
        for rnd in range(cfg.resample.max_rounds + 1):
            gids = [f"a{self.attempt}-s{s:06d}-r{rnd}-g{i}" for i in range(len(round_tasks))]
            rolled = self._rollout(round_tasks, gids)
            scored = [rl_steps.score(g, t, rnd, cfg.episodes.group_size) for g, t in zip(rolled, round_tasks)]
            groups.extend(scored)
            again = rl_steps.to_resample(scored, rnd, cfg.resample.max_rounds)
            if not again:
                break
            for g in again:
                g.resampled = True
            round_tasks = (self._get(self.task_actor.sample.remote(len(again)), "drawing tasks")
                           if cfg.resample.new_task else [g.task for g in again])
        rollout_s = time.perf_counter() - t0
        gen1, tok1, calls1, req1, it1, run1 = self._engine_stats()
        # requests the engines decoded per iteration (continuous batching): the episodes really in
        # flight, at most the step's episodes (the step row's mean_batch counts admissions, not this)
        in_flight = (run1 - run0) / (it1 - it0) if it1 > it0 else 0.0
        generation_s = max(0.0, gen1 - gen0)
        for g in groups:  # the ladder hears every attempt, resampled groups' too
            for e in (g.result.episodes if g.result else []):
                if e.error is None:
                    self.task_actor.record.remote(g.task.task_id, g.task.spec.stage, e.solved)

        # 4-5. the batch and the learner step
        batch = rl_steps.build_batch(groups, self.version, cfg.offpolicy.max_staleness)
        version_before = self.version
        metrics = None
        sleep_s = self._sleep() if batch.samples else 0.0  # colocated: the learner gets the GPU's memory
        t1 = time.perf_counter()
        if batch.samples:
            from kgym.rl.batch import TrainBatch

            metrics = self._get(self.learner.step.remote(TrainBatch(tuple(batch.samples))), f"learner step {s}",
                                cfg.recovery.learner_timeout_s)
        learning_s = time.perf_counter() - t1
        wake_s = self._wake()

        # 6. adapter sync: write v+1, every rollout actor loads it before the next generation
        t2 = time.perf_counter()
        if metrics is not None and metrics.policy_version > self.version:
            adapter = self._get(self.learner.save_adapter.remote(str(self._adapter_dir())), "saving the adapter")
            self._get([r.load_adapter.remote(metrics.policy_version, adapter) for r in self.rollouts],
                      f"loading adapter v{metrics.policy_version}")
            self.version = metrics.policy_version
            self.learner_step = metrics.step
            self._prune_adapters()
        sync_s = time.perf_counter() - t2

        # 7. held-out evaluation
        eval_rows: list[dict[str, Any]] = []
        eval_row = None
        t3 = time.perf_counter()
        if cfg.eval.every and s % cfg.eval.every == 0:
            current, eval_rows, eval_row = self._evaluate(s)
            self.prev_eval, self.prev_eval_step = current, s
        eval_s = time.perf_counter() - t3

        # 8. rows
        baseline = cfg.episodes.reward.baseline.value
        train_rows = rl_steps.episode_rows(groups, run_id=cfg.records.run_id, attempt=self.attempt, step=s,
                                           kind=RowKind.TRAIN, learner_version=version_before, baseline=baseline,
                                           batch=batch)
        nver, verify_busy = rl_steps.verification_work(groups)
        learned = {name: rl_steps.finite(getattr(metrics, name)) if metrics is not None else None
                   for name in ("loss", "kl", "entropy", "clip_fraction", "grad_norm", "lr", "logprob_drift",
                                "sampler_kl", "is_truncated_fraction")}
        # the step's row; its checkpoint columns are filled in after the checkpoint (9.)
        stats = StepRow(
            run_id=cfg.records.run_id, attempt=self.attempt, step=s,
            status=str(metrics.status) if metrics is not None else "no_batch",
            version_before=version_before, version_after=self.version, learner_step=self.learner_step,
            tasks=len(tasks), groups=len(groups), groups_resampled=sum(g.resampled for g in groups),
            groups_all_equal_kept=sum(g.all_equal and not g.resampled for g in groups),
            episodes=sum(len(g.rollout.episodes) for g in groups),
            episodes_error=sum(1 for r in train_rows if r["error"]),
            samples_trained=len(batch.samples), dropped_stale=batch.dropped_stale,
            staleness_max=batch.staleness_max, **rl_steps.rates(train_rows), floor_full=floor, **learned,
            train_tokens=int(metrics.tokens) if metrics else 0, generated_tokens=int(tok1 - tok0),
            generation_tokens_per_s=(tok1 - tok0) / generation_s if generation_s > 0 else None,
            rollout_s=rollout_s, generation_s=min(generation_s, rollout_s),
            verification_s=max(0.0, rollout_s - generation_s), verify_busy_s=verify_busy,
            verifications=nver, learning_s=learning_s, sync_s=sync_s, eval_s=eval_s,
            sleep_s=sleep_s, wake_s=wake_s, generate_calls=calls1 - calls0,
            mean_batch=(req1 - req0) / (calls1 - calls0) if calls1 > calls0 else None,
            checkpoint_s=0.0, step_s=0.0)
        self.records.write(Table.ROLLOUTS, train_rows + eval_rows)
        if eval_row is not None:
            self.records.write(Table.EVALS, [eval_row])

        # 9. checkpoint, 10. the done marker (last)
        t4 = time.perf_counter()
        self.step = s
        checkpoint = None
        if s % cfg.checkpoint.every == 0 or s == cfg.steps:
            checkpoint = str(self._checkpoint(s))
        checkpoint_s = time.perf_counter() - t4
        stats = dataclasses.replace(stats, checkpoint_s=checkpoint_s, checkpoint=checkpoint,
                                    step_s=time.perf_counter() - t_step)
        self.records.write(Table.STEPS, [stats.to_row()])
        self.records_commit(self._commit_info(s, checkpoint))
        self.metrics.observe_step(stats, train_rows)
        if eval_row is not None:
            self.metrics.observe_eval(eval_row)
        self.log(f"jobs.rl: step {s}/{cfg.steps} {stats.status} v{version_before}->v{self.version} "
                 f"groups {len(groups)} (resampled {stats.groups_resampled}) samples {len(batch.samples)} "
                 f"reward {stats.reward_mean if stats.reward_mean is not None else float('nan'):.3f} "
                 f"gen {stats.generation_s:.1f}s (in flight {in_flight:.2f}) verify {stats.verification_s:.1f}s "
                 f"learn {learning_s:.1f}s sleep {sleep_s:.1f}s wake {wake_s:.1f}s "
                 f"sync {sync_s:.1f}s step {stats.step_s:.1f}s")

    def _commit_info(self, s: int, checkpoint: str | None) -> dict[str, Any]:
        return {"step": s, "attempt": self.attempt, "policy_version": self.version, "checkpoint": checkpoint,
                "committed_at": time.time()}

    # ---- evaluation ---------------------------------------------------------------------------
    def _evaluate(self, s: int) -> tuple[rl_steps.EvalScore, list[dict[str, Any]], dict[str, Any]]:
        cfg = self.config
        tasks = self._get(self.task_actor.make_tasks.remote([(tid, seed, "full") for tid, seed in self.eval_specs]),
                          "the held-out tasks")
        self._prefetch(tasks)
        gids = [f"a{self.attempt}-s{s:06d}-eval-g{i}" for i in range(len(tasks))]
        rolled = self._rollout(tasks, gids, modes=["single"] * len(tasks), group_size=cfg.eval.samples)
        groups = [rl_steps.score(g, t, 0, cfg.eval.samples) for g, t in zip(rolled, tasks)]
        keys = [f"{t.task_id}@{t.spec.seed}" for t in tasks]
        solved = [[bool(e.result is not None and e.result.solved) for e in g.episodes] for g in rolled]
        rewards = [e.reward for g in groups if g.result for e in g.result.episodes]
        current = rl_steps.eval_score(keys, solved, rewards)
        cmp = rl_steps.compare_evals(self.prev_eval, current, cfg.eval.resamples)
        rows = rl_steps.episode_rows(groups, run_id=cfg.records.run_id, attempt=self.attempt, step=s,
                                     kind=RowKind.EVAL, learner_version=self.version,
                                     baseline=cfg.episodes.reward.baseline.value)
        for r in rows:
            r["trained"] = False
        row = {"run_id": cfg.records.run_id, "attempt": self.attempt, "step": s, "policy_version": self.version,
               "tasks": len(tasks), "samples": cfg.eval.samples, "solve_rate": current.solve_rate,
               "solve_rate_std": current.pass_std, "reward_mean": current.reward_mean,
               "per_task_json": json.dumps(dict(zip(current.keys, current.per_task))),
               "previous_step": self.prev_eval_step if cmp is not None else None,
               "delta_pp": cmp.delta_pp if cmp else None, "ci95_low_pp": cmp.ci95_pp[0] if cmp else None,
               "ci95_high_pp": cmp.ci95_pp[1] if cmp else None, "gained": cmp.gained if cmp else None,
               "lost": cmp.lost if cmp else None}
        msg = f"jobs.rl: held-out evaluation at step {s}: solve rate {current.solve_rate:.3f}"
        if cmp is not None:
            msg += (f", {cmp.delta_pp:+.1f} pp [{cmp.ci95_pp[0]:+.1f}; {cmp.ci95_pp[1]:+.1f}] against step "
                    f"{self.prev_eval_step} (gained {cmp.gained}, lost {cmp.lost})")
        self.log(msg)
        return current, rows, row

    # ---- checkpoints --------------------------------------------------------------------------
    def _checkpoint(self, s: int) -> Path:
        """ckpt_root/step-NNNNNN/ = learner/ (the learner's checkpoint) + state.json, renamed into place."""
        final = self.ckpt_root / f"step-{s:06d}"
        tmp = self.ckpt_root / f".tmp-step-{s:06d}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        learner_path = Path(self._get(self.learner.save.remote(str(tmp / "learner")), "the learner's checkpoint"))
        prev = None if self.prev_eval is None else dataclasses.asdict(self.prev_eval)
        state = {"format": STATE_FORMAT, "step": s, "attempt": self.attempt, "policy_version": self.version,
                 "learner_step": self.learner_step, "learner_checkpoint": learner_path.name,
                 "curriculum": self._get(self.task_actor.state_dict.remote(), "the curriculum's state"),
                 "prev_eval": prev,
                 "prev_eval_step": self.prev_eval_step, "commit": self._commit_info(s, str(final)),
                 "run_id": self.config.records.run_id}
        (tmp / STATE_FILE).write_text(json.dumps(state, indent=1, default=str))
        if final.exists():  # a redone step (resume with every > 1): replace it whole
            old = self.ckpt_root / f".old-step-{s:06d}-{os.getpid()}"
            os.rename(final, old)
            os.rename(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, final)
        self._prune_checkpoints()
        return final

    def _prune_checkpoints(self) -> None:
        c = self.config.checkpoint
        done = sorted(p for p in self.ckpt_root.glob("step-*") if (p / STATE_FILE).is_file())
        keep = set(done[-c.keep_last:])
        for p in done:
            if p not in keep and int(p.name.split("-")[1]) % c.keep_every != 0:
                shutil.rmtree(p, ignore_errors=True)

    def _prune_adapters(self) -> None:
        """Adapter dirs older than the rollout's window are no longer served: delete them."""
        root = self._adapter_dir()
        keep = self.config.offpolicy.adapter_window + 1
        for p in sorted(root.glob("v-*"))[:-keep]:
            shutil.rmtree(p, ignore_errors=True)

    def close(self) -> None:
        if self.exporter is not None:
            self.exporter.close()


def run_rl_job(config: RLJobConfig, log: Callable[[str], None] = print) -> dict[str, Any]:
    from jobs.context import farm_job

    verify = config.farm_verify()  # with the eager reward and baselines_off_path, compile is deferred
    planned: list[Any] = []

    def farm_section(gpu: bool) -> PoolConfig:
        """The placement, planned once Ray is up and before any actor starts; the farm takes its share."""
        import ray

        from jobs.rl_placement import plan_placement
        from ray_cluster.gpu_memory import total_gpu_memory_gib

        placement = plan_placement(config, float(ray.cluster_resources().get("GPU", 0)), total_gpu_memory_gib)
        planned.append(placement)
        if placement.mode == "cpu":
            return config.farm
        return dataclasses.replace(config.farm, workers=placement.farm_workers, min_workers=0, max_workers=None,
                                   use_gpus=True, gpus_per_worker=placement.farm_gpus_per_worker)

    with farm_job("jobs.rl", config.ray, config.records, config.metrics.sink, farm_section, verify,
                  log) as job:
        controller = RLController(config, log, planned[0])
        try:
            controller.setup(job)
            summary = controller.run()
        finally:
            controller.close()
        summary["run_path"] = job.run_location
        summary["checkpoints"] = str(controller.ckpt_root)
        log(f"jobs.rl: done: {summary['steps']} steps, policy version {summary['policy_version']}, "
            f"attempt {summary['attempt']}; records in {job.run_location}")
        return summary


def main(argv: list[str] | None = None) -> int:
    p = parser("rl", __doc__, "steps=10")
    p.add_argument("--run-id", help="override records.run_id (the same run id resumes)")
    from jobs import preflight

    try:
        return job_main(p, RLJobConfig, run_rl_job, argv, preflight=preflight.rl,
                        shortcuts=lambda a: [f"records.run_id={toml_string(a.run_id)}"] if a.run_id else [])
    except StepFailed as e:  # retries spent: the reason is also the attempt's last record
        print(f"jobs.rl: error: {e}. The records and the last checkpoint are kept: the same run id resumes.",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
