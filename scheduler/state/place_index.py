"""Free GPUs per topology domain, kept up to date as pods come and go — once something asks.

A topology domain is a (level, label value, GPU model) triple for the levels many nodes
share (zone, block, rack). The topology plugin asks "how many free milli-GPUs does this
domain have" and "how many pods of g whole GPUs could it hold at most" once per domain and
attempt; answering from these sums avoids walking the domain's nodes each time.

Most replays never ask (no gang prefers or requires a topology level): keeping the sums on
every allocation and release was a fifth of such a replay's time. So the index starts
dormant, and the first question builds the sums from the nodes' current free GPUs; from then
on every change keeps them. A sum built late is the same sum kept from the start, since both
are the nodes' current values added up (`replay --verify` compares each answer with a walk
over the domain's nodes: "free GPUs of a topology domain from running sums").
"""

from __future__ import annotations

from scheduler.model import Node
from scheduler.model.workload import MILLI

PLACE_LEVELS = ("zone", "block", "rack")  # the topology levels many nodes share
Place = tuple[str, str, str]  # (level, label value, GPU model)


class PlaceIndex:
    """The sums by place id (`place_id`: a place's index among the cluster's places, fixed
    for the replay): flat lists, so that keeping them costs a few list updates per change."""

    def __init__(self, nodes: tuple[Node, ...], whole_free: list[int], used: list[int]) -> None:
        # The state's own per-node lists (read, never written here): what a late build sums.
        self._nodes = nodes
        self._whole_free = whole_free
        self._used = used
        self.kept = False  # True once a question was asked: the state then reports every change
        self._built = False
        self._ids: dict[Place, int] = {}
        places_of: list[tuple[int, ...]] = []
        for node in nodes:
            places = ((level, value, node.gpu_model) for level in PLACE_LEVELS
                      if (value := node.label(level)) is not None)
            places_of.append(tuple(self._ids.setdefault(place, len(self._ids)) for place in places))
        self._places_of = places_of
        # Free milli-GPUs per place: a domain's free GPUs without summing its nodes.
        self._free_milli: list[int] = [0] * len(self._ids)
        # ... and how many of its nodes have k whole GPUs free (count[k], k up to the most GPUs
        # a node has): how many pods of g whole GPUs each it could hold at most (Σ count[k] · k // g).
        most = max((node.gpus for node in nodes), default=0)
        self._whole_free_nodes: list[list[int]] = [[0] * (most + 1) for _ in self._ids]

    def place_id(self, place: Place) -> int | None:
        """The place's id, None when no node of the cluster is in it."""
        return self._ids.get(place)

    def free_milli(self, place: int) -> int:
        if not self.kept:
            self._build()
        return self._free_milli[place]

    def whole_free_nodes(self, place: int) -> list[int]:
        """[k]: how many of the place's nodes have k whole GPUs free (read only)."""
        if not self.kept:
            self._build()
        return self._whole_free_nodes[place]

    def _build(self) -> None:
        for index, places in enumerate(self._places_of):
            free = self._nodes[index].gpus * MILLI - self._used[index]
            whole = self._whole_free[index]
            for place in places:
                self._free_milli[place] += free
                self._whole_free_nodes[place][whole] += 1
        self._built = True
        self.kept = True

    def moved(self, node: int, whole_before: int, whole_after: int, milli: int) -> None:
        """`node` went from `whole_before` whole free GPUs to `whole_after`, and `milli`
        milli-GPUs of it were taken (negative: given back). Only once `kept`."""
        free, whole_free_nodes = self._free_milli, self._whole_free_nodes
        whole_moved = whole_before != whole_after  # a slice of a shared device, CPU alone: no count moves
        for place in self._places_of[node]:
            if milli:
                free[place] -= milli
            if whole_moved:
                counts = whole_free_nodes[place]
                counts[whole_before] -= 1
                counts[whole_after] += 1
