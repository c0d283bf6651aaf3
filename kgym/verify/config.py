"""`VerifyConfig`: how the verifier runs (device, hidden-case seed, timing protocol, limits, baselines),
each field declared once with its default, documentation and bounds (`kgym.settings.option`).

The same declarations are a job's `[verify]` table (`kgym.settings.partial`): a job gives some of
these keys, each checked as here, and only the keys it gives are handed on (as a farm's worker
settings and as requests' overrides, which some evaluation ids include); a key left out is the
verifier's default. `device` is no key there: the farm's worker picks it (`kgym.farm.farm_config`), and
`kgym verify --device` sets it.

Shared ground of `kgym.verify` (both processes may import it), torch-free: `resolved_device` imports
torch when it is called. Does not verify anything (`parent/verifier.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from kgym.settings import internal, option

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class VerifyConfig:
    device: str = internal("auto", "auto | cpu | cuda | cuda:N (resolved_device)")
    hybrid: bool = option(False, "allow exactly one cuBLAS/cuDNN call in forward()")
    seed: int = option(0, "public seed: the parameters of Model and ModelNew are drawn from it")
    timed_runs: int | None = option(None, "timed runs per figure; omit: 100 on CUDA (30-100 for inputs over "
                                    "640 MB), 10 on CPU", ge=1)
    warmup_runs: int | None = option(None, "warm-up runs before timing; omit: 5 on CUDA, 1 on CPU", ge=0)
    guarded_fraction: float = option(0.2, "unused since every timed run is guarded (kept for old configs)")
    max_remeasure: int = option(2, "extra timing attempts while the variation is above the threshold", ge=0)
    measure_compile: bool | None = option(None, "measure the torch.compile baseline; omit: on CUDA always, on CPU "
                                          "never (the interpreter's figure means nothing)")
    timeout_s: float = option(120.0, "seconds per request to the candidate's process (load, one forward)", gt=0)
    # A candidate decides how long each of its requests takes (each just under timeout_s): without a bound
    # on the sum, a verification outlasted the farm's call deadline (`PoolConfig.call_timeout_s`), its
    # worker was replaced as wedged and its verdict became a farm error, retried, then unscored.
    candidate_budget_s: float = option(900.0, "seconds the candidate's process may take in all (every request "
                                       "summed: load, forwards, timed runs); past it: timeout", gt=0)
    memory_limit_gb: float | None = option(None, "the candidate process's memory limit; omit: 32 GB on CUDA, 8 GB "
                                           "on CPU", gt=0)
    static_policy: bool = option(True, "gate 1; switched off only to test the runtime tripwires alone")
    profile_forwards: bool = option(True, "run the correctness forwards under the profiler as well")
    tolerance: float | None = option(None, "the task's declared strict tolerance; omit: by output dtype "
                                     "(kgym/verify/parent/cases.py)")
    # Where the reward's baseline is eager: a torch.compile baseline that is not cached is left out of
    # the verdict (speedup_compile None, a note says so) instead of being measured on the candidate's
    # path; the farm's worker measures it after the verdict. Leave False for compile or joint rewards.
    # Mixed into the hidden cases' seeds (`cases.case_seed`): RL episodes set it to the candidate's source
    # hash (`kgym.episodes.evaluator.episode_request`), so a verdict's hidden inputs are the same for the
    # same candidate (a retry) and fresh for any other: nothing an earlier verdict's feedback showed about
    # its hidden cases (a value, a case's identity) holds for the next submission's. Empty: the secret's
    # own draws per (task, seed), as the CLI, the curation runs and the tests verify.
    case_salt: str = internal("", "mixed into the hidden cases' seeds (RL episodes: the candidate's hash)")
    defer_compile: bool = option(False, "leave a torch.compile baseline that is not cached out of the verdict "
                                 "(the farm's worker measures it after); for eager rewards only")

    def __post_init__(self) -> None:
        # A bad number here would come back as a verdict against the candidate (a negative timeout as its
        # TIMEOUT, negative runs as its malformed timings) or be replaced silently (0 runs as the default).
        # The bounds are the declared ones: a config built in code (a request's overrides, the CLI) is
        # held to them as a loaded one is.
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            low, above = f.metadata.get("ge"), f.metadata.get("gt")
            if low is not None and value < low:
                raise ValueError(f"{f.name} {value}: must be at least {low}")
            if above is not None and not value > above:
                raise ValueError(f"{f.name} {value}: " + ("must be a positive number" if above == 0 else
                                                          f"must be above {above}"))

    def resolved_device(self) -> torch.device:
        import torch

        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        try:
            dev = torch.device(self.device)
        except RuntimeError:
            raise ValueError(f"unsupported device {self.device!r}: use auto, cpu or cuda[:N]") from None
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise ValueError("--device cuda asked for, but torch sees no CUDA device")
        if dev.type not in ("cpu", "cuda"):
            raise ValueError(f"unsupported device {self.device!r}: use auto, cpu or cuda")
        return dev
