"""`NodeWatch`: the farm's last view of the cluster's live nodes, and which joined or left since the
view before, without Ray.

`poll()` reads the live nodes through `read`, a function given by whoever owns the watch (the farm
service gives `ray_cluster.cluster_watch.live_nodes`, one call to the GCS's node table), keeps that
view and returns the difference from the previous one. The first poll is the farm's starting view:
its nodes count as neither joined nor left. `joined` and `left` accumulate every node id seen to
come or go (`PoolStats.nodes_joined`, `nodes_left`). A node that leaves and comes back under the same
id is reported each time. Does not place workers (`placement`) or read the cluster itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kgym.farm.placement import NodeView


@dataclass
class NodeWatch:
    """The last view of the live nodes; `poll()` refreshes it and says what changed."""

    read: Callable[[], dict[str, NodeView]]  # the live nodes now, by node id
    nodes: dict[str, NodeView] = field(default_factory=dict)
    joined: list[str] = field(default_factory=list)  # every node id that appeared after the first poll
    left: list[str] = field(default_factory=list)  # every node id that was alive in a view and is not now
    _first: bool = True

    def poll(self) -> tuple[list[str], list[str]]:
        """(node ids that joined, node ids that left) since the previous poll."""
        now = self.read()
        came = [] if self._first else [i for i in now if i not in self.nodes]
        went = [i for i in self.nodes if i not in now]
        self._first = False
        self.nodes = now
        self.joined += came
        self.left += went
        return came, went

    def alive(self, node_id: str) -> bool:
        return node_id in self.nodes
