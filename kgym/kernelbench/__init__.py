"""KernelBench evaluation: a checkout read at run time, its own prompts, fast_p scores, paired bootstrap.

    from kgym.kernelbench import Checkout, build_prompts, read_generations, score, paired_bootstrap
    ck = Checkout("path/to/KernelBench")                 # nothing of KernelBench ships with kgym
    rows = build_prompts(ck, level=1)                    # the checkout's own Triton one-shot FP32 prompt
    table = score(results_from_records(load("out/eval/run")))   # figures.json's keys

`checkout.py` problems on disk, `checkout_prompts.py` the checkout's prompt constructor, `generations.py`
answers in and the requests they become, `hybrid.py` the static "keeps a PyTorch op" check,
`results.py` records -> one result per answer, `scoring.py` fast_p tables, `comparison.py` the paired
bootstrap, `multisample.py` mean and spread over seeded samples. The batch job is `jobs/eval.py`.
"""

from kgym.kernelbench.checkout import Checkout, KernelBenchError, Problem
from kgym.kernelbench.checkout_prompts import PromptRow, build_prompts, write_prompts
from kgym.kernelbench.comparison import BootstrapResult, compare, paired_bootstrap
from kgym.kernelbench.generations import Generation, read_generations, request_parts
from kgym.kernelbench.hybrid import keeps_torch_op
from kgym.kernelbench.multisample import multi_sample
from kgym.kernelbench.results import ProblemResult, results_from_records
from kgym.kernelbench.scoring import METRIC_KEYS, score, score_level, strategy

__all__ = ["BootstrapResult", "Checkout", "Generation", "KernelBenchError", "METRIC_KEYS", "Problem", "ProblemResult",
           "PromptRow", "build_prompts", "compare", "keeps_torch_op", "multi_sample", "paired_bootstrap",
           "read_generations", "request_parts", "results_from_records", "score", "score_level", "strategy",
           "write_prompts"]
