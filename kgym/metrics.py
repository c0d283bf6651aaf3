"""Prometheus metrics of kgym: what the farm and local runs export, and the HTTP exporter.

Covers the metric definitions (names follow Prometheus' conventions: a `kgym_` prefix, base units,
`_total` on counters, `_ratio` for ratios), updating them from a record row (`Metrics.observe`), the
farm's gauges (queue depth, workers by state) and starting an exporter (`start_exporter`). Each
`Metrics` owns its own registry, so several can live in one process (tests) and an exporter serves
exactly one. Does not write records (`kgym.records`) or decide what Grafana shows
(`dashboards/kgym.json`, whose queries use only the names below).

    kgym_evaluations_total{family, stage, gate, outcome}  counter; gate "none" when passed,
                                                         outcome passed | failed | error
    kgym_verification_seconds{family}                     histogram of wall seconds per verification
    kgym_speedup_ratio{family, baseline}                  histogram of speedups of correct candidates,
                                                         baseline eager | compile
    kgym_solve_rate_ratio{family}                         gauge: passed / verdicts over the last
                                                         `window` verdicts of the family (kgym errors
                                                         are not verdicts and do not count)
    kgym_queue_depth{queue}                               gauge: items waiting
    kgym_workers{state}                                   gauge: workers by state
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

WORKER_STATES = ("starting", "idle", "busy", "dead")
# Verification seconds: a warm CPU verify is ~1-4 s, a cold GPU one with torch.compile ~30 s.
SECONDS_BUCKETS = (0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 7.5, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0)
# Speedups on a log-like scale around 1; the interpreter on a CPU lands in the lowest buckets.
SPEEDUP_BUCKETS = (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0, 20.0)


class Metrics:
    """kgym's metrics in their own registry. Not thread-safe beyond what prometheus-client gives:
    call `observe` from one thread (the writer's or the sink's)."""

    def __init__(self, registry: CollectorRegistry | None = None, *, window: int = 200):
        if window < 1:
            raise ValueError("window must be >= 1")
        self.registry = registry if registry is not None else CollectorRegistry()
        self.window = window
        r = self.registry
        self.evaluations = Counter("kgym_evaluations", "Evaluations by task family, stage, first failing gate "
                                   "(none when passed) and outcome (passed, failed, error)",
                                   ["family", "stage", "gate", "outcome"], registry=r)
        self.verification_seconds = Histogram("kgym_verification_seconds", "Wall seconds per verification",
                                              ["family"], buckets=SECONDS_BUCKETS, registry=r)
        self.speedup = Histogram("kgym_speedup_ratio", "Speedup of correct candidates over a baseline "
                                 "(eager or compile)", ["family", "baseline"], buckets=SPEEDUP_BUCKETS, registry=r)
        self.solve_rate = Gauge("kgym_solve_rate_ratio", f"Share of passed verdicts over the last {window} "
                                "verdicts of a family", ["family"], registry=r)
        self.queue_depth = Gauge("kgym_queue_depth", "Items waiting in a queue", ["queue"], registry=r)
        self.workers = Gauge("kgym_workers", "Verifier workers by state", ["state"], registry=r)
        self._recent: dict[str, collections.deque[bool]] = {}

    def declare(self, family: str, stage: str | None = None) -> None:
        """Create a family's series at 0 before its first evaluation. A series that first appears at
        1 hides that increment from rate() and increase(); declaring the families a run will see
        makes every evaluation count on the dashboard."""
        from kgym.contract import FAILURE_KINDS  # here: importing metrics should not import torch

        stage = stage or "none"
        combos = [("none", "passed"), ("none", "error")] + [(g, "failed") for g in FAILURE_KINDS]
        for gate, outcome in combos:
            self.evaluations.labels(family=family, stage=stage, gate=gate, outcome=outcome)
        self.verification_seconds.labels(family=family)
        for baseline in ("eager", "compile"):
            self.speedup.labels(family=family, baseline=baseline)

    def observe(self, record: Mapping[str, Any]) -> None:
        """Count one evaluation from its record row (a `kgym.records.make_record` dict)."""
        family = str(record["family"])
        outcome = str(record["outcome"])
        self.evaluations.labels(family=family, stage=str(record.get("stage") or "none"),
                                gate=str(record.get("gate") or "none"), outcome=outcome).inc()
        if record.get("verify_seconds") is not None:
            self.verification_seconds.labels(family=family).observe(float(record["verify_seconds"]))
        if outcome == "error":
            return  # a failure of kgym says nothing about the kernel
        correct = record.get("cases_total", 0) > 0 and record.get("cases_passed") == record.get("cases_total")
        for baseline in ("eager", "compile"):
            v = record.get(f"speedup_{baseline}")
            if correct and v is not None and v > 0:
                self.speedup.labels(family=family, baseline=baseline).observe(float(v))
        recent = self._recent.setdefault(family, collections.deque(maxlen=self.window))
        recent.append(outcome == "passed")
        self.solve_rate.labels(family=family).set(sum(recent) / len(recent))

    def set_queue_depth(self, depth: int, queue: str = "verify") -> None:
        self.queue_depth.labels(queue=queue).set(depth)

    def set_workers(self, counts: Mapping[str, int]) -> None:
        """Workers per state; states not given are 0 (so a vanished state does not linger)."""
        unknown = set(counts) - set(WORKER_STATES)
        if unknown:
            raise ValueError(f"unknown worker states {sorted(unknown)} (known: {WORKER_STATES})")
        for state in WORKER_STATES:
            self.workers.labels(state=state).set(counts.get(state, 0))


@dataclass
class Exporter:
    """A running HTTP exporter (`/metrics`); `port` is the bound port (useful when asked for 0)."""

    port: int
    server: Any
    thread: Any

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def start_exporter(metrics: Metrics, port: int, addr: str = "0.0.0.0") -> Exporter:
    """Serve `metrics` on http://addr:port/metrics from a daemon thread; port 0 picks a free one."""
    server, thread = start_http_server(port, addr=addr, registry=metrics.registry)
    return Exporter(port=server.server_port, server=server, thread=thread)


def write_targets_file(path: str, targets: list[str], labels: Mapping[str, str] | None = None) -> None:
    """Write a Prometheus file_sd target file (`[{"targets": [...], "labels": {...}}]`) atomically,
    so a Prometheus watching it (`dashboards/prometheus.yml`) finds an exporter started on any port."""
    import json
    import os
    from pathlib import Path

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.parent / f".{p.name}.tmp"
    tmp.write_text(json.dumps([{"targets": list(targets), "labels": dict(labels or {})}]))
    os.replace(tmp, p)
