"""What the native node walk reads of the nodes that never changes (`framework/native_walk.c`):
one plain int per node and field, built once per cluster state, so the walk reads lists of
ints where the Python walk reads each node's spec."""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.model import Node


class NodeArrays:
    """Per node: its GPU model's id (`model_ids` numbers the cluster's models in order of
    first appearance), its GPUs, and 1 where CPU (memory) capacity is modelled (a node with
    0 does not model it)."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.model_ids: dict[str, int] = {}
        for node in nodes:
            self.model_ids.setdefault(node.gpu_model, len(self.model_ids))
        self.model_id = [self.model_ids[node.gpu_model] for node in nodes]
        self.gpus = [node.gpus for node in nodes]
        self.has_cpu = [1 if node.cpu_milli else 0 for node in nodes]
        self.has_memory = [1 if node.memory_mib else 0 for node in nodes]
        self._accepted: dict[tuple[str, ...], bytes | None] = {}

    def accepted(self, models: tuple[str, ...]) -> bytes | None:
        """One byte per model id, 1 where the request accepts the model; None: any model."""
        found = self._accepted.get(models, b"")
        if found == b"":
            found = bytes(1 if model in models else 0 for model in self.model_ids) if models else None
            self._accepted[models] = found
        return found
