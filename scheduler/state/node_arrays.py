"""What the native node walk reads of the nodes that never changes (`framework/native_walk.c`):
one int64 per node and field (`array('q')`, read through the buffer protocol), built once per
cluster state, where the Python walk reads each node's spec. A GPU count int64 cannot hold is
stored as `flat_counts.BEYOND_INT64`: the kernel hands that node to Python. Labels and
capacities never change during a replay, so neither do these."""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from scheduler.model import Node
from scheduler.state.flat_counts import flat

LISTS_KEPT = 4096  # node lists kept as arrays (a cluster's topology domains are far fewer)


class NodeArrays:
    """Per node: its GPUs, and 1 where CPU (memory) capacity is modelled (a node with 0 does
    not model it); per GPU model, its nodes in scan order (ascending index)."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.gpus = array("q", (flat(node.gpus) for node in nodes))
        self.has_cpu = array("q", (1 if node.cpu_milli else 0 for node in nodes))
        self.has_memory = array("q", (1 if node.memory_mib else 0 for node in nodes))
        self.nodes_of_model: dict[str, list[int]] = {}
        for index, node in enumerate(nodes):
            self.nodes_of_model.setdefault(node.gpu_model, []).append(index)
        self._accepted: dict[tuple[str, ...], array[int] | None] = {}
        # Node lists the walk was asked to search (topology domains), by the list's id and the
        # request's models: the list is held, so its id names it while it is kept.
        self._listed: dict[tuple[int, tuple[str, ...]], tuple[list[int], array[int] | None]] = {}

    def accepted_nodes(self, models: tuple[str, ...]) -> array[int] | None:
        """The nodes of the GPU models a request accepts, in scan order (the walk visits only
        those and counts the others as mismatched); None: any model (every node). Built once
        per set of models."""
        if models in self._accepted:
            return self._accepted[models]
        found = array("q", sorted(node for model in set(models) for node in self.nodes_of_model.get(model, ()))
                      ) if models else None
        self._accepted[models] = found
        return found

    def listed_nodes(self, nodes: list[int], models: tuple[str, ...]) -> array[int] | None:
        """`nodes` (a topology domain's, never changed once made) as the walk visits a list:
        ascending, every node of a GPU model of `models` (any: ()), as an int64 array; None
        when it is not such a list (the plain scan takes it). Built once per list and models."""
        key = (id(nodes), models)
        kept = self._listed.get(key)
        if kept is not None and kept[0] is nodes and (kept[1] is None or len(kept[1]) == len(nodes)):
            return kept[1]
        accepted = self.accepted_nodes(models)
        allowed = None if accepted is None else set(accepted)
        ascending = all(later > earlier for earlier, later in zip(nodes, nodes[1:], strict=False))
        found = (array("q", nodes) if nodes and ascending and (allowed is None or allowed.issuperset(nodes))
                 else None)
        if len(self._listed) >= LISTS_KEPT:
            self._listed.clear()  # lists made for one question (a study's candidates) do not pile up
        self._listed[key] = (nodes, found)
        return found
