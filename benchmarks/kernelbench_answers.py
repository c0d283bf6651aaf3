"""kgym's own Triton answers to KernelBench level-1 problems, as the generations JSONL `jobs.eval` reads.

Each file `benchmarks/kernelbench_level1/<id>_<Name>.py` is one answer in KernelBench's form (a
`ModelNew` with the problem's constructor arguments, computing forward with Triton kernels); the
problem itself is never here, it is read from a KernelBench checkout at evaluation time. This script
writes one JSON line per file: `{"level", "problem_id", "model", "answer", "sample"}`, where the
answer is model-like text with the code in a ```python fence (the block `jobs.eval` extracts). It
checks each file parses and defines `ModelNew`; it does not run or verify anything.

    python benchmarks/kernelbench_answers.py [--answers benchmarks/kernelbench_level1] [--level 1]
        [--model kgym-reference] [--ids 19,23] [--out out/kb-level1-ten.jsonl]
    python -m jobs.eval --kernelbench ~/KernelBench --generations out/kb-level1-ten.jsonl \
        --out out/eval --run-id l1-ten --workers 1 && kgym eval score out/eval/l1-ten
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_ANSWERS = HERE / "kernelbench_level1"
DEFAULT_OUT = "out/kb-level1-ten.jsonl"
DEFAULT_MODEL = "kgym-reference"
_FILE = re.compile(r"^(\d+)_(.+)\.py$")


def answer_files(folder: Path, ids: list[int] | None = None) -> list[tuple[int, str, Path]]:
    """(problem id, name, path) of every answer file in `folder`, in id order; `ids` picks some."""
    found = []
    for f in folder.iterdir():
        m = _FILE.match(f.name)
        if m and f.is_file():
            found.append((int(m.group(1)), m.group(2), f))
    found.sort()
    if ids is not None:
        have = {pid for pid, _, _ in found}
        missing = sorted(set(ids) - have)
        if missing:
            raise SystemExit(f"{folder}: no answer for problem id(s) {missing}")
        found = [row for row in found if row[0] in set(ids)]
    if not found:
        raise SystemExit(f"{folder}: no <id>_<Name>.py answer files")
    return found


def check_answer(path: Path, code: str) -> None:
    """The file must parse and define a class ModelNew (a cheap check; the verifier does the rest)."""
    try:
        tree = ast.parse(code, filename=str(path))
    except SyntaxError as e:
        raise SystemExit(f"{path}: does not parse: {e}") from None
    if not any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body):
        raise SystemExit(f"{path}: defines no class ModelNew")


def as_answer(name: str, code: str) -> str:
    """Model-like text: one line of prose, then the code in a python fence."""
    if not code.endswith("\n"):
        code += "\n"
    return f"Triton implementation of {name}.\n\n```python\n{code}```\n"


def build_rows(folder: Path, level: int, model: str, ids: list[int] | None = None) -> list[dict]:
    rows = []
    for pid, name, path in answer_files(folder, ids):
        code = path.read_text()
        check_answer(path, code)
        rows.append({"level": level, "problem_id": pid, "model": model, "answer": as_answer(name, code),
                     "sample": 0})
    return rows


def write_jsonl(rows: list[dict], out: Path) -> Path:
    """Written to a temporary name and renamed."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    with open(tmp, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    os.replace(tmp, out)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--answers", type=Path, default=DEFAULT_ANSWERS, help="folder of <id>_<Name>.py answers")
    ap.add_argument("--level", type=int, default=1, help="KernelBench level the answers belong to (default 1)")
    ap.add_argument("--model", default=DEFAULT_MODEL, help=f"model label of every row (default {DEFAULT_MODEL})")
    ap.add_argument("--ids", default=None, help="only these problem ids (comma-separated)")
    ap.add_argument("--out", type=Path, default=Path(DEFAULT_OUT), help=f"generations JSONL (default {DEFAULT_OUT})")
    args = ap.parse_args(argv)
    ids = [int(s) for s in args.ids.split(",") if s.strip()] if args.ids else None
    rows = build_rows(args.answers, args.level, args.model, ids)
    write_jsonl(rows, args.out)
    print(f"{len(rows)} answers (level {args.level}, model {args.model}): "
          f"{', '.join(str(r['problem_id']) for r in rows)} -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
