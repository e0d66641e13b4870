"""Free GPUs per topology domain, kept up to date as pods come and go.

A topology domain is a (level, label value, GPU model) triple for the levels many nodes
share (zone, block, rack). The topology plugin asks "how many free milli-GPUs does this
domain have" and "how many pods of g whole GPUs could it hold at most" once per domain and
attempt; answering from these sums avoids walking the domain's nodes each time.
"""

from __future__ import annotations

from scheduler.model import Node
from scheduler.model.workload import MILLI

PLACE_LEVELS = ("zone", "block", "rack")  # the topology levels many nodes share
Place = tuple[str, str, str]  # (level, label value, GPU model)


class PlaceIndex:
    def __init__(self, nodes: tuple[Node, ...]) -> None:
        # Free milli-GPUs per place: a domain's free GPUs without summing its nodes.
        self.free_milli: dict[Place, int] = {}
        # ... and how many of its nodes have k whole GPUs free (k → count): how many pods of
        # g whole GPUs each it could hold at most (Σ count[k] · k // g).
        self.whole_free_nodes: dict[Place, dict[int, int]] = {}
        self._places_of: list[tuple[Place, ...]] = []
        for node in nodes:
            places = tuple((level, value, node.gpu_model) for level in PLACE_LEVELS
                           if (value := node.label(level)) is not None)
            self._places_of.append(places)
            for place in places:
                self.free_milli[place] = self.free_milli.get(place, 0) + node.gpus * MILLI
                counts = self.whole_free_nodes.setdefault(place, {})
                counts[node.gpus] = counts.get(node.gpus, 0) + 1

    def milli_taken(self, node: int, milli: int) -> None:
        """`milli` GPUs of `node` were taken (negative: given back)."""
        for place in self._places_of[node]:
            self.free_milli[place] -= milli

    def whole_free_moved(self, node: int, before: int, after: int) -> None:
        """`node` went from `before` whole free GPUs to `after`."""
        for place in self._places_of[node]:
            counts = self.whole_free_nodes[place]
            counts[before] -= 1
            counts[after] = counts.get(after, 0) + 1
