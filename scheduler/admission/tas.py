"""Kueue Topology-Aware Scheduling: the topology domain a pod set is admitted into.

Source: kueue pkg/cache/scheduler/tas_flavor_snapshot.go (findTopologyAssignment,
findLevelWithFitDomains, findBestFitDomain, sortedDomains, updateCountsToMinimumGeneric,
notFitMessage), with the default algorithm: BestFit (TASBalancedPlacement is alpha and off;
LeastFreeCapacity is only for unconstrained pod sets, which the replay does not have).

Phase 1: each node of the flavor's nodes counts how many pods of the request it can take
(its free GPUs; CPU and memory are not counted), and every domain sums its nodes.
Phase 2: at the requested level, domains are sorted by that count descending, then by their
label values; when the first can hold the pod set, the *first domain with the smallest count
that still holds it* is taken (best fit). Otherwise a required request fails
("topology "T" allows to fit only 3 out of 4 pod(s)"), and a preferred one tries the level
above, up to the widest, where it is spread over as many domains as needed, fullest first.
Then the pods are handed down level by level, each time to the fullest children first and
the best-fitting one for the rest, down to single nodes: that is what Kueue assumes the pod
set uses until its pods run.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field

from scheduler.admission.objects import ResourceFlavor, Topology, flavor_matches
from scheduler.admission.workloads import POD_SET
from scheduler.model.cluster import HOSTNAME_LABEL, LEVEL_LABELS, Node
from scheduler.model.workload import Workload

DomainId = tuple[str, ...]  # the label values from the widest level down to the domain's


@dataclass(frozen=True, slots=True)
class TopologyRequest:
    """A pod set's topology request: `level` is a node label of the Topology."""

    level: str
    required: bool
    pods: int
    milli: int  # GPUs per pod, in milli-GPUs


@dataclass
class TopologyAssignment:
    labels: dict[str, str]  # the chosen domain's label values (empty: spread over several)
    pods_per_node: dict[int, int] = field(default_factory=dict)  # node index -> pods Kueue assumes there


FreeGpus = Callable[[], tuple[Sequence[Node], Sequence[int], Sequence[int]]]  # nodes, whole free, free milli


