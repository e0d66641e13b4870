"""What the native node walk reads of the nodes that never changes (`framework/native_walk.c`):
one int64 per node and field (`array('q')`, read through the buffer protocol), built once per
cluster state, where the Python walk reads each node's spec. A GPU count int64 cannot hold is
stored as `flat_counts.BEYOND_INT64`: the kernel hands that node to Python."""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from scheduler.model import Node
from scheduler.state.flat_counts import flat


class NodeArrays:
    """Per node: its GPU model's id (`model_ids` numbers the cluster's models in order of
    first appearance), its GPUs, and 1 where CPU (memory) capacity is modelled (a node with
    0 does not model it)."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.model_ids: dict[str, int] = {}
        for node in nodes:
            self.model_ids.setdefault(node.gpu_model, len(self.model_ids))
        self.model_id = array("q", (self.model_ids[node.gpu_model] for node in nodes))
        self.gpus = array("q", (flat(node.gpus) for node in nodes))
        self.has_cpu = array("q", (1 if node.cpu_milli else 0 for node in nodes))
        self.has_memory = array("q", (1 if node.memory_mib else 0 for node in nodes))
        self._accepted: dict[tuple[str, ...], bytes | None] = {}

    def accepted(self, models: tuple[str, ...]) -> bytes | None:
        """One byte per model id, 1 where the request accepts the model; None: any model."""
        found = self._accepted.get(models, b"")
        if found == b"":
            found = bytes(1 if model in models else 0 for model in self.model_ids) if models else None
            self._accepted[models] = found
        return found
