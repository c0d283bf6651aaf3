"""The toy curriculum of the RL learning demonstration and the path from it to an SFT adapter.

Tasks: two registered elementwise tasks at tiny CPU size, `silu-v1` and `relu-v1` (the RL job draws
them through its curriculum, `jobs/configs/rl_toy.toml`). Their answers are known Triton programs in
KernelBench's ModelNew form that share every token but a few:

    silu  right  x / (1.0 + tl.exp(-x))      wrong  x / (1.0 + tl.exp(x))     (the sign in exp)
    relu  right  tl.maximum(x, 0.0)          wrong  tl.minimum(x, 0.0)        (max for min)

The real verifier (CPU, Triton interpreter) passes the right ones and fails the wrong ones on every
hidden case (they agree with the reference only where x = 0), so a right answer's reward is 0.5 (the
correctness share; the interpreter is never faster than eager, so no speed credit) and a wrong one's 0.

The path, each step a real job:
  1. `build_base`: the tests' tiny model (tests/rl/tiny.py: random Qwen2, hidden 128, 2 layers) on a
     BPE tokenizer trained here on kgym's sources (`build_tokenizer`), with its lm_head scaled by 8
     (at Hugging Face's init, std 0.02, no LoRA can make the random model's next-token distribution
     sharp enough to write a 245-token program; tests/rl/test_rl_learning.py scales it for the same
     reason);
  2. `curate`: `jobs.curate` (`jobs/configs/curate_toy.toml`) on `kernelbook_toy.jsonl`, a KernelBook-
     layout file with the two modules and both answers to each; the funnel verifies all four and
     keeps the two right ones (the wrong ones land in `failed:correctness`, as in the study's funnel);
  3. `toy_sft_set`: the funnel's verified answers, right and wrong, each under the RL task's own
     single-turn prompt for 24 seeds (a right and a wrong answer per prompt, `toy_label`). The
     study's SFT data would never hold a wrong answer: here they are there so that the SFT'd policy
     writes right and wrong answers about half and half, which gives RL a mixed reward to improve on;
  4. `sft`: `jobs.sft` (`jobs/configs/sft_toy.toml`) trains a LoRA on that set on the CPU.
`prepare(root)` runs the four and returns the paths. `run_rl` then runs `python -m jobs.rl` from that
adapter (`jobs/configs/rl_toy.toml`), trained or as the frozen-policy control (`learner.lr = 0`:
the same job, seeds and draws, every step run, no weight moves), and `step_rewards` reads a run's
committed per-step mean reward back (benchmarks/rl_learning.py and
tests/rljob/test_rl_learning_demo.py use the three).
"""

from __future__ import annotations

import importlib.util
import json
import lzma
import os
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
KERNELBOOK = HERE / "kernelbook_toy.jsonl"
CURATE_CONFIG = REPO / "jobs" / "configs" / "curate_toy.toml"
SFT_CONFIG = REPO / "jobs" / "configs" / "sft_toy.toml"
RL_CONFIG = REPO / "jobs" / "configs" / "rl_toy.toml"
TASKS = ("silu-v1", "relu-v1")
LM_HEAD_SCALE = 8.0
VOCAB = 4096
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
RIGHT, WRONG = "right", "wrong"

MODULE = '''import torch
import torch.nn as nn


class {cls}(nn.Module):
    def forward(self, x):
        return {expr}


def get_inputs():
    return [torch.rand([4, 8, 32])]


def get_init_inputs():
    return [[], {{}}]
'''

ANSWER = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def {name}_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, {expr}, mask=mask)


