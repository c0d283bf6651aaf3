"""Build the tiny random model the CPU configs run on: `python -m jobs.tiny_model OUT_DIR`.

    python -m jobs.tiny_model out/tiny-model
    python -m jobs.rl --config jobs/configs/rl_tiny.toml --set model=out/tiny-model

The model of the RL tests and `examples/trl_grpo_tiny.py` (their builders are used, so all three
share one model): a byte-level BPE tokenizer trained here on kgym's RL sources as of 4b45def (vocab 1024, ChatML
template), a `Qwen2Config` with hidden 128, 2 layers, 4 heads and random weights. Nothing is
downloaded; it takes seconds. Written as a Hugging Face model directory (config.json, weights,
tokenizer) through a temporary directory renamed at the end. A random model writes no code, so its
rewards are 0: it shows the loop runs, not that it learns (`benchmarks/rl_learning.py` does that).
Needs the training stack (transformers, tokenizers, TRL for the chat template: the `rl` extra).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "trl_grpo_tiny.py"


def _builders():
    spec = importlib.util.spec_from_file_location("kgym_trl_grpo_tiny", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CORPUS = Path(__file__).with_name("tiny_tokenizer_corpus.json")


def corpus() -> list[str]:
    """The tokenizer's training text, fixed: kgym/rl's sources as of 4b45def. Read from the live folder,
    every edit there changed the tokenizer, the model and every test tuned on it."""
    return json.loads(CORPUS.read_text())


def build(out: str | Path) -> Path:
    """The tiny model and its tokenizer in `out` (replaced if it exists); returns the directory."""
    example = _builders()
    tokenizer = example.tiny_tokenizer(corpus())
    model = example.tiny_model(tokenizer)
    final = Path(out)
    tmp = final.with_name(f".{final.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    shutil.rmtree(final, ignore_errors=True)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp.rename(final)
    return final


def main(argv: list[str] | None = None) -> int:
    from jobs.preflight import check_writable
    from jobs.sections import ConfigError
    from kgym.cli_common import run_piped

    p = argparse.ArgumentParser(prog="python -m jobs.tiny_model", description=__doc__.splitlines()[0])
    p.add_argument("out", metavar="OUT_DIR", help="the model directory to write (replaced if it exists)")
    args = p.parse_args(argv)

    def go() -> int:
        try:
            check_writable(args.out, "OUT_DIR")
        except ConfigError as e:
            print(f"jobs.tiny_model: error: {e}", file=sys.stderr)
            return 2
        path = build(args.out)
        print(f"jobs.tiny_model: a tiny random Qwen2 model in {path} "
              f"(python -m jobs.rl --config jobs/configs/rl_tiny.toml --set model={path})")
        return 0

    return run_piped(go)


if __name__ == "__main__":
    sys.exit(main())
