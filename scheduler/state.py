"""Cluster state: which pod holds which GPU devices, with a journal for cheap what-ifs.

GPUs are tracked per device in milli-GPUs (1000 = one device), so fractional requests
share a device exactly. A request of one GPU or more takes whole free devices; a request
below one GPU takes part of one device, preferring the fullest device it still fits on so
that shared devices fill up before whole ones are broken.

What-if and restore (the Kueue / kube-scheduler snapshot idea, without copies): every
`allocate` and `release` is appended to a journal while a mark is open; `rollback(mark)`
undoes everything after the mark in reverse order. A scheduling cycle assumes pods,
simulates the removal of preemption victims, and either keeps the result or rolls back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler.candidates import NodeCandidates
from scheduler.model import Cluster, Node
from scheduler.model.cluster import NO_SELECTOR, NodeSelector
from scheduler.model.workload import MILLI
from scheduler.usage_index import UsageIndex

PodKey = tuple[str, int]  # (workload_id, pod_index)


@dataclass(frozen=True, slots=True)
class PodRequest:
    """What one pod asks of a node. `models` empty means any GPU model; `selector` the
    labels the node must carry and the taints the pod tolerates (Kueue injects a flavor's
    nodeLabels and tolerations; a TAS assignment adds its domain's label)."""

    milli: int
    cpu_milli: int = 0
    memory_mib: int = 0
    models: tuple[str, ...] = ()
    selector: NodeSelector = NO_SELECTOR


@dataclass(slots=True)
class Holding:
    node: int
    devices: tuple[tuple[int, int], ...]  # (device index, milli taken)
    cpu_milli: int
    memory_mib: int
    milli: int = 0  # total milli-GPUs held (derived from devices; kept to avoid re-summing)

    def __post_init__(self) -> None:
        self.milli = sum(m for _, m in self.devices)


PLACE_LEVELS = ("zone", "block", "rack")  # the topology levels many nodes share


class ClusterState(NodeCandidates):
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.nodes: tuple[Node, ...] = cluster.nodes
        self.device_free: list[list[int]] = [[MILLI] * n.gpus for n in self.nodes]
        self.whole_free: list[int] = [n.gpus for n in self.nodes]
        self.cpu_free: list[int] = [n.cpu_milli for n in self.nodes]
        self.memory_free: list[int] = [n.memory_mib for n in self.nodes]
        # Pods that request no CPU (memory) per node: kube-scheduler's scores count them as
        # requesting a default amount (`plugins/node_resources.py`).
        self.pods_without_cpu: list[int] = [0] * len(self.nodes)
        self.pods_without_memory: list[int] = [0] * len(self.nodes)
        self.pods_on_node: list[dict[PodKey, Holding]] = [{} for _ in self.nodes]
        self.holdings: dict[PodKey, Holding] = {}
        self.free_milli_by_model: dict[str, int] = {}
        self.nodes_by_model: dict[str, list[int]] = {}
        self.used: list[int] = [0] * len(self.nodes)  # milli-GPUs held per node
        self.usage_index = UsageIndex()
        # Free milli-GPUs per (topology level, label value, GPU model) for the shared levels
        # (zone, block, rack): a topology domain's free GPUs without summing its nodes.
        self.free_milli_by_place: dict[tuple[str, str, str], int] = {}
        # ... and how many of its nodes have k whole GPUs free (index k): how many pods of
        # g whole GPUs each it could hold at most (Σ count[k] · k // g).
        self.whole_free_nodes_by_place: dict[tuple[str, str, str], list[int]] = {}
        self._places_of: list[tuple[tuple[str, str, str], ...]] = []
        for index, node in enumerate(self.nodes):
            places = tuple((level, value, node.gpu_model) for level in PLACE_LEVELS
                           if (value := node.label(level)) is not None)
            self._places_of.append(places)
            for place in places:
                self.free_milli_by_place[place] = self.free_milli_by_place.get(place, 0) + node.gpus * MILLI
                counts = self.whole_free_nodes_by_place.setdefault(place, [])
                counts.extend([0] * (node.gpus + 1 - len(counts)))
                counts[node.gpus] += 1
            self.usage_index.add_node(index, node.gpu_model, node.gpus)
            self.nodes_by_model.setdefault(node.gpu_model, []).append(index)
            self.free_milli_by_model[node.gpu_model] = (
                self.free_milli_by_model.get(node.gpu_model, 0) + node.gpus * MILLI
            )
        # Topology domains by (accepted models, level, per model): they depend only on the
        # cluster's fixed labels (`plugins/topology.domains`). Typed loosely: the state does
        # not know the plugin's Domain type.
        self.domains_cache: dict[tuple[tuple[str, ...], str | None, bool, NodeSelector], list[Any]] = {}
        self._init_candidates(cluster)
        self._journal: list[tuple[str, PodKey, Holding]] = []
        self._marks = 0
        # Bumped on every change: lets a cycle know that an answer it computed for one
        # request (e.g. "fits nowhere") still holds for an identical request.
        self.version = 0
        # Bumped only when committed GPUs are given back (not by what-ifs that roll back):
        # placement can only get easier after a release, which the queue relies on.
        self.release_version = 0
        self.release_version_by_model: dict[str, int] = dict.fromkeys(self.nodes_by_model, 0)
        # Milli-GPUs held, by (GPU model, priority of the holder): "how much could preemption
        # free for priority p" without walking every holder. The replay registers each
        # workload's priority in `priority_of` before placing it (0 if it did not).
        self.priority_of: dict[str, int] = {}
        self.held_milli_by_class: dict[tuple[str, int], int] = {}

    # -- queries -----------------------------------------------------------------------

    def free_milli(self, models: tuple[str, ...] = ()) -> int:
        if not models:
            return sum(self.free_milli_by_model.values())
        return sum(self.free_milli_by_model.get(m, 0) for m in models)

    def candidate_models(self, models: tuple[str, ...]) -> list[str]:
        """GPU models of this cluster a request accepts."""
        return [m for m in self.nodes_by_model if not models or m in models]

    def free_gpus(self) -> tuple[tuple[Node, ...], list[int], list[int]]:
        """The nodes, their whole free GPUs and their free milli-GPUs (Kueue TAS reads them)."""
        return self.nodes, self.whole_free, [n.gpus * MILLI - used for n, used in zip(self.nodes, self.used, strict=True)]

    def gpu_fits(self, node: int, milli: int) -> bool:
        if milli >= MILLI:
            return self.whole_free[node] * MILLI >= milli
        return any(free >= milli for free in self.device_free[node])

    def resources_fit(self, node: int, request: PodRequest) -> tuple[bool, bool]:
        """(cpu fits, memory fits); a node with 0 capacity does not model that resource."""
        spec = self.nodes[node]
        cpu_ok = not spec.cpu_milli or self.cpu_free[node] >= request.cpu_milli
        mem_ok = not spec.memory_mib or self.memory_free[node] >= request.memory_mib
        return cpu_ok, mem_ok

    def held_below(self, priority: int, models: tuple[str, ...] = ()) -> int:
        """Milli-GPUs held by workloads of lower priority on nodes of `models` (any: ())."""
        return sum(milli for (model, held_priority), milli in self.held_milli_by_class.items()
                   if held_priority < priority and (not models or model in models))

    def used_milli(self, node: int) -> int:
        return self.used[node]

    # -- changes -----------------------------------------------------------------------

    def allocate(self, key: PodKey, node: int, request: PodRequest) -> Holding:
        """Give `key` GPUs on `node`. The caller has checked that they fit."""
        free = self.device_free[node]
        if request.milli >= MILLI:
            wanted = request.milli // MILLI
            picked = [d for d, f in enumerate(free) if f == MILLI][:wanted]
            devices = tuple((d, MILLI) for d in picked)
        else:
            # Fullest device that still fits: keeps whole devices whole for big requests.
            best = min(
                (d for d, f in enumerate(free) if f >= request.milli),
                key=lambda d: (free[d], d),
            )
            devices = ((best, request.milli),)
        holding = Holding(node, devices, request.cpu_milli, request.memory_mib)
        self._apply(key, holding)
        if self._marks:
            self._journal.append(("alloc", key, holding))
        return holding

    def release(self, key: PodKey) -> Holding:
        holding = self.holdings[key]
        self._unapply(key, holding)
        if self._marks:
            self._journal.append(("release", key, holding))
        else:
            self._released(holding)
        return holding

    def _released(self, holding: Holding) -> None:
        self.release_version += 1
        self.release_version_by_model[self.nodes[holding.node].gpu_model] += 1

    def release_version_for(self, models: tuple[str, ...]) -> int:
        """Grows whenever committed GPUs of any of `models` (any model: ()) are released."""
        if not models:
            return self.release_version
        by_model = self.release_version_by_model
        return sum(by_model.get(m, 0) for m in models)

    def restore(self, key: PodKey, holding: Holding) -> None:
        """Put back exactly the devices `key` held (a preemption what-if reprieve)."""
        self._apply(key, holding)
        if self._marks:
            self._journal.append(("alloc", key, holding))

    def mark(self) -> int:
        """Open a what-if scope; pass the result to `rollback` or `commit`."""
        self._marks += 1
        return len(self._journal)

    def rollback(self, mark: int) -> None:
        while len(self._journal) > mark:
            op, key, holding = self._journal.pop()
            if op == "alloc":
                self._unapply(key, holding)
            else:
                self._apply(key, holding)
        self._close(mark)

    def commit(self, mark: int) -> None:
        for op, _, holding in self._journal[mark:]:
            if op == "release":
                self._released(holding)
        self._close(mark)

    def _close(self, mark: int) -> None:
        self._marks -= 1
        if not self._marks:
            self._journal.clear()

    def _apply(self, key: PodKey, holding: Holding) -> None:
        self.version += 1
        node = holding.node
        free = self.device_free[node]
        whole_before = self.whole_free[node]
        for device, milli in holding.devices:
            if free[device] == MILLI:
                self.whole_free[node] -= 1
            free[device] -= milli
        if self.whole_free[node] != whole_before:
            self._whole_free_moved(node, whole_before)
        self.cpu_free[node] -= holding.cpu_milli
        self.memory_free[node] -= holding.memory_mib
        if not holding.cpu_milli:
            self.pods_without_cpu[node] += 1
        if not holding.memory_mib:
            self.pods_without_memory[node] += 1
        self.free_milli_by_model[self.nodes[node].gpu_model] -= holding.milli
        held_class = (self.nodes[node].gpu_model, self.priority_of.get(key[0], 0))
        self.held_milli_by_class[held_class] = self.held_milli_by_class.get(held_class, 0) + holding.milli
        if holding.milli:
            self.usage_index.moved(node, self.used[node], self.used[node] + holding.milli)
            self.used[node] += holding.milli
            for place in self._places_of[node]:
                self.free_milli_by_place[place] -= holding.milli
        self.pods_on_node[node][key] = holding
        self.holdings[key] = holding

    def _whole_free_moved(self, node: int, before: int) -> None:
        after = self.whole_free[node]
        for place in self._places_of[node]:
            counts = self.whole_free_nodes_by_place[place]
            counts[before] -= 1
            counts[after] += 1

    def _unapply(self, key: PodKey, holding: Holding) -> None:
        self.version += 1
        node = holding.node
        free = self.device_free[node]
        whole_before = self.whole_free[node]
        for device, milli in holding.devices:
            free[device] += milli
            if free[device] == MILLI:
                self.whole_free[node] += 1
        if self.whole_free[node] != whole_before:
            self._whole_free_moved(node, whole_before)
        self.cpu_free[node] += holding.cpu_milli
        self.memory_free[node] += holding.memory_mib
        if not holding.cpu_milli:
            self.pods_without_cpu[node] -= 1
        if not holding.memory_mib:
            self.pods_without_memory[node] -= 1
        self.free_milli_by_model[self.nodes[node].gpu_model] += holding.milli
        self.held_milli_by_class[(self.nodes[node].gpu_model, self.priority_of.get(key[0], 0))] -= holding.milli
        if holding.milli:
            self.usage_index.moved(node, self.used[node], self.used[node] - holding.milli)
            self.used[node] -= holding.milli
            for place in self._places_of[node]:
                self.free_milli_by_place[place] += holding.milli
        del self.pods_on_node[node][key]
        del self.holdings[key]
