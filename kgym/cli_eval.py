"""`kgym eval ...`: KernelBench prompts out, recorded results scored and compared.

    kgym eval prompts --kernelbench DIR --level N --out FILE.jsonl [--ids 1,2] [--samples K --seed S]
    kgym eval generate --kernelbench DIR --level 1,2 --model PATH --out GEN.jsonl [--adapter DIR] [--samples N]
    kgym eval score RESULTS [--model M] [--sample K] [--json] [--out FILE.json]
    kgym eval compare A B [--model-a M] [--model-b M] [--sample K] [--resamples N] [--seed S] [--json]
    kgym eval run --kernelbench DIR --generations GEN.jsonl ...   (the batch job: jobs/eval.py, needs Ray)

RESULTS, A and B are records paths (a run directory or a records root). Argument parsing and printing
only; the work is in `kgym.kernelbench` and `jobs/eval.py`.
"""

from __future__ import annotations

import argparse
import json

from kgym.cli_common import UsageError


def _usage(message: str) -> UsageError:
    return UsageError(message)


def _ids(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise _usage(f"--ids takes comma-separated integers, got {text!r}") from None


def cmd_prompts(args: argparse.Namespace) -> int:
    from kgym.kernelbench import Checkout, KernelBenchError, build_prompts, write_prompts

    try:
        rows = build_prompts(Checkout(args.kernelbench), args.level, ids=_ids(args.ids), samples=args.samples,
                             seed=args.seed)
        path = write_prompts(rows, args.out)
    except KernelBenchError as e:
        raise _usage(str(e)) from None
    by = rows[0].constructor if rows else "-"
    print(f"{len(rows)} prompts (level {args.level}, triton, one_shot, fp32, by {by}) -> {path}")
    return 0


def _results(path: str, model: str | None, sample: int | None, what: str = "RESULTS"):
    from pathlib import Path

    from kgym.kernelbench import results_from_records
    from kgym.records import load

    if not Path(path).exists():
        raise _usage(f"{what} {path!r} does not exist")
    results = results_from_records(load(path))
    if not results:
        raise _usage(f"{what} {path!r}: no kernelbench records")
    if model is not None:
        results = [r for r in results if r.model == model]
        if not results:
            raise _usage(f"{what} {path!r}: no records of model {model!r}")
    if sample is not None:
        results = [r for r in results if r.sample == sample]
    return results


def cmd_score(args: argparse.Namespace) -> int:
    from kgym.kernelbench import KernelBenchError, multi_sample, score
    from kgym.kernelbench.scoring import format_table

    results = _results(args.results, args.model, args.sample)
    try:
        several = len({r.sample for r in results}) > 1
        table = score(results, sample=0 if several else None)
        if several:
            table["multi_sample"] = multi_sample(results)
    except KernelBenchError as e:
        raise _usage(str(e)) from None
    if args.out:
        import os
        from pathlib import Path

        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(json.dumps(table, indent=1) + "\n")
        os.replace(tmp, out)
    if args.json:
        print(json.dumps(table, indent=1))
    else:
        print(format_table(table))
        if several:
            print("(several samples: the table is sample 0; mean and spread per metric under multi_sample in --json)")
    return 0


def _one_model(results, path: str) -> list:
    models = sorted({r.model for r in results})
    if len(models) != 1:
        raise _usage(f"{path!r} holds models {models}: pick one with --model-a / --model-b")
    return results


def cmd_compare(args: argparse.Namespace) -> int:
    from kgym.kernelbench import KernelBenchError, compare

    a = _one_model(_results(args.a, args.model_a, args.sample, "A"), args.a)
    b = _one_model(_results(args.b, args.model_b, args.sample, "B"), args.b)
    try:
        out = compare(a, b, resamples=args.resamples, seed=args.seed)
    except KernelBenchError as e:
        raise _usage(str(e)) from None
    if args.json:
        print(json.dumps({k: v.figures() for k, v in out.items()}, indent=1))
        return 0
    n = next(iter(out.values())).n
    print(f"B ({b[0].model}) - A ({a[0].model}) on {n} problems; {args.resamples} paired resamples, seed {args.seed}")
    for name, r in out.items():
        print(f"{name:<13} {r.delta_pp:+6.1f} pp  95% [{r.ci95_pp[0]:+.1f}, {r.ci95_pp[1]:+.1f}]  "
              f"gained {r.gained}  lost {r.lost}")
    return 0


DEFAULT_MAX_MODEL_LEN = 16384
# vLLM's CPU build refuses to start until its KV cache size is set (VLLM_CPU_KVCACHE_SPACE): 2 GiB holds
# 16,384 tokens of a 7B model's KV (28 layers x 4 KV heads x 128 x 2 x bf16 = 57 KB a token) with room.
DEFAULT_CPU_KV_CACHE_GIB = 2  # whole GiB: vLLM reads the variable as an int ("2.0" is refused)


def _max_model_len(args: argparse.Namespace) -> int:
    """--max-model-len, else 16,384 capped at the model's own context length (vLLM refuses a longer
    one: a small model with max_position_embeddings 8,192 failed at the default)."""
    if args.max_model_len is not None:
        return args.max_model_len
    from pathlib import Path

    try:
        own = json.loads((Path(args.model) / "config.json").read_text()).get("max_position_embeddings")
    except (OSError, ValueError):
        own = None
    return min(DEFAULT_MAX_MODEL_LEN, own) if isinstance(own, int) and own > 0 else DEFAULT_MAX_MODEL_LEN


def cmd_generate(args: argparse.Namespace) -> int:
    import importlib.util
    from pathlib import Path

    from kgym.kernelbench import Checkout, KernelBenchError

    if importlib.util.find_spec("vllm") is None:
        raise _usage("kgym eval generate needs vLLM (pip install -e '.[rollout]'; docs/rollout.md)")
    try:
        levels = [int(x) for x in args.level.split(",") if x.strip()]
    except ValueError:
        raise _usage(f"--level takes comma-separated integers, got {args.level!r}") from None
    from kgym.rollout.adapters import AdapterRegistry
    from kgym.rollout.engine import EngineConfig, VLLMEngine
    from kgym.rollout.generate import default_sampling, generate_answers

    if not (Path(args.model) / "config.json").is_file():
        raise _usage(f"--model {args.model!r} is not a Hugging Face model directory (no config.json)")
    if args.cpu_kv_cache_gib < 1:
        raise _usage(f"--cpu-kv-cache-gib {args.cpu_kv_cache_gib}: give a whole number of GiB, at least 1")
    from kgym.kernelbench import build_prompts

    try:  # the checkout's prompts before the engine starts (a minute on a CPU): a wrong path fails at once
        checkout = Checkout(args.kernelbench)
        for level in levels:
            build_prompts(checkout, level, ids=_ids(args.ids))
    except KernelBenchError as e:
        raise _usage(str(e)) from None
    sampling = default_sampling(args.samples, args.temperature, args.max_tokens, args.seed, args.thinking)
    registry = AdapterRegistry(base_adapter=args.adapter) if args.adapter else AdapterRegistry()
    engine = VLLMEngine(EngineConfig(model=args.model, max_model_len=_max_model_len(args),
                                     enable_lora=args.adapter is not None, enforce_eager=args.enforce_eager,
                                     cpu_kv_cache_gib=args.cpu_kv_cache_gib))
    name = args.name or Path(args.adapter or args.model).name
    try:
        summary = generate_answers(engine, checkout, levels, args.out, model_name=name,
                                   sampling=sampling, samples=args.samples, ids=_ids(args.ids),
                                   adapter=registry.latest)
    except KernelBenchError as e:
        raise _usage(str(e)) from None
    print(f"{summary.rows} answers (levels {args.level}, model {name!r}, temperature {sampling.temperature}, "
          f"max {sampling.max_tokens} tokens; {summary.cut_off} cut off) -> {summary.path}; "
          f"{summary.tokens} tokens in {summary.seconds:.1f} s ({summary.tokens_per_second:.0f} tokens/s); "
          f"engine start {engine.start_seconds:.1f} s")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    try:
        from jobs.eval import main as job_main
    except ImportError as e:
        raise _usage(f"kgym eval run needs the farm extra (pip install -e '.[farm]'): {e}") from None
    return job_main(args.rest)


def add_parser(sub) -> None:
    e = sub.add_parser("eval", help="KernelBench: prompts, scores (fast_p), paired bootstrap, the eval job")
    esub = e.add_subparsers(dest="eval_command", required=True)
    pr = esub.add_parser("prompts", help="the checkout's own Triton one-shot FP32 prompts as JSONL")
    pr.add_argument("--kernelbench", required=True, help="a KernelBench repository checkout")
    pr.add_argument("--level", type=int, required=True)
    pr.add_argument("--out", required=True, help="output .jsonl (one object per problem and sample)")
    pr.add_argument("--ids", help="only these problem ids (comma-separated)")
    pr.add_argument("--samples", type=int, default=1, help="rows per problem for multi-sample runs (default 1)")
    pr.add_argument("--seed", type=int, default=0, help="first sampling seed when --samples > 1")
    pr.set_defaults(func=cmd_prompts)
    ge = esub.add_parser("generate", help="answers from a model (vLLM, extra 'rollout') as the JSONL eval run reads")
    ge.add_argument("--kernelbench", required=True, help="a KernelBench repository checkout")
    ge.add_argument("--level", required=True, help="levels, comma-separated (1,2)")
    ge.add_argument("--model", required=True, help="a Hugging Face model directory")
    ge.add_argument("--adapter", help="a peft LoRA adapter directory (an SFT or RL checkpoint's adapter/)")
    ge.add_argument("--out", required=True, help="output generations .jsonl")
    ge.add_argument("--ids", help="only these problem ids (comma-separated)")
    ge.add_argument("--samples", type=int, default=1, help="answers per problem, seeded seed, seed+1, ...")
    ge.add_argument("--seed", type=int, default=0)
    ge.add_argument("--temperature", type=float, help="default 0 (greedy), 1.0 when --samples > 1")
    ge.add_argument("--max-tokens", type=int, help="new tokens per answer (default 8192, the study's)")
    ge.add_argument("--thinking", action="store_true", help="thinking on in the chat template (default off)")
    ge.add_argument("--name", help="the model column of the rows (default: the adapter's or model's folder name)")
    ge.add_argument("--max-model-len", type=int, help="prompt + answer tokens (default 16384, or the model's "
                    "context length when shorter)")
    ge.add_argument("--cpu-kv-cache-gib", type=int, default=DEFAULT_CPU_KV_CACHE_GIB,
                    help="vLLM's CPU build only: its KV cache in GiB (VLLM_CPU_KVCACHE_SPACE, which wins when "
                         f"set; default {DEFAULT_CPU_KV_CACHE_GIB})")
    ge.add_argument("--enforce-eager", action="store_true", help="no compiled graphs (faster start on CPU)")
    ge.set_defaults(func=cmd_generate)
    sc = esub.add_parser("score", help="fast_p table of recorded results (figures.json's keys)")
    sc.add_argument("results", metavar="RESULTS", help="records path of an eval run")
    sc.add_argument("--model", help="only this model")
    sc.add_argument("--sample", type=int, help="only this sample")
    sc.add_argument("--json", action="store_true", help="print JSON")
    sc.add_argument("--out", help="also write the JSON here")
    sc.set_defaults(func=cmd_score)
    cp = esub.add_parser("compare", help="paired bootstrap of B against A on the same problems")
    cp.add_argument("a", metavar="A")
    cp.add_argument("b", metavar="B")
    cp.add_argument("--model-a")
    cp.add_argument("--model-b")
    cp.add_argument("--sample", type=int, help="compare this sample of each (default: the only one)")
    cp.add_argument("--resamples", type=int, default=100_000)
    cp.add_argument("--seed", type=int, default=42)
    cp.add_argument("--json", action="store_true")
    cp.set_defaults(func=cmd_compare)
    rn = esub.add_parser("run", help="the batch job (python -m jobs.eval --help for its options)")
    rn.add_argument("rest", nargs=argparse.REMAINDER)
    rn.set_defaults(func=cmd_run)