class TopologyAssignments:
    """Kueue's TAS cache for one replay: the assignment of each admitted workload whose flavor
    has a Topology (with its milli-GPUs per pod), and the nodes each flavor stands for."""

    def __init__(self) -> None:
        self._by_workload: dict[str, tuple[TopologyAssignment, int]] = {}
        self._flavor_nodes: dict[str, list[int]] = {}
        self._cycle: list[tuple[TopologyAssignment, int]] = []  # reserved for this admission cycle only

    def place(self, name: str, spec: Workload, flavor: ResourceFlavor | None, topologies: Mapping[str, Topology],
              free_gpus: FreeGpus, *, unplaced: Callable[[str], bool]) -> str | None:
        """Assign workload `name` a domain: None when done (or it needs none), else the
        pending message. `unplaced(other)`: an admitted TAS workload holds no pods yet, so
        its assignment still counts as assumed usage."""
        found = self.find(spec, flavor, topologies, free_gpus, unplaced=unplaced)
        if isinstance(found, str):
            return f"couldn't assign flavors to pod set {POD_SET}: {found}"
        if found is None:
            return None
        self._by_workload[name] = (found, spec.gpu_milli_per_pod)
        return None

    def find(self, spec: Workload, flavor: ResourceFlavor | None, topologies: Mapping[str, Topology],
             free_gpus: FreeGpus, *, unplaced: Callable[[str], bool], freed: Mapping[int, tuple[int, int]] | None = None,
             gone: Container[str] = (), empty: bool = False) -> TopologyAssignment | str | None:
        """The assignment Kueue would find for the pod set now (None: it needs none; a str:
        why none exists, Kueue's notFitMessage), recording nothing. `freed`: (whole, milli) GPUs per node that
        count as free besides the free ones (the pods of preemption victims); `gone`:
        workloads whose assumed usage is not counted (victims not placed yet); `empty`:
        Kueue's WithSimulateEmpty, where no TAS workload's usage counts (`freed` then holds
        every TAS workload's pods) and no assumed usage either."""
        request = topology_request(spec, flavor)
        if flavor is None or flavor.topology_name is None or request is None:
            return None
        nodes, whole_free, free_milli = free_gpus()
        candidates = self._flavor_nodes.get(flavor.name)
        if candidates is None:
            candidates = self._flavor_nodes[flavor.name] = [i for i, n in enumerate(nodes) if flavor_matches(flavor, n)]
        assumed = {} if empty else self._assumed(lambda name: name not in gone and unplaced(name))
        freed = freed or {}
        capacity = [0] * len(nodes)
        for i in candidates:
            taken_whole, taken_milli = assumed.get(i, (0, 0))
            more_whole, more_milli = freed.get(i, (0, 0))
            capacity[i] = max(0, pods_that_fit(nodes[i].gpus, whole_free[i] + more_whole - taken_whole,
                                               free_milli[i] + more_milli - taken_milli, request.milli, request.pods))
        return find_topology_assignment(topologies[flavor.topology_name], nodes, candidates, capacity, request)

    def reserve_for_cycle(self, found: TopologyAssignment, milli: int) -> None:
        """A preemptor's assignment counts as used until the admission cycle ends (Kueue adds
        it to the cycle snapshot's TAS usage: scheduler.go updateAssignmentForTAS, AddUsage)."""
        self._cycle.append((found, milli))

    def end_cycle(self) -> None:
        self._cycle.clear()

    def domain_labels(self, name: str) -> dict[str, str] | None:
        found = self._by_workload.get(name)
        return found[0].labels if found else None

    def release(self, name: str) -> None:
        self._by_workload.pop(name, None)

    def _assumed(self, unplaced: Callable[[str], bool]) -> dict[int, tuple[int, int]]:
        """(whole GPUs, milli-GPUs) per node of admitted TAS workloads whose pods do not hold
        them yet (once they do, the nodes' free GPUs count them), and of this cycle's
        preemptors' reservations."""
        assumed: dict[int, tuple[int, int]] = {}
        used = [held for name, held in self._by_workload.items() if unplaced(name)]
        for found, milli in used + self._cycle:
            for node, pods in found.pods_per_node.items():
                whole, part = assumed.get(node, (0, 0))
                assumed[node] = (whole + pods * (milli // 1000 if milli % 1000 == 0 else 0), part + pods * milli)
        return assumed


def topology_request(spec: Workload, flavor: ResourceFlavor | None) -> TopologyRequest | None:
    """The pod set's TAS request under `flavor`: the trace's `topology_required` /
    `topology_preferred` read as the annotations kueue.x-k8s.io/podset-required-topology /
    podset-preferred-topology, a level name standing for its node label (`LEVEL_LABELS`).
    None when the flavor has no Topology or the row asks for none."""
    if flavor is None or flavor.topology_name is None:
        return None
    level = spec.topology_required or spec.topology_preferred
    if level is None:
        return None
    return TopologyRequest(LEVEL_LABELS.get(level, level), spec.topology_required is not None, spec.pods,
                           spec.gpu_milli_per_pod)


def pods_that_fit(node_gpus: int, whole_free: int, free_milli: int, milli: int, pods: int) -> int:
    """How many pods of `milli` milli-GPUs a node's free GPUs hold (a pod without GPUs: all)."""
    if milli <= 0:
        return pods
    if milli >= 1000:
        return whole_free // (milli // 1000) if milli % 1000 == 0 else free_milli // milli
    return free_milli // milli if node_gpus else 0


def find_topology_assignment(topology: Topology, nodes: Sequence[Node], candidates: Sequence[int],
                             capacity: Sequence[int], request: TopologyRequest) -> TopologyAssignment | str:
    """The assignment of `request` on `candidates` (node indices of the flavor, `capacity[i]`
    pods each), or why none exists (Kueue's message)."""
    if request.level not in topology.levels:
        return f"no requested topology level: {request.level}"
    levels = topology.levels if topology.levels[-1] == HOSTNAME_LABEL else (*topology.levels, HOSTNAME_LABEL)
    counts: list[dict[DomainId, int]] = [{} for _ in levels]
    children: dict[DomainId, list[DomainId]] = {}
    for index in candidates:
        values = tuple(nodes[index].label_value(label) for label in levels)
        if any(v is None for v in values):
            continue  # a node without every level's label is not in the topology
        path = tuple(v for v in values if v is not None)
        for depth in range(len(levels)):
            domain = path[: depth + 1]
            if domain not in counts[depth]:
                counts[depth][domain] = 0
                if depth:
                    children.setdefault(path[:depth], []).append(domain)
            counts[depth][domain] += capacity[index]
    found = _fit_level(topology.name, counts, levels.index(request.level), request)
    if isinstance(found, str):
        return found
    depth, chosen = found
    labels = dict(zip(levels[: depth + 1], chosen[0][0], strict=True)) if len(chosen) == 1 else {}
    while depth < len(levels) - 1:  # hand the pods down to the nodes (updateCountsToMinimum)
        lower: list[tuple[DomainId, int]] = []
        for domain, pods in chosen:
            lower.extend(_take(counts[depth + 1], _sorted(counts[depth + 1], children.get(domain, [])), pods))
        chosen, depth = lower, depth + 1
    by_name = {nodes[i].name: i for i in candidates}
    return TopologyAssignment(labels, {by_name[domain[-1]]: pods for domain, pods in chosen if pods})


def _fit_level(name: str, counts: list[dict[DomainId, int]], depth: int,
               request: TopologyRequest) -> tuple[int, list[tuple[DomainId, int]]] | str:
    """findLevelWithFitDomains: (the level, [(domain, pods)]) or the not-fit message."""
    needed = request.pods
    while True:
        ordered = _sorted(counts[depth], list(counts[depth]))
        if not ordered:
            return f"no topology domains at level: {request.level}"
        top_count = counts[depth][ordered[0]]
        if top_count >= needed:
            return depth, [(_best_fit(counts[depth], ordered, needed), needed)]
        if request.required:
            return _not_fit(name, top_count, needed)
        if depth == 0:
            break
        depth -= 1
    taken = _take(counts[0], ordered, needed)
    placed = sum(pods for _, pods in taken)
    if placed < needed:
        return _not_fit(name, placed, needed)
    return 0, taken


def _sorted(count: dict[DomainId, int], domains: list[DomainId]) -> list[DomainId]:
    """sortedDomains (BestFit): most pods first, then by label values."""
    return sorted(domains, key=lambda d: (-count[d], d))


def _best_fit(count: dict[DomainId, int], ordered: list[DomainId], needed: int) -> DomainId:
    """findBestFitDomain: the first domain with the smallest count that still holds `needed`."""
    best, best_count = ordered[0], None
    for domain in ordered:
        if count[domain] >= needed and (best_count is None or count[domain] < best_count):
            best, best_count = domain, count[domain]
    return best


def _take(count: dict[DomainId, int], ordered: list[DomainId], needed: int) -> list[tuple[DomainId, int]]:
    """Fullest domains first; the one that can finish the pod set is the best-fitting of
    those left (updateCountsToMinimumGeneric with BestFit)."""
    taken: list[tuple[DomainId, int]] = []
    remaining = needed
    for i, domain in enumerate(ordered):
        if remaining <= 0:
            break
        if count[domain] >= remaining:
            taken.append((_best_fit(count, ordered[i:], remaining), remaining))
            return taken
        if count[domain] > 0:
            taken.append((domain, count[domain]))
            remaining -= count[domain]
    return taken


def _not_fit(name: str, fit: int, needed: int) -> str:
    if fit == 0:
        return f'topology "{name}" doesn\'t allow to fit any of {needed} pod(s)'
    return f'topology "{name}" allows to fit only {fit} out of {needed} pod(s)'
