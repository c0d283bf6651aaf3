"""kgym's job entrypoints, run locally on an embedded Ray or submitted to a cluster with
`ray job submit --working-dir . -- python -m jobs.<name> ...`.

`verify.py` batch verification from Parquet/JSONL rows (`verify_config.py` its TOML config,
`inputs.py` its rows), `demo.py` the main job behind `kgym demo`, `stream.py` the driver loop they
share (pool -> sink, metrics gauges), `configs/` example configs and inputs, `demo_answers/` the
demo's hostile answers.
"""
