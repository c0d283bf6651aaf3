"""Run every PromQL query of dashboards/kgym.json against a real Prometheus, and draw the results.

Covers: reading the dashboard's queries (with Grafana's variables filled in), starting the
`prometheus` binary on loopback against kgym exporters (found through a file_sd target file, as
`dashboards/prometheus.yml` does), querying its HTTP API, and rendering each panel's query results
over time into one PNG (Grafana cannot be installed where kgym is developed; the image in docs/
shows what the dashboard's queries return), and running the RL job under a scrape for the RL row. The
tests tests/records/test_records_prometheus.py (farm row) and tests/rljob/test_rl_obs_run.py (RL row)
use the same functions. Does not define metrics (kgym/metrics.py).

    python dashboards/render_queries.py --out docs/dashboard-queries.png   # ~2 min on 2 CPU cores
    python dashboards/render_queries.py --rl   # the RL row from a real CPU run of jobs.rl (~15 min)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DASHBOARD = HERE / "kgym.json"


FARM_ROW = "Verification farm"  # kgym/metrics.py's kgym_* metrics: the farm's record sink, kgym verify
RL_ROW = "RL"  # jobs/rl_metrics.py's kgym_rl_* metrics: the RL driver


@dataclass(frozen=True)
class PanelQuery:
    panel: str
    expr: str  # as written in the dashboard
    legend: str
    heatmap: bool = False  # buckets by `le`, drawn as a heatmap
    row: str = ""  # title of the dashboard row the panel sits in ("" above the first row)


def dashboard_queries(path: Path = DASHBOARD, rows: tuple[str, ...] | None = None) -> list[PanelQuery]:
    """Every target expression of every panel, in dashboard order, with the row each panel sits in
    (an expanded row's panels follow it at the top level; a collapsed row nests them); `rows` keeps
    only those rows' queries."""
    dash = json.loads(Path(path).read_text())
    out = []
    row = ""
    for top in dash["panels"]:
        if top.get("type") == "row":
            row = top.get("title", "")
        for p in ([top] if top.get("type") != "row" else []) + list(top.get("panels", [])):
            for t in p.get("targets", []):
                out.append(PanelQuery(p["title"], t["expr"], t.get("legendFormat", ""), t.get("format") == "heatmap",
                                      row))
    return [q for q in out if rows is None or q.row in rows]


def fill_variables(expr: str, rate_interval: str = "1m", family: str = ".*") -> str:
    """Grafana's variables as Grafana would expand them (All families = the regex .*)."""
    for var, value in (("$__rate_interval", rate_interval), ("$__interval", rate_interval),
                       ("$__range", "1h"), ("${family}", family), ("$family", family)):
        expr = expr.replace(var, value)
    if "$" in expr:
        raise ValueError(f"unexpanded variable in {expr!r}")
    return expr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Prometheus:
    """The prometheus binary on 127.0.0.1, scraping the file_sd targets in `targets_dir`."""

    def __init__(self, workdir: Path, targets_dir: Path, scrape_interval: str = "1s",
                 binary: str | None = None):
        self.binary = binary or shutil.which("prometheus")
        if self.binary is None:
            raise FileNotFoundError("no prometheus binary on PATH (Debian: apt-get install prometheus)")
        self.workdir = Path(workdir)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = self.workdir / "prometheus.yml"
        config.write_text(
            "global:\n"
            f"  scrape_interval: {scrape_interval}\n  evaluation_interval: {scrape_interval}\n"
            "scrape_configs:\n"
            "  - job_name: kgym\n"
            "    file_sd_configs:\n"
            f"      - files: ['{Path(targets_dir) / '*.json'}']\n"
            "        refresh_interval: 1s\n")
        self.log = open(self.workdir / "prometheus.log", "wb")
        self.proc = subprocess.Popen(
            [self.binary, f"--config.file={config}", f"--storage.tsdb.path={self.workdir / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--storage.tsdb.retention.time=1d"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited with {self.proc.returncode}: {self.tail()}")
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"prometheus not ready after {timeout_s} s: {self.tail()}")

    def tail(self) -> str:
        self.log.flush()
        return (self.workdir / "prometheus.log").read_text(errors="replace")[-2000:]

    def api(self, endpoint: str, **params: str) -> dict:
        url = f"{self.url}/api/v1/{endpoint}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.loads(r.read())
        if body.get("status") != "success":
            raise RuntimeError(f"{endpoint} {params}: {body}")
        return body["data"]

    def query(self, expr: str, at: float | None = None) -> list[dict]:
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        return self.api("query", **params)["result"]

    def query_range(self, expr: str, start: float, end: float, step: float) -> list[dict]:
        return self.api("query_range", query=expr, start=f"{start:.3f}", end=f"{end:.3f}", step=f"{step:g}")["result"]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def __enter__(self) -> Prometheus:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def finite_values(result: list[dict]) -> list[float]:
    """The finite sample values of an instant or range query result."""
    values = []
    for series in result:
        samples = series.get("values") or ([series["value"]] if "value" in series else [])
        for _, v in samples:
            f = float(v)
            if math.isfinite(f):
                values.append(f)
    return values


def _legend(fmt: str, labels: dict) -> str:
    out = fmt or ""
    for k, v in labels.items():
        out = out.replace("{{" + k + "}}", v)
    return out or json.dumps(labels)


def _heatmap(ax, result: list[dict], start: float) -> None:
    """Cumulative `le` buckets over time -> counts per bucket, as Grafana's heatmap shows them."""
    import numpy as np

    series = sorted(result, key=lambda r: float(r["metric"]["le"]))
    times = sorted({float(t) for r in series for t, _ in r["values"]})
    if not series or not times:
        return
    index = {t: i for i, t in enumerate(times)}
    cum = np.zeros((len(series), len(times)))
    for j, r in enumerate(series):
        for t, v in r["values"]:
            cum[j, index[float(t)]] = float(v)
    counts = np.diff(np.vstack([np.zeros((1, len(times))), cum]), axis=0).clip(min=0)
    ax.imshow(counts, aspect="auto", origin="lower", cmap="viridis", interpolation="nearest",
              extent=(times[0] - start, times[-1] - start, -0.5, len(series) - 0.5))
    ax.set_yticks(range(len(series)), [r["metric"]["le"] for r in series], fontsize=6)
    ax.set_ylabel("speedup bucket (le)", fontsize=7)


def render(prom: Prometheus, start: float, end: float, out: Path, rate_interval: str = "30s",
           rows: tuple[str, ...] = (FARM_ROW,), what: str = "a local CPU run") -> Path:
    """One subplot per panel of `rows`: each query's series over [start, end] as Prometheus returns them."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    row_names = rows
    queries = dashboard_queries(rows=row_names)
    panels: dict[str, list[PanelQuery]] = {}
    for q in queries:
        panels.setdefault(q.panel, []).append(q)
    cols = 3
    rows = math.ceil(len(panels) / cols)
    fig = Figure(figsize=(6 * cols, 3.2 * rows))
    FigureCanvasAgg(fig)
    step = max(1.0, (end - start) / 200)
    for i, (title, qs) in enumerate(panels.items()):
        ax = fig.add_subplot(rows, cols, i + 1)
        for q in qs:
            result = prom.query_range(fill_variables(q.expr, rate_interval), start, end, step)
            if q.heatmap:
                _heatmap(ax, result, start)
                continue
            # Series that stay 0 all along (declared, never hit) only crowd the legend.
            shown = [r for r in result if len(result) <= 8 or any(float(v) != 0 for _, v in r["values"])]
            for series in shown:
                ts = [float(t) - start for t, _ in series["values"]]
                vs = [float(v) for _, v in series["values"]]
                ax.plot(ts, vs, label=_legend(q.legend, series["metric"]), lw=1.2)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("seconds into the run", fontsize=7)
        ax.tick_params(labelsize=7)
        if ax.lines and len(ax.lines) <= 12:
            ax.legend(fontsize=6, loc="best")
    fig.suptitle(f"kgym dashboard queries (dashboards/kgym.json, row{'s' if len(row_names) > 1 else ''} "
                 f"{', '.join(row_names)}) from a real Prometheus, scraping {what}", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / fig.get_figheight()))  # room for the title above the panels
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp"
    fig.savefig(tmp, format="png", dpi=90)
    os.replace(tmp, out)
    return out


def demo_items():
    """A mixed local run over the repository's fixtures: right and wrong answers, policy rejections."""
    sys.path.insert(0, str(HERE.parent / "tests" / "fixtures"))
    from kgym.contract import EvalRequest

    from paths import fixture_path

    items = []
    plan = {"relu": ("good", "good", "wrong"), "softmax": ("good", "wrong", "wrong"),
            "layernorm": ("good", "good", "good", "wrong")}
    for round_ in range(3):
        for family, kinds in plan.items():
            ref = fixture_path(family, "reference").read_text()
            for k, kind in enumerate(kinds):
                stage = "small" if k % 2 else "full"
                seed = 10 * round_ + k
                task = {"task_id": f"{family}-v1", "family": family, "operation": family, "stage": stage,
                        "seed": seed, "size": "tiny", "dtype": "float32", "shapes": {}, "answer_mode": "triton"}
                items.append(EvalRequest(task, ref, fixture_path(family, kind).read_text(), seed=seed))
            if round_ == 1:
                items.append(EvalRequest({"task_id": f"{family}-v1", "family": family, "stage": "full", "seed": 99},
                                         ref, "import os\nclass ModelNew:\n    pass\n", seed=99))
    return items


RL_TINY = HERE.parent / "jobs" / "configs" / "rl_tiny.toml"


def run_rl_scraped(overrides: list[str], targets_dir: Path, at_last_step, config: Path = RL_TINY, log=print):
    """The RL job (`jobs.rl.run_rl_job`, in this process, on its own local Ray) with both of its exporters
    (the farm sink's kgym_* and the driver's kgym_rl_*) announced as file_sd targets in `targets_dir`.
    `at_last_step()` is called from the driver's log line of its last step, which comes after that step's
    metrics are set and before the exporters close, so a scrape then sees the run's final values.
    Returns the job's summary."""
    from jobs.rl import run_rl_job
    from jobs.rl_config import load_config

    targets_dir = Path(targets_dir)
    cfg = load_config(config, [*overrides, "metrics.port=0", f'metrics.targets_file="{targets_dir / "sink.json"}"',
                               "metrics.rl_port=0", f'metrics.rl_targets_file="{targets_dir / "rl.json"}"'])
    last = f"jobs.rl: step {cfg.steps}/{cfg.steps} "

    def on_log(line: str) -> None:
        log(line)
        if line.startswith(last):
            at_last_step()

    for attempt in range(3):
        try:
            return run_rl_job(cfg, log=on_log)
        except Exception as e:  # noqa: BLE001 - only Ray's own start-up timeout is retried
            # Ray waits a fixed 30 s for its raylet; on a loaded 2-core machine it can take longer. Nothing
            # of the run exists yet (farm_job connects before it creates the sink or writes a row).
            if "timed out during startup" not in str(e) or attempt == 2:
                raise
            import ray

            ray.shutdown()
            log(f"jobs.rl: Ray did not start in time ({e}); starting it again")
    raise AssertionError("unreachable")


def wait_for(prom: Prometheus, expr: str, want: float, timeout_s: float = 60.0) -> None:
    """Until `expr`'s first value is `want` (the scrape has caught up)."""
    deadline = time.monotonic() + timeout_s
    seen = None
    while time.monotonic() < deadline:
        seen = finite_values(prom.query(expr))
        if seen and seen[0] == want:
            return
        time.sleep(0.5)
    raise TimeoutError(f"{expr} never reached {want} (last: {seen}): {prom.tail()}")


def tiny_rl_inputs(workdir: Path, families: tuple[str, ...] = ("relu",)) -> tuple[Path, Path]:
    """The RL tests' tiny random model and scripted answers (tests/rl/tiny.py, tests/rljob/rljob_helpers.py):
    the answers are each family's reference solution and known-wrong answer, as a single-turn answer and as
    a repair turn."""
    for sub in ("rl", "rljob"):
        sys.path.insert(0, str(HERE.parent / "tests" / sub))
    from rljob_helpers import scripted_answers, tool_call

    from kgym.tasks import make

    from tiny import save_tiny

    model = Path(workdir) / "model"
    model.mkdir(parents=True, exist_ok=True)
    save_tiny(model)
    answers = list(scripted_answers())
    for family in families:
        if family == "relu":
            continue
        t = make(f"{family}-v1", 1, size="tiny")
        answers += [f"```python\n{t.solution.rstrip()}\n```", f"```python\n{t.wrong.rstrip()}\n```",
                    tool_call("submit_kernel", code=t.solution), tool_call("submit_kernel", code=t.wrong)]
    choices = Path(workdir) / "choices.json"
    choices.write_text(json.dumps(answers))
    return model, choices


def main_rl(args: argparse.Namespace) -> int:
    """A real CPU run of jobs.rl (tiny model, scripted answers) scraped by Prometheus: the RL row's queries
    drawn to args.out, and the run's progress figure (notebooks/rl_run.ipynb's first) to args.progress."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model, choices = tiny_rl_inputs(tmp, tuple(args.families))
        weights = ", ".join(f"{f} = 0" for f in ("reduction", "scan", "normalization", "softmax", "fusion", "matmul",
                                                  "gemm_epilogue", "conv1d", "conv2d", "pool2d", "module",
                                                  "fused_hybrid", "kernelbook") if f not in args.weight_families)
        from kgym.tasks.registry import task_ids

        answered = {f"{f}-v1" for f in args.families}
        exclude = [t for f in ("elementwise", *args.weight_families) for t in task_ids(f) if t not in answered]
        records = Path(args.records) if args.records else tmp / "runs"
        overrides = [f'model="{model}"', f'sampling.choice_file="{choices}"', f'records.out="{records}"',
                     f"steps={args.steps}", "eval.at_start=true", f"curriculum.family_weights={{{weights}}}",
                     f"curriculum.exclude={json.dumps(exclude)}"]
        with Prometheus(tmp, tmp / "targets", scrape_interval="2s") as prom:
            prom.wait_ready()
            start = time.time()
            summary = run_rl_scraped(overrides, tmp / "targets",
                                     lambda: (wait_for(prom, "kgym_rl_step", float(args.steps)), time.sleep(5)))
            if args.progress:
                from kgym.records.plots import _save
                from kgym.records.rl_plots import progress_figure
                from kgym.records.rl_replay import load_rl

                Path(args.progress).parent.mkdir(parents=True, exist_ok=True)
                print(f"wrote {_save(progress_figure(load_rl(summary['run_path'])), Path(args.progress))}")
            render(prom, start, time.time(), Path(args.out), rate_interval="2m", rows=(RL_ROW,),
                   what=f"a {args.steps}-step CPU run of jobs.rl")
        print(f"wrote {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=None, help="the PNG (default docs/dashboard-queries.png; --rl: "
                   "docs/img/rl-dashboard-queries.png)")
    p.add_argument("--rl", action="store_true", help="the RL row, from a real CPU run of jobs.rl")
    p.add_argument("--steps", type=int, default=8, help="--rl: RL steps")
    p.add_argument("--families", nargs="+", default=["relu", "softmax"], help="--rl: tasks with scripted answers")
    p.add_argument("--weight-families", nargs="+", default=["softmax"],
                   help="--rl: task families drawn besides elementwise")
    p.add_argument("--records", help="--rl: records root of the run (default: a temporary directory)")
    p.add_argument("--progress", default=str(HERE.parent / "docs" / "img" / "rl_progress.png"),
                   help="--rl: also the run's reward and solve rate per family over steps")
    args = p.parse_args(argv)
    if args.rl:
        args.out = args.out or str(HERE.parent / "docs" / "img" / "rl-dashboard-queries.png")
        return main_rl(args)
    args.out = args.out or str(HERE.parent / "docs" / "dashboard-queries.png")
    from kgym.metrics import Metrics, start_exporter, write_targets_file
    from kgym.records import RecordWriter, verify_items
    from kgym.verify import Verifier, VerifyConfig

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        metrics = Metrics(window=20)
        exporter = start_exporter(metrics, 0, addr="127.0.0.1")
        write_targets_file(str(tmp / "targets" / "kgym.json"), [f"127.0.0.1:{exporter.port}"])
        with Prometheus(tmp, tmp / "targets", scrape_interval="2s") as prom:
            prom.wait_ready()
            start = time.time()
            with Verifier(VerifyConfig(device="cpu", timed_runs=5, warmup_runs=1, max_remeasure=1), spares=1) as v, \
                    RecordWriter(tmp / "runs", run_id="demo", job_id="render") as w:
                items = demo_items()
                verify_items(items, v, writer=w, metrics=metrics,
                             on_record=lambda e: print(e.record["family"], e.record["outcome"], e.record["gate"]))
            time.sleep(6)  # the last scrapes
            render(prom, start, time.time(), Path(args.out))
        exporter.close()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
