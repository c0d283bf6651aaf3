"""Ray's autoscaler, as the farm service talks to it: `request_resources(bundles)` places the farm's
standing ask, and `standing_request()` reads back what the cluster holds now.

The ask is Ray's `ray.autoscaler.sdk.request_resources(bundles=[...])`: a standing demand for that set
of resource shapes to fit on the cluster (existing nodes count; each call replaces the previous one),
which the autoscaler (cluster launcher or KubeRay's) meets by adding worker nodes, up to its own
max_workers. When to ask and for how many bundles is `kgym.farm.resource_ask.ResourceAsk`'s rule; the
service hands it `request_resources`.

`standing_request()` reads the autoscaler v1 key in the GCS's KV store, or autoscaler v2's cluster
resource constraint, for operators and the tests. Does not start workers: new nodes appear in
`cluster_watch.py`'s view, and the service places workers on them.
"""

from __future__ import annotations

import json

import ray
from ray.autoscaler import sdk


def request_resources(bundles: list[dict[str, float]]) -> None:
    """Replace the cluster's standing ask with `bundles` (empty: none)."""
    sdk.request_resources(bundles=bundles)


def standing_request() -> list[dict[str, float]]:
    """The bundles the cluster's autoscaler is asked for now (empty: none), whichever autoscaler runs."""
    from ray.autoscaler.v2.utils import is_autoscaler_v2

    if is_autoscaler_v2():
        from ray._raylet import GcsClient
        from ray.autoscaler.v2.sdk import get_cluster_resource_state

        address = ray.get_runtime_context().gcs_address
        state = get_cluster_resource_state(GcsClient(address))
        out: list[dict[str, float]] = []
        for constraint in state.cluster_resource_constraints:
            for by_count in constraint.resource_requests:
                out += [dict(by_count.request.resources_bundle)] * by_count.count
        return out
    from ray._private.ray_constants import AUTOSCALER_RESOURCE_REQUEST_CHANNEL
    from ray.experimental.internal_kv import _internal_kv_get

    raw = _internal_kv_get(AUTOSCALER_RESOURCE_REQUEST_CHANNEL)
    return list(json.loads(raw)) if raw else []
