"""Deterministic identities: the evaluation id and the candidate hash.

The same task spec, candidate source, seed and verifier version always give the same id, on any
machine and any retry, so results keyed on it never get a second row for one evaluation
(duplicates from at-least-once delivery are resolved on read). Does not decide which of two rows
with one id wins (`kgym.records.reader`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from kgym.contract.version import VERIFIER_VERSION


def source_hash(source: str) -> str:
    """sha256 of a source text (hex)."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: one text per value (tuples read as lists)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def evaluation_id(task: Mapping[str, Any], candidate_source: str, seed: int,
                  verifier_version: str = VERIFIER_VERSION, case_salt: str = "") -> str:
    """32 hex digits of sha256 over (task spec, candidate hash, seed, verifier version), and the hidden
    cases' salt where one is given (an RL episode's answer: its draws differ from the unsalted ones, so
    its verdict is another evaluation than a curation run's of the same code)."""
    fields = {"task": dict(task), "candidate_sha256": source_hash(candidate_source), "seed": int(seed),
              "verifier_version": verifier_version}
    if case_salt:
        fields["case_salt"] = case_salt
    payload = canonical_json(fields)
    return hashlib.sha256(payload.encode("ascii")).hexdigest()[:32]
