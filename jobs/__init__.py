"""kgym's job entrypoints, run locally on an embedded Ray or submitted to a cluster with
`ray job submit --working-dir . -- python -m jobs.<name> ...` (docs/farm.md: where records go).

`verify.py` batch verification from Parquet/JSONL rows (`verify_config.py` its config, `inputs.py`
its rows), `eval.py` KernelBench evaluation, `demo.py` the main job behind `kgym demo`
(`demo_report.py` its tables, `demo_answers/` its hostile answers). What they share: `sections.py`
(the [records] and [metrics] sections, and the names of the library's one loader, `kgym.settings`:
typed nested configs from TOML with unknown keys refused, `--set` overrides), `job_cli.py` (the
command line every job shares), `context.py` (connect to Ray, start the sink and the farm, stop them, where
relative record paths go) and `stream.py` (the batch loop: pool -> sink). `configs/` holds example
configs and inputs.
"""
