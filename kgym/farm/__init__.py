"""kgym.farm: the verifier farm's rules on plain values, without Ray. `ledger` is its book of
evaluations (the queue, who gets the next call, retries and give-ups, exactly-once results by
evaluation id), `placement` where workers go (one per GPU, spread over nodes, bad nodes left out),
`resource_ask` when and for how many workers it asks the autoscaler, `pool_stats` its counters, and
`baseline_prefetch` the baselines a worker measures while its GPU is idle. The farm's settings are
`kgym.farm_config`'s.

The actors that follow these rules are in `ray_cluster/` (`service.py` wraps a ledger and the
placement, `worker.py` a prefetcher); everything here is tested without Ray. Importing this package
imports nothing.
"""
