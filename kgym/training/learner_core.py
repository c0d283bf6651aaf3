"""`Learner`: the policy being trained and one optimizer step at a time, without Ray.

Holds the base model (4-bit NF4 through bitsandbytes, BF16 compute; `quantize_4bit=False` keeps it in
`compute_dtype` for tiny CPU tests), one trainable LoRA (peft, adapter name "default"; r=8,
alpha=16 on q/k/v/o/gate/up/down, the study's), gradient checkpointing, AdamW (lr 1e-5) on a
linear schedule, and the step's math from `kgym.rl`. `ray_cluster.learner.LearnerActor` wraps it.
transformers, peft and bitsandbytes are imported when a Learner is built, not at import time.

The reference policy (for the KL term) is the policy before RL:
  - after SFT (`sft_adapter` set): the SFT adapter, loaded a second time as the frozen adapter
    "sft_reference", with the RL adapter inactive. The RL adapter itself starts as a copy of the
    SFT adapter (its r/alpha/targets come from the SFT adapter's config, `lora` is then unused),
    so KL is exactly 0 at RL step 0. Never the raw base: that would pull the policy back past SFT;
  - without SFT: the base with the adapter disabled (LoRA B starts at 0: KL is 0 at step 0).

One policy with the sampler: every dropout is off (`learner_model.disable_dropout`: the SFT adapter's
LoRA dropout included), log-probs are of softmax(logits / `temperature`) at the sampler's
temperature, and the remaining gap (NF4 against vLLM's bf16, other kernels) is measured every step
and corrected by `correction` (`kgym.rl.correction`: tis, recompute or none).

Memory: the head's logits are made `logits_chunk` completion rows at a time under checkpointing
(`kgym.rl.chunked`), so no (tokens x vocabulary) float32 tensor of a long episode exists; what a
micro-batch holds beyond that is its activations, linear in its padded tokens (`token_budget`).

Adapter weights stay float32 (peft's default upcast): an AdamW step at lr 1e-5 is far below bf16's
resolution at the weights' scale and would round to nothing. Matmuls run in `compute_dtype`.

Order of events in `step(batch)` (one optimizer step per TrainBatch):
  1. advantages: given, or group-relative from rewards (`kgym.rl.advantages`);
  2. micro-batches by `token_budget` (`kgym.rl.packing`);
  3. no-grad pass: old log-probs recomputed for samples without sampler log-probs (every sample
     with correction tis or recompute), the TIS weights (tis); reference log-probs when beta > 0;
  4. grad pass per micro-batch: log-probs (+ entropy), the policy loss `loss` names (`kgym.rl.losses`:
     CISPO by default) as its share of the step's (the step's loss tokens and sequences), backward
     (gradients accumulate); the sampler/learner gap measured (drift, k3 KL, truncated share, mean
     TIS weight);
  5. clip the gradient norm, AdamW step, scheduler step; a non-finite loss or gradient skips the
     update (`StepStatus.NON_FINITE`) and leaves the policy version unchanged, and so does a batch
     with no signal (every advantage zero and no KL, entropy or shaping term: `NO_SIGNAL`, checked
     before any forward pass);
  6. policy_version += 1, the entropy controller sees the step's entropy;
  7. every `checkpoint_every` steps a checkpoint, written atomically (temp dir, then rename); its
     time is `checkpoint_s`, outside `step_time_s`. Phase times (`prepass_s`, `train_pass_s`,
     `optimizer_s`) are taken after a CUDA synchronize, so they are the device's, not the queue's.

Checkpoint layout (`step-000010/`): `adapter/` (adapter_config.json + adapter_model.safetensors:
loads in peft and as a vLLM LoRARequest path), `trainer_state.pt` (optimizer, scheduler, RNG states,
step, policy version, entropy controller), `meta.json` (step, version, time; for people).
`resume(path)` restores all of it; on CPU the next step's loss is identical to the uninterrupted run's.

Does not cover: sampling (the rollout actor), rewards (`kgym.reward`), pushing adapters to vLLM
(the controller hands `adapter_dir` on), multi-GPU sharding (one learner, one device).
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from pathlib import Path

import torch

from kgym.rl import (
    AdvantageConfig,
    EntropyBonusConfig,
    EntropyController,
    GapInputs,
    GapStats,
    LogProbShapingConfig,
    LossInputs,
    PaddedBatch,
    TrainBatch,
    batch_advantages,
    behaviour,
    collate,
    masked_sum,
    plan_micro_batches,
    policy_loss,
    sampler_gap,
    shape_advantages,
)
from kgym.training.learner_config import COMPUTE_DTYPES, LORA_TARGETS, LearnerConfig, LoraSettings
from kgym.training.learner_model import check_chunkable, completion_logprobs, disable_dropout

ADAPTER = "default"  # the trainable RL adapter (peft saves "default" at the top of a directory)
REFERENCE = "sft_reference"  # the frozen SFT adapter, the reference after SFT
STATE_FILE = "trainer_state.pt"
CHECKPOINT_FORMAT = 1
DTYPES = {name: getattr(torch, name) for name in COMPUTE_DTYPES}

# the settings live in learner_config (torch-free: a job's config reads them without torch)
__all__ = ["ADAPTER", "LORA_TARGETS", "REFERENCE", "Learner", "LearnerConfig", "LoraSettings", "StepMetrics",
           "StepStatus", "latest_checkpoint", "load_base_model", "resolve_device"]


class StepStatus(StrEnum):
    OK = "ok"
    NO_LOSS_TOKENS = "no_loss_tokens"  # nothing to train on: no update, version unchanged
    NON_FINITE = "non_finite"  # loss or gradient not finite: update skipped, version unchanged
    # Every advantage zero and no KL, entropy or shaping term: the gradient is zero, and an AdamW step
    # would only replay its momentum (at the toy demo's lr it kept moving a policy that had stopped
    # learning, step after step). No update, version unchanged.
    NO_SIGNAL = "no_signal"


@dataclass(frozen=True)
class StepMetrics:
    step: int  # optimizer steps done after this one
    policy_version: int  # version of the adapter after this step (the sampler should use this next)
    status: StepStatus
    loss: float
    policy_loss: float
    kl: float  # mean k3 KL per loss token to the reference
    entropy: float  # mean token entropy (nats) over loss tokens
    entropy_coef: float  # the bonus coefficient applied in this step
    clip_fraction: float  # loss tokens whose weight (CISPO) or gradient (PPO clip) the loss's bound changed
    ratio_mean: float  # mean pi_theta / pi_old over loss tokens
    # The sampler/learner gap (kgym.rl.correction), over the loss tokens of samples that had sampler
    # log-probs, learner = its policy before this update; nan when no sample had them.
    logprob_drift: float  # mean |sampler logp - learner logp|
    drift_tokens: int  # the tokens these means are over (0: no sampler log-probs this step)
    sampler_kl: float  # mean k3 estimate of KL(sampler || learner)
    is_truncated_fraction: float  # share of those tokens whose learner/sampler ratio exceeds the correction cap
    is_weight_mean: float  # mean of min(ratio, cap): the TIS weight (applied only with correction "tis")
    recomputed_samples: int  # samples whose old log-probs the learner computed
    grad_norm: float  # before clipping
    lr: float  # the learning rate this step used
    samples: int
    tokens: int  # prompt + completion tokens (unpadded) through forward + backward
    loss_tokens: int
    micro_batches: int
    tokens_per_s: float  # tokens / step_time_s
    step_time_s: float  # the whole step but its checkpoint
    prepass_s: float  # no-grad forwards: old log-probs recomputed, reference log-probs
    train_pass_s: float  # forward + backward of every micro-batch
    optimizer_s: float  # clipping, AdamW, schedule
    peak_memory_bytes: int  # CUDA: max allocated during the step; CPU: the process's peak RSS
    checkpoint: str | None = None  # the checkpoint written after this step, if any
    checkpoint_s: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def linear_schedule(optimizer: torch.optim.Optimizer, warmup_steps: int, total_steps: int):
    """lr * step/warmup during warm-up, then linear from lr to 0 at total_steps (and 0 after)."""
    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / (warmup_steps + 1)
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def latest_checkpoint(root: str | Path) -> Path | None:
    """The newest complete checkpoint under `root` (temp dirs are never complete: they are renamed last)."""
    root = Path(root)
    if not root.is_dir():
        return None
    done = sorted(p for p in root.glob("step-*") if (p / STATE_FILE).is_file() and (p / "adapter").is_dir())
    return done[-1] if done else None


def load_base_model(config: LearnerConfig, device: torch.device):
    """The base model from `config.model_path`: NF4 (bitsandbytes) or plain, on `device`, cache off."""
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    dtype = DTYPES[config.compute_dtype]
    if config.quantize_4bit:
        quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=dtype)
        model = AutoModelForCausalLM.from_pretrained(config.model_path, quantization_config=quant, dtype=dtype,
                                                     device_map={"": str(device)})
    else:
        model = AutoModelForCausalLM.from_pretrained(config.model_path, dtype=dtype).to(device)
    model.config.use_cache = False  # training never decodes; the KV cache would only hold memory
    return model


class Learner:
    def __init__(self, config: LearnerConfig) -> None:
        from peft import LoraConfig, PeftModel, get_peft_model

        self.config = config
        self.device = resolve_device(config.device)
        torch.manual_seed(config.seed)
        random.seed(config.seed)
        base = load_base_model(config, self.device)
        if config.gradient_checkpointing:
            # Non-reentrant checkpointing needs no input that requires grad, so the frozen (and
            # quantised) embedding need not be touched (peft's prepare_model_for_kbit_training would
            # upcast it and the lm_head to float32, gigabytes at 7B).
            base.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if config.sft_adapter is not None:
            self.model = PeftModel.from_pretrained(base, config.sft_adapter, adapter_name=ADAPTER, is_trainable=True)
            self.model.load_adapter(config.sft_adapter, adapter_name=REFERENCE, is_trainable=False)
            self.model.set_adapter(ADAPTER)  # trainable "default", frozen reference
        else:
            lora = config.lora
            self.model = get_peft_model(base, LoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=0.0,
                                                         target_modules=list(lora.targets), bias="none",
                                                         task_type="CAUSAL_LM"))
        # One policy with the sampler: no dropout anywhere (the SFT adapter's 0.05 included), kept off
        # in train mode, which gradient checkpointing needs.
        self.dropout_disabled = disable_dropout(self.model)
        if config.logits_chunk:
            check_chunkable(self.model)
        self.model.train()
        self.trainable = [p for p in self.model.parameters() if p.requires_grad]
        if not self.trainable:
            raise RuntimeError("the model has no trainable adapter parameters")
        self.optimizer = torch.optim.AdamW(self.trainable, lr=config.lr, betas=config.adam_betas, eps=config.adam_eps,
                                           weight_decay=config.weight_decay)
        self.scheduler = linear_schedule(self.optimizer, config.warmup_steps, config.total_steps)
        # the math's configs, made once from the settings (kgym.training.learner_config)
        self.loss = config.loss_config()
        self.correction = config.correction_config()
        self.advantages = config.advantages or AdvantageConfig()
        self.shaping = config.shaping or LogProbShapingConfig()
        self.entropy = EntropyController(config.entropy or EntropyBonusConfig())
        self.step_count = 0
        self.policy_version = 0
        self.pad_id = self._pad_id()

    # ---- the policy and the reference ----------------------------------------------------------

    def _pad_id(self) -> int:
        cfg = self.model.config
        for name in ("pad_token_id", "eos_token_id"):
            v = getattr(cfg, name, None)
            if isinstance(v, list):
                v = v[0] if v else None
            if v is not None:
                return int(v)
        return 0  # any id works: padded positions are masked out of attention and of every sum

    @contextmanager
    def reference(self) -> Iterator[None]:
        """Within this block the model is the reference policy (see the module docstring)."""
        if self.config.sft_adapter is not None:
            self.model.set_adapter(REFERENCE, inference_mode=True)
            try:
                yield
            finally:
                self.model.set_adapter(ADAPTER)  # "default" trainable again, the reference frozen
        else:
            with self.model.disable_adapter():
                yield

    def _forward(self, pb: PaddedBatch, entropy_grad: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """Log-probs and entropies (B, C) of the completion tokens under the current model state, at
        the sampler's temperature, the head's logits `logits_chunk` rows at a time (entropies with a
        gradient only when asked: the bonus needs one, the metric does not)."""
        return completion_logprobs(self.model, pb, self.config.temperature, self.config.logits_chunk, entropy_grad)

    @torch.no_grad()
    def logprobs(self, batch: TrainBatch, reference: bool = False) -> list[torch.Tensor]:
        """Per-sample completion log-probs (float32, CPU) under the policy or the reference; for tests
        and for scoring without an update."""
        out: list[torch.Tensor] = [torch.empty(0)] * len(batch.samples)
        for plan in plan_micro_batches(batch.samples, self.config.token_budget):
            pb = collate([batch.samples[i] for i in plan], self.pad_id).to(self.device)
            if reference:
                with self.reference():
                    lp, _ = self._forward(pb)
            else:
                lp, _ = self._forward(pb)
            for row, i in enumerate(plan):
                out[i] = lp[row, :len(batch.samples[i].completion_ids)].cpu()
        return out

    def with_old_logprobs(self, batch: TrainBatch) -> TrainBatch:
        """`batch` with the current policy's log-probs filled in where a sample has no sampler ones.
        For reusing one rollout batch for several optimizer steps (the study reused each for two):
        call it once before the first step, so later steps keep the behaviour policy's log-probs as
        old and CISPO's ratio corrects for the updates in between. (Recomputing inside each step, as
        `step` does for samples without them, would make every step look on-policy.) With correction
        "none" CISPO's ratio then carries the lag; with "tis" the truncated weight does (the filled-in
        log-probs stand for the sampler's); "recompute" ignores it."""
        missing = [i for i, s in enumerate(batch.samples) if s.sampler_logprobs is None]
        if not missing:
            return batch
        lps = self.logprobs(TrainBatch(tuple(batch.samples[i] for i in missing)))
        samples = list(batch.samples)
        for i, lp in zip(missing, lps):
            mask = samples[i].loss_mask
            samples[i] = replace(samples[i], sampler_logprobs=tuple(v if m else 0.0 for v, m in zip(lp.tolist(), mask)))
        return TrainBatch(tuple(samples))

    # ---- one optimizer step --------------------------------------------------------------------

    def step(self, batch: TrainBatch) -> StepMetrics:
        cfg = self.config
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        t0 = self._clock()
        phases = {"prepass_s": 0.0, "train_pass_s": 0.0, "optimizer_s": 0.0}
        samples = batch.samples
        advantages = batch_advantages(batch, self.advantages).to(self.device)
        plans = plan_micro_batches(samples, cfg.token_budget)
        loss_tokens = batch.loss_tokens
        # per-sequence normalisations count episodes, not samples (an episode split per turn is one)
        sequence_tokens = torch.tensor(batch.episode_loss_tokens(), dtype=torch.float32, device=self.device)
        sequences = float(batch.episodes)
        coef = self.entropy.coef_for_step()
        lr = self.scheduler.get_last_lr()[0]
        if loss_tokens == 0:
            return self._metrics(StepStatus.NO_LOSS_TOKENS, t0, batch, plans, phases, lr=lr, coef=coef)
        if not bool(advantages.any()) and self.loss.beta == 0.0 and coef == 0.0 and not self.shaping.enabled:
            return self._metrics(StepStatus.NO_SIGNAL, t0, batch, plans, phases, lr=lr, coef=coef)

        # 3. no-grad pass: old and reference log-probs of every micro-batch, before any update; the
        #    correction's weights (kgym.rl.correction: tis needs the learner's old log-probs).
        method, cap = self.correction.method, self.correction.cap
        padded: list[PaddedBatch] = []
        olds: list[torch.Tensor] = []
        refs: list[torch.Tensor | None] = []
        weights: list[torch.Tensor | None] = []
        recomputed = 0
        with torch.no_grad():
            for plan in plans:
                pb = collate([samples[i] for i in plan], self.pad_id).to(self.device)
                recompute = (torch.ones_like(pb.has_sampler_logprobs) if method.recomputes
                             else ~pb.has_sampler_logprobs)
                learner_lp = None
                if bool(recompute.any()):
                    learner_lp, _ = self._forward(pb)
                    recomputed += int(recompute.sum())
                chosen = behaviour(self.correction, pb.sampler_logprobs, pb.has_sampler_logprobs, learner_lp)
                ref = None
                if self.loss.beta != 0.0:
                    with self.reference():
                        ref, _ = self._forward(pb)
                padded.append(pb)
                olds.append(chosen.old_logprobs)
                refs.append(ref)
                weights.append(chosen.is_weights)
        t1 = self._clock()
        phases["prepass_s"] = t1 - t0
        centre = None
        if self.shaping.enabled:
            num = sum(float(masked_sum(o, pb.loss_mask)) for o, pb in zip(olds, padded))
            centre = num / loss_tokens

        # 4. grad pass: every micro-batch's loss is its share of the step's token mean.
        sums = dict(loss=0.0, policy_loss=0.0, kl=0.0, entropy=0.0, clip=0.0, ratio=0.0)
        gap = GapStats()
        finite = True
        for plan, pb, old, ref, w_is in zip(plans, padded, olds, refs, weights):
            logp, ent = self._forward(pb, entropy_grad=coef != 0.0)
            adv = advantages[plan]
            if centre is not None:
                adv = shape_advantages(adv, old, pb.loss_mask, self.shaping.zeta, mean_logprob=centre)
            out = policy_loss(LossInputs(logprobs=logp, old_logprobs=old, advantages=adv, loss_mask=pb.loss_mask,
                                         ref_logprobs=ref, entropy=ent, num_tokens=float(loss_tokens),
                                         entropy_coef=coef, is_weights=w_is, num_sequences=sequences,
                                         sequence_tokens=sequence_tokens[plan]),
                              self.loss)
            if not torch.isfinite(out.loss):
                finite = False
                break
            out.loss.backward()
            w = out.tokens
            sums["loss"] += out.loss.item()
            sums["policy_loss"] += out.policy_loss
            for key, value in (("kl", out.kl), ("entropy", out.entropy), ("clip", out.clip_fraction),
                               ("ratio", out.ratio_mean)):
                sums[key] += value * w
            # the gap: the learner before the update (its recomputed old log-probs where the correction
            # made them; else this forward, the same policy) against the sampler's log-probs
            gap_mask = pb.loss_mask * pb.has_sampler_logprobs.unsqueeze(1).to(pb.loss_mask.dtype)
            learner_lp = old if method.recomputes else logp.detach()
            gap = gap + sampler_gap(GapInputs(learner_lp, pb.sampler_logprobs, gap_mask), cap)

        # 5. clip, step; a non-finite loss or gradient leaves the policy untouched.
        t2 = self._clock()
        phases["train_pass_s"] = t2 - t1
        grad_norm = float("nan")
        if finite:
            grad_norm = float(torch.nn.utils.clip_grad_norm_(self.trainable, cfg.max_grad_norm))
            finite = bool(torch.isfinite(torch.tensor(grad_norm)))
        if not finite:
            self.optimizer.zero_grad(set_to_none=True)
            return self._metrics(StepStatus.NON_FINITE, t0, batch, plans, phases, lr=lr, coef=coef,
                                 grad_norm=grad_norm, recomputed=recomputed, gap=gap)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step_count += 1
        self.policy_version += 1
        phases["optimizer_s"] = self._clock() - t2

        # 6./7. entropy controller, checkpoint (timed apart: it is not the step's compute).
        mean_entropy = sums["entropy"] / loss_tokens
        self.entropy.update(mean_entropy)
        metrics = self._metrics(StepStatus.OK, t0, batch, plans, phases, lr=lr, coef=coef, grad_norm=grad_norm,
                                recomputed=recomputed, sums=sums, gap=gap)
        if cfg.checkpoint_dir is not None and self.step_count % cfg.checkpoint_every == 0:
            t3 = time.perf_counter()
            ckpt = str(self.save_checkpoint(cfg.checkpoint_dir))
            metrics = replace(metrics, checkpoint=ckpt, checkpoint_s=time.perf_counter() - t3)
        return metrics

    def _clock(self) -> float:
        """Host time after the device's queued work is done (CUDA runs asynchronously)."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return time.perf_counter()

    def _metrics(self, status: StepStatus, t0: float, batch: TrainBatch, plans: list[list[int]], phases: dict,
                 *, lr: float, coef: float, grad_norm: float = float("nan"), recomputed: int = 0,
                 sums: dict | None = None, gap: GapStats | None = None) -> StepMetrics:
        gap = gap if gap is not None else GapStats()
        dt = self._clock() - t0
        if self.device.type == "cuda":
            peak = int(torch.cuda.max_memory_allocated(self.device))
        else:
            peak = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # Linux reports KiB
        n = max(batch.loss_tokens, 1)
        s = sums or {}
        nan = float("nan")
        return StepMetrics(
            step=self.step_count, policy_version=self.policy_version, status=status,
            loss=s.get("loss", nan), policy_loss=s.get("policy_loss", nan), kl=s["kl"] / n if s else nan,
            entropy=s["entropy"] / n if s else nan, entropy_coef=coef, clip_fraction=s["clip"] / n if s else nan,
            ratio_mean=s["ratio"] / n if s else nan,
            logprob_drift=gap.drift, drift_tokens=gap.tokens, sampler_kl=gap.kl,
            is_truncated_fraction=gap.truncated_fraction, is_weight_mean=gap.weight_mean,
            recomputed_samples=recomputed, grad_norm=grad_norm, lr=lr, samples=len(batch.samples),
            tokens=batch.tokens, loss_tokens=batch.loss_tokens, micro_batches=len(plans),
            tokens_per_s=batch.tokens / dt if dt > 0 else nan, step_time_s=dt, peak_memory_bytes=peak, **phases)

    # ---- checkpoints ---------------------------------------------------------------------------

    def _rng_state(self) -> dict:
        state = {"torch": torch.get_rng_state(), "python": random.getstate()}
        if torch.cuda.is_available():
            state["cuda"] = torch.cuda.get_rng_state_all()
        return state

    def _set_rng_state(self, state: dict) -> None:
        torch.set_rng_state(state["torch"])
        random.setstate(state["python"])
        if "cuda" in state and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["cuda"])

    def save_checkpoint(self, root: str | Path) -> Path:
        """Write `root/step-NNNNNN/` atomically and return it: everything goes into a temp dir in the
        same directory, renamed into place last, so a crash leaves either no checkpoint or a whole one."""
        root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        final = root / f"step-{self.step_count:06d}"
        tmp = root / f".tmp-{final.name}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        self.model.save_pretrained(str(tmp / "adapter"), selected_adapters=[ADAPTER], safe_serialization=True)
        state = {"format": CHECKPOINT_FORMAT, "step": self.step_count, "policy_version": self.policy_version,
                 "optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict(),
                 "entropy": self.entropy.state_dict(), "rng": self._rng_state()}
        torch.save(state, tmp / STATE_FILE)
        (tmp / "meta.json").write_text(json.dumps({"step": self.step_count, "policy_version": self.policy_version,
                                                   "model_path": self.config.model_path,
                                                   "sft_adapter": self.config.sft_adapter,
                                                   "written_at": time.time()}, indent=1))
        if final.exists():  # the same step written again (a resumed run): replace it whole
            old = root / f".old-{final.name}-{os.getpid()}"
            os.rename(final, old)
            os.rename(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, final)
        return final

    def save_adapter(self, root: str | Path) -> Path:
        """Only the current version's adapter (for the sampler, between checkpoints), written to
        `root/v-NNNNNN/` through a temp dir renamed into place; returns that directory."""
        root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        final = root / f"v-{self.policy_version:06d}"
        tmp = root / f".tmp-{final.name}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        self.model.save_pretrained(str(tmp), selected_adapters=[ADAPTER], safe_serialization=True)
        if final.exists():  # the same version written again by a resumed run: replace it whole
            shutil.rmtree(final)
        os.rename(tmp, final)
        return final

    def resume(self, checkpoint: str | Path) -> None:
        """Restore adapter weights, optimizer, scheduler, RNG states, step and version from a checkpoint."""
        from peft import set_peft_model_state_dict
        from safetensors.torch import load_file

        path = Path(checkpoint)
        state = torch.load(path / STATE_FILE, map_location="cpu", weights_only=False)
        if state.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"{path}: checkpoint format {state.get('format')!r}, expected {CHECKPOINT_FORMAT}")
        weights = load_file(str(path / "adapter" / "adapter_model.safetensors"), device=str(self.device))
        result = set_peft_model_state_dict(self.model, weights, adapter_name=ADAPTER)
        # strict=False inside peft: check both ways that the checkpoint is this model's adapter
        unexpected = [k for k in result.unexpected_keys if "lora_" in k]
        missing = [k for k in result.missing_keys if "lora_" in k and f".{ADAPTER}." in k]
        if unexpected or missing:
            raise ValueError(f"{path}: the adapter does not fit this model (unexpected {unexpected[:3]}, "
                             f"missing {missing[:3]})")
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.entropy.load_state_dict(state["entropy"])
        self.step_count = int(state["step"])
        self.policy_version = int(state["policy_version"])
        self._set_rng_state(state["rng"])

    def adapter_state(self) -> dict[str, torch.Tensor]:
        """The trainable adapter's weights (CPU copies), e.g. to compare two learners."""
        from peft import get_peft_model_state_dict

        state = get_peft_model_state_dict(self.model, adapter_name=ADAPTER)
        return {k: v.detach().cpu().clone() for k, v in state.items()}
