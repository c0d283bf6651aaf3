"""The names of the curation funnel: its stages (`Stage`) and why a row left it (`Drop`).

Each is a `StrEnum`, so a member is stored in the funnel report's JSON and the dataset's columns as
its string. The stages follow the study's funnel (`sft_dataset.kimi_k2_kernelbook_funnel` in the
figures file); `STUDY_FIGURES` says which of its figures a stage is compared with. Does not count
anything (`report.py` does). Decontamination comes before normalisation (the study lists it
after): it reads only the text, and a module as large as a KernelBench problem (level 1's ReLU
allocates 6.4 GB) should not be run only to be dropped.
"""

from __future__ import annotations

from enum import StrEnum


class Stage(StrEnum):
    """A count of the funnel, in the order the job reaches it."""

    SOURCE_ANSWERS = "source_answers"  # rows of the file that carry an answer
    SOURCE_MODULES = "source_modules"  # distinct modules among them
    DECONTAMINATED = "decontaminated"  # no KernelBench problem above the Jaccard threshold
    NORMALISED = "normalised"  # the module and answer run in KernelBench form
    CAPPED = "capped"  # after duplicates and the cap of solutions per module
    VERIFIED = "verified"  # passed every gate at the target scale
    KEPT = "kept"  # verified KernelBook rows within the token limit
    GYM_ROWS = "gym_rows"  # replayed successful gym episodes within the token limit
    ROWS = "rows"  # rows of the dataset written


class Label(StrEnum):
    """Counts of labels among the dataset's rows (not stages: nothing is dropped for them)."""

    HYBRID = "hybrid"  # keeps one library call (cuBLAS/cuDNN), by the verdict
    FASTER_THAN_EAGER = "faster_than_eager"
    FASTER_THAN_COMPILE = "faster_than_compile"


class Drop(StrEnum):
    """Why a KernelBook row left the funnel (a replayed gym row only ever leaves as TOO_LONG)."""

    NO_ANSWER = "no_answer"  # the row has no triton_code
    NOT_NORMALISED = "not_normalised"  # its module does not import or run, or has no tensor input
    DUPLICATE = "duplicate"  # the same answer to the same module appeared earlier in the file
    OVER_CAP = "over_cap"  # the module already has max_per_module solutions
    CONTAMINATED = "contaminated"  # a KernelBench problem is too close (token-set Jaccard)
    FAILED = "failed"  # a gate failed at the target scale (detail: the gate)
    FARM_ERROR = "farm_error"  # kgym failed on it (retried by the next run, never the kernel's fault)
    TOO_LONG = "too_long"  # over the token limit of the target tokenizer


# The study's figure each stage is compared with (sft_dataset / kimi_k2_kernelbook_funnel).
STUDY_FIGURES: dict[str, str] = {
    Stage.SOURCE_ANSWERS: "source_answers",
    Stage.SOURCE_MODULES: "source_modules",
    Stage.CAPPED: "normalized_decontaminated_capped",
    Stage.VERIFIED: "verified_on_h100",
    Stage.KEPT: "kept",
}
