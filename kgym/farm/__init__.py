"""kgym.farm: the verifier farm's rules on plain values, without Ray. `ledger` is its book of
evaluations (the queue, who gets the next call, retries and give-ups, exactly-once results by
evaluation id), `placement` where workers go (one per GPU, spread over nodes, bad nodes left out),
`resource_ask` when and for how many workers it asks the autoscaler, `node_watch` which nodes joined
or left, `pool_stats` its counters, `baseline_prefetch` the baselines a worker measures while its GPU
is idle, and `farm_config` the farm's settings (`PoolConfig`, `WorkerConfig`, `RaySettings`: a job's
`[farm]` and `[ray]`).

The actors that follow these rules are in `ray_cluster/` (`service.py` wraps a ledger and the
placement, `worker.py` a prefetcher); everything here is tested without Ray. Importing this package
imports nothing.
"""