class {cls}New(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        {name}_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        return out
'''

# (class, kernel name, the module's torch expression, right Triton expression, wrong one)
OPS = (("SiLU", "silu", "torch.nn.functional.silu(x)", "x / (1.0 + tl.exp(-x))", "x / (1.0 + tl.exp(x))"),
       ("ReLU", "relu", "torch.relu(x)", "tl.maximum(x, 0.0)", "tl.minimum(x, 0.0)"))


def kernelbook_rows() -> list[dict]:
    """The toy KernelBook file's rows: per module its right answer, then its wrong one."""
    rows = []
    for cls, name, torch_expr, right, wrong in OPS:
        for label, expr in ((RIGHT, right), (WRONG, wrong)):
            rows.append({"uuid": f"toy-{name}-{label}", "entry_point": cls, "module_name": cls,
                         "repo_name": "kgym/rl-toy", "repo_link": "https://example.invalid/kgym/rl-toy",
                         "licenses": ["Apache-2.0"], "stars": 0, "sha": "0" * 40, "synthetic": True,
                         "python_code": MODULE.format(cls=cls, expr=torch_expr),
                         "triton_code": ANSWER.format(name=name, expr=expr, cls=cls), "toy_label": label})
    return rows


def write_kernelbook(path: Path = KERNELBOOK) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in kernelbook_rows()))
    return path


def answers() -> dict[str, dict[str, str]]:
    """task id -> {right, wrong}: the answer texts a policy is scored on (the ModelNew form the SFT set
    teaches, inside one python fence), for classifying samples."""
    from kgym.curation.normalise import normalise
    from kgym.curation.rows import read_source

    out: dict[str, dict[str, str]] = {}
    for s in read_source(str(KERNELBOOK)):
        norm = normalise(s)
        assert not isinstance(norm, str), norm
        task = f"{s.row.entry_point.lower()}-v1"
        label = RIGHT if s.uuid.endswith(RIGHT) else WRONG
        out.setdefault(task, {})[label] = norm.answer.rstrip()
    return out


def _tiny():
    spec = importlib.util.spec_from_file_location("kgym_tests_rl_tiny", REPO / "tests" / "rl" / "tiny.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, mod)
    spec.loader.exec_module(mod)
    return mod


def build_tokenizer(vocab_size: int = VOCAB):
    """A byte-level BPE of 4,096 tokens trained here on kgym's own Python sources (never on the toy
    answers): the toy answer is ~245 tokens and the RL prompt ~920 (the tests' tiny tokenizer, 1,024
    tokens trained on kgym/rl alone: ~400 and ~1,400, which a 2-core CPU pays for in every SFT,
    rollout and learner step). It splits words with Qwen2's own pattern, the one transformers and
    vLLM apply when they load a Qwen2 model's tokenizer, so it encodes there as it was trained.
    TRL's ChatML template, as tests/rl/tiny.py's."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    # kgym's sources as of 4b45def, fixed: trained on the live folder, every edit anywhere in kgym
    # changed this tokenizer, the toy model and what SFT taught it (a session's new files left the SFT'd
    # model writing neither relu answer)
    texts = json.loads(lzma.decompress((REPO / "tests" / "fixtures" / "toy_tokenizer_corpus.json.xz").read_bytes()))
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), "isolated"),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIALS),
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   padding_side="left")
    fast.chat_template = _tiny().tiny_tokenizer().chat_template
    return fast


def build_base(directory: Path) -> Path:
    """The tiny random Qwen2 (tests/rl/tiny.py's shape, this tokenizer's vocabulary) with its lm_head
    scaled (see the module docstring), saved with its tokenizer."""
    import torch

    tok = build_tokenizer()
    model = _tiny().tiny_model(tok)
    with torch.no_grad():
        model.lm_head.weight.mul_(LM_HEAD_SCALE)
    model.save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def curate(root: Path, base: Path, log=print):
    """jobs.curate on the toy KernelBook file (local Verifier, records under root/records)."""
    from jobs.curate import CurateJobConfig, run_curate_job
    from jobs.sections import load_job_config

    overrides = [f'curate.input="{KERNELBOOK}"', f'curate.out="{root / "curation"}"',
                 f'curate.tokenizer="{base}"', f'records.out="{root / "records"}"']
    return run_curate_job(load_job_config(CurateJobConfig, CURATE_CONFIG, overrides), log=log)


SFT_SEEDS = tuple(range(24))  # the RL prompts the set teaches (jobs.rl draws 63-bit seeds: its prompts are new)


def toy_sft_set(result, out: Path, seeds: tuple[int, ...] = SFT_SEEDS) -> Path:
    """The toy SFT set, one Parquet file SFTTrainer reads (its `messages` column): for each toy task and
    each of `seeds`, the task's single-turn RL prompt (the user turn alone, as the rollout renders it)
    answered twice, once with the right answer (toy_label right) and once with the wrong one (toy_label
    wrong). The answers are the funnel's: the right one kept, the wrong one dropped because it failed
    verification (each row carries that verdict's evaluation id).

    The prompts are the RL task's own, not the curation's: an adapter trained on the four KernelBook
    prompts wrote the answer there and never on `silu-v1`'s prompt (measured 2026-12-01, docs/rl.md).
    Many seeds (the shapes and scales in the prompt differ) make it learn the task, not one text."""
    import pyarrow as pa

    from kgym.curation.messages import assistant_turn
    from kgym.curation.normalise import normalise
    from kgym.curation.rows import read_source
    from kgym.records.writer import write_table_atomically
    from kgym.tasks import make

    fates = {f.uuid: f for f in result.fates}
    verified: dict[tuple[str, str], tuple[str, str]] = {}
    for s in read_source(str(KERNELBOOK)):
        fate, label = fates[s.uuid], (RIGHT if s.uuid.endswith(RIGHT) else WRONG)
        as_expected = fate.dropped is None if label == RIGHT else str(fate.dropped).startswith("failed")
        if not as_expected or not fate.evaluation_id:
            raise RuntimeError(f"toy row {s.uuid} ({label}): kept={fate.dropped is None} dropped={fate.dropped} "
                               f"({fate.detail}): the funnel should keep the right answers and drop the wrong ones "
                               "because they fail verification")
        norm = normalise(s)
        verified[(f"{s.row.entry_point.lower()}-v1", label)] = (norm.answer, fate.evaluation_id)
    rows = []
    for task_id in TASKS:
        for seed in seeds:
            prompt = make(task_id, seed, size="tiny").prompt()
            for label in (RIGHT, WRONG):
                answer, eid = verified[(task_id, label)]
                rows.append({"messages": [{"role": "user", "content": prompt}, assistant_turn(answer)],
                             "task_id": task_id, "task_seed": seed, "toy_label": label, "evaluation_id": eid})
    return write_table_atomically(pa.Table.from_pylist(rows), out)


def sft(base: Path, dataset: Path, out: Path, log=print, overrides: tuple[str, ...] = ()):
    from jobs.sections import load_job_config
    from jobs.sft import SFTJobConfig, run_sft

    cfg = load_job_config(SFTJobConfig, SFT_CONFIG, [f'dataset="{dataset}"', f'model="{base}"', f'out="{out}"',
                                                     *overrides])
    return run_sft(cfg, log=log)


@dataclass(frozen=True)
class Prepared:
    base: Path  # the tiny base model directory
    sft_set: Path  # the toy SFT Parquet
    adapter: Path  # jobs.sft's adapter
    curated_rows: int
    sft_loss: float | None


def prepare(root: Path, log=print, sft_overrides: tuple[str, ...] = ()) -> Prepared:
    root = Path(root)
    base = build_base(root / "base")
    result = curate(root, base, log=log)
    sft_set = toy_sft_set(result, root / "toy_sft.parquet")
    trained = sft(base, sft_set, root / "sft", log=log, overrides=sft_overrides)
    return Prepared(base, sft_set, Path(trained.adapter), len(result.rows), trained.train_loss)


if __name__ == "__main__":
    write_kernelbook()


def rl_prompt_ids(tokenizer, task_id: str, seed: int) -> tuple[int, ...]:
    """The token ids a single-turn RL episode of `task_id` sends to vLLM (the rollout driver's
    rendering: the user turn alone, no tools, thinking off)."""
    from kgym.rollout.turn_prompts import ChatPrompter
    from kgym.tasks import make

    task = make(task_id, seed, size="tiny")
    return ChatPrompter(tokenizer).first([{"role": "user", "content": task.prompt()}]).ids


def classify(task_id: str, text: str) -> str:
    """right / wrong: the sample's code is that task's known answer; other: anything else (its reward
    is still the verifier's; this label is only for telling the mix apart without verifying)."""
    from kgym.answers import extract_code

    ext = extract_code(text)
    if not ext.ok:
        return "other"
    code = ext.code.strip()
    known = answers()[task_id]
    for label in (RIGHT, WRONG):
        if code == known[label].strip():
            return label
    return "other"


TRAINED, CONTROL = "trained", "control"


def run_rl(prepared: Prepared, root: Path, arm: str, steps: int, overrides: tuple[str, ...] = (),
           timeout_s: float | None = None, log=print) -> Path:
    """`python -m jobs.rl` on the toy config from the SFT adapter; returns the run's records path.
    The control arm adds `learner.lr=0.0` and nothing else."""
    import subprocess

    if arm not in (TRAINED, CONTROL):
        raise ValueError(f"arm must be {TRAINED} or {CONTROL}, not {arm!r}")
    run_id = f"rl-toy-{arm}"
    sets = [f'model="{prepared.base}"', f'sft_adapter="{prepared.adapter}"', f"steps={steps}",
            f'records.out="{Path(root) / "records"}"', f'records.run_id="{run_id}"', *overrides]
    if arm == CONTROL:
        sets.append("learner.lr=0.0")
    cmd = [sys.executable, "-m", "jobs.rl", "--config", str(RL_CONFIG)]
    for s in sets:
        cmd += ["--set", s]
    log(f"toy: {arm}: {' '.join(cmd)}")
    env = {**os.environ, "RAY_raylet_start_wait_time_s": os.environ.get("RAY_raylet_start_wait_time_s", "180")}
    done = subprocess.run(cmd, cwd=REPO, timeout=timeout_s, capture_output=True, text=True, env=env)
    (Path(root) / f"{run_id}.log").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        raise RuntimeError(f"jobs.rl ({arm}) exited {done.returncode}:\n{(done.stdout + done.stderr)[-4000:]}")
    return Path(root) / "records" / run_id


def step_rewards(run: Path) -> list[float]:
    """Mean reward of each committed step, in step order (jobs.rl's steps table)."""
    from kgym.records.rl_records import Table, load

    steps = load(str(run), Table.STEPS).sort_values("step")
    return [float(r) for r in steps["reward_mean"]]


def run_arms(prepared: Prepared, root: Path, steps: int, overrides: tuple[str, ...] = (),
             timeout_s: float | None = None, log=print) -> dict[str, Path]:
    """Both arms, one after the other (two embedded Ray instances starting at once on a loaded
    2-core machine timed out in the raylet's start)."""
    return {arm: run_rl(prepared, root, arm, steps, overrides, timeout_s, log) for arm in (TRAINED, CONTROL)}
