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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.dra.objects import PodClaims
from scheduler.dra.state import DraHolding, DraState, unit_device_id
from scheduler.model import Cluster, Node
from scheduler.model.cluster import NO_SELECTOR, NodeSelector
from scheduler.model.workload import MILLI
from scheduler.state.candidates import NodeCandidates
from scheduler.state.flat_counts import FlatCounts, flat
from scheduler.state.gpu_room import GpuRoom
from scheduler.state.node_arrays import NodeArrays
from scheduler.state.nominations import Nominations, Nominee
from scheduler.state.place_index import PlaceIndex
from scheduler.state.usage_index import UsageIndex
from scheduler.state.virtual_free import LevelChanges, VirtualFreeIndex

PodKey = tuple[str, int]  # (workload_id, pod_index)


# PodRequest and Holding write their __init__ out: mypyc compiles a dataclass's own methods,
# while the __init__ the dataclasses module generates runs interpreted (one per allocation).
@dataclass(frozen=True, slots=True, init=False)
class PodRequest:
    """What one pod asks of a node. `models` empty means any GPU model; `selector` the
    labels the node must carry and the taints the pod tolerates (Kueue injects a flavor's
    nodeLabels and tolerations; a TAS assignment adds its domain's label)."""

    milli: int
    cpu_milli: int
    memory_mib: int
    models: tuple[str, ...]
    priority: int  # the pod's priority: GPUs nominated to higher priorities are not free to it
    selector: NodeSelector
    claims: PodClaims | None  # DRA claims (docs/dra.md); None: a plain GPU count

    def __init__(self, milli: int, cpu_milli: int = 0, memory_mib: int = 0, models: tuple[str, ...] = (),
                 priority: int = 0, selector: NodeSelector = NO_SELECTOR, claims: PodClaims | None = None) -> None:
        object.__setattr__(self, "milli", milli)
        object.__setattr__(self, "cpu_milli", cpu_milli)
        object.__setattr__(self, "memory_mib", memory_mib)
        object.__setattr__(self, "models", models)
        object.__setattr__(self, "priority", priority)
        object.__setattr__(self, "selector", selector)
        object.__setattr__(self, "claims", claims)

    def with_models(self, models: tuple[str, ...], selector: NodeSelector | None = None) -> PodRequest:
        """This request on nodes of `models` (and `selector`, when given) only; as
        `dataclasses.replace`, without reading the fields' list on every call."""
        return PodRequest(self.milli, self.cpu_milli, self.memory_mib, models, self.priority,
                          self.selector if selector is None else selector, self.claims)


@dataclass(slots=True, init=False)
class Holding:
    """What one pod holds on its node: `whole` entire devices, or a slice of one shared
    device (`shared`: (device id on the node, milli-GPUs)). Through DRA (`dra`): its devices,
    and in `parts` the (device id, milli-GPUs) of each GPU they take a share of or all."""

    node: int
    whole: int
    shared: tuple[int, int] | None
    cpu_milli: int
    memory_mib: int
    milli: int  # total milli-GPUs held (derived; kept to avoid recomputing)
    parts: tuple[tuple[int, int], ...]
    dra: DraHolding | None

    def __init__(self, node: int, whole: int, shared: tuple[int, int] | None, cpu_milli: int, memory_mib: int,
                 parts: tuple[tuple[int, int], ...] = (), dra: DraHolding | None = None) -> None:
        self.node, self.whole, self.shared = node, whole, shared
        self.cpu_milli, self.memory_mib, self.parts, self.dra = cpu_milli, memory_mib, parts, dra
        self.milli = whole * MILLI + (shared[1] if shared else 0)
        if parts:
            self.milli += sum(milli for _, milli in parts)


class ClusterState:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.nodes: tuple[Node, ...] = cluster.nodes
        # Devices per node, held without a list per device (a node may declare billions of
        # GPUs): how many are entirely free, how many entirely taken by pods of whole GPUs,
        # and the free milli-GPUs of each device that pods below one GPU share (by id).
        # Devices are interchangeable except shared ones, whose slices must add up.
        self.whole_free: list[int] = [n.gpus for n in self.nodes]
        self.whole_taken: list[int] = [0] * len(self.nodes)
        self.shared_free: list[dict[int, int]] = [{} for _ in self.nodes]
        self.next_shared_id: list[int] = [0] * len(self.nodes)
        self.cpu_free: list[int] = [n.cpu_milli for n in self.nodes]
        self.memory_free: list[int] = [n.memory_mib for n in self.nodes]
        self.node_arrays = NodeArrays(self.nodes)  # the nodes' fixed fields, for the native walk
        # Pods that request no CPU (memory) per node: kube-scheduler's scores count them as
        # requesting a default amount (`plugins/node_resources.py`).
        self.pods_without_cpu: list[int] = [0] * len(self.nodes)
        self.pods_without_memory: list[int] = [0] * len(self.nodes)
        self.pods_on_node: list[dict[PodKey, Holding]] = [{} for _ in self.nodes]
        self.holdings: dict[PodKey, Holding] = {}
        self.free_milli_by_model: dict[str, int] = {}
        self.nodes_by_model: dict[str, list[int]] = {}
        self.used: list[int] = [0] * len(self.nodes)  # milli-GPUs held per node
        # Free and used counts as int64 arrays for the native walk, written with the lists.
        self.flat = FlatCounts(self.cpu_free, self.memory_free, self.used, self.whole_free)
        self.usage_index = UsageIndex(self.used)  # by used milli-GPUs, kept once first asked
        self.room = GpuRoom(self.nodes)  # nodes by whole free GPUs, shared devices by free share, per model
        # Free GPUs per topology domain, kept once first asked (`scheduler/state/place_index.py`).
        self.places = PlaceIndex(self.nodes, self.whole_free, self.used)
        for index, node in enumerate(self.nodes):
            self.usage_index.add_node(index, node.gpu_model, node.gpus)
            self.nodes_by_model.setdefault(node.gpu_model, []).append(index)
            self.free_milli_by_model[node.gpu_model] = (
                self.free_milli_by_model.get(node.gpu_model, 0) + node.gpus * MILLI
            )
        # Topology domains by (accepted models, level, per model): they depend only on the
        # cluster's fixed labels (`plugins/topology.domains`). Typed loosely: the state does
        # not know the plugin's Domain type.
        self.domains_cache: dict[tuple[tuple[str, ...], str | None, bool, NodeSelector], list[Any]] = {}
        self.candidates = NodeCandidates(cluster, self.nodes_by_model)  # by GPU models and selector
        self._journal: list[tuple[str, PodKey, Holding]] = []
        self._marks = 0
        # Bumped only when committed GPUs are given back (not by what-ifs that roll back):
        # placement can only get easier after a release, which the queue relies on.
        self.release_version = 0
        self.release_version_by_model: dict[str, int] = dict.fromkeys(self.nodes_by_model, 0)
        # Milli-GPUs held, by (GPU model, priority of the holder): "how much could preemption
        # free for priority p" without walking every holder. The replay registers each
        # workload's priority in `priority_of` before placing it (0 if it did not).
        self.priority_of: dict[str, int] = {}
        self.held_milli_by_class: dict[tuple[str, int], int] = {}
        self.nominations = Nominations()  # GPUs kept for preemptors (`scheduler/state/nominations.py`)
        # Free plus lower-priority GPUs per node and preemptor priority (`virtual_free.py`).
        self.virtual_free = VirtualFreeIndex(self.nodes, self.used, lambda: held_by_priority(self))
        self.level_changes = LevelChanges()  # what the views without lower priorities miss
        self.dra: DraState | None = None  # devices published through DRA (`scheduler/dra/`); None: none
        self.dra_gpus: dict[PodKey, float] = {}  # the GPU share each pod last took through DRA

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

    def gpu_fits(self, node: int, milli: int, kept: int = 0) -> bool:
        """Whether `milli` GPUs fit on `node` with `kept` milli-GPUs of it nominated to others
        (kept whole devices first: a nomination is counted against whole free devices)."""
        if kept:
            return self.whole_free[node] * MILLI - kept >= milli
        if milli >= MILLI:
            return self.whole_free[node] * MILLI >= milli
        return self.whole_free[node] > 0 or any(free >= milli for free in self.shared_free[node].values())

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
        if self.dra is not None and self.dra.involves(node, request.claims):
            holding = device_holding(self, key, node, request, self.dra)
        elif request.milli >= MILLI:  # whole devices: the common case, without a call
            holding = Holding(node, request.milli // MILLI, None, request.cpu_milli, request.memory_mib)
        else:
            holding = count_holding(self, node, request)
        self._apply(key, holding)
        if self._marks:
            self._journal.append(("alloc", key, holding))
        return holding

    def nominate(self, nominee: Nominee, priority: int, placements: list[tuple[int, int]],
                 pods: list[tuple[int, int]] | None = None) -> None:
        """Keep GPUs on nodes for a preemptor (see `scheduler/state/nominations.py`); `pods`:
        (pod index, node) of a group's pods, their NominatedNodeName each."""
        self.nominations.add(nominee, priority, placements, pods or ())

    def drop_nominations(self, workload_id: str, pod: int | None = None) -> None:
        """End a workload's nominations (`Nominations.drop_run`): kept GPUs become usable."""
        if not self.nominations:
            return
        for node in self.nominations.drop_run(workload_id, pod):
            self._released_on(node)

    def release(self, key: PodKey) -> Holding:
        holding = self.holdings[key]
        self._unapply(key, holding)
        if self._marks:
            self._journal.append(("release", key, holding))
        else:
            self._released_on(holding.node)
        return holding

    def _released_on(self, node: int) -> None:
        self.release_version += 1
        self.release_version_by_model[self.nodes[node].gpu_model] += 1

    def release_version_for(self, models: tuple[str, ...]) -> int:
        """Grows whenever committed GPUs of any of `models` (any model: ()) are released."""
        if not models:
            return self.release_version
        by_model = self.release_version_by_model
        version = 0
        for model in models:  # a loop, not sum(generator): the queue asks this per shape it looks at
            version += by_model.get(model, 0)
        return version

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
                self._released_on(holding.node)
        self._close(mark)

    def _close(self, mark: int) -> None:
        self._marks -= 1
        if not self._marks:
            self._journal.clear()

    def _apply(self, key: PodKey, holding: Holding) -> None:
        node = holding.node
        whole_before = self.whole_free[node]
        self.whole_free[node] -= holding.whole
        self.whole_taken[node] += holding.whole
        if holding.shared is not None:
            share_taken(self, node, *holding.shared)
        if holding.dra is not None:
            take_device_parts(self, key, holding, holding.dra, 1)
        resources_moved(self, node, -holding.cpu_milli, -holding.memory_mib)
        if not holding.cpu_milli:
            self.pods_without_cpu[node] += 1
        if not holding.memory_mib:
            self.pods_without_memory[node] += 1
        model = self.nodes[node].gpu_model
        self.free_milli_by_model[model] -= holding.milli
        priority = self.priority_of.get(key[0], 0)
        held_class = (model, priority)
        self.held_milli_by_class[held_class] = self.held_milli_by_class.get(held_class, 0) + holding.milli
        indexes_moved(self, node, priority, whole_before, holding.milli)
        if self.level_changes.pending:
            self.level_changes.changed(key, priority, holding)
        self.pods_on_node[node][key] = holding
        self.holdings[key] = holding

    def _unapply(self, key: PodKey, holding: Holding) -> None:
        node = holding.node
        whole_before = self.whole_free[node]
        self.whole_free[node] += holding.whole
        self.whole_taken[node] -= holding.whole
        if holding.shared is not None:
            share_given(self, node, *holding.shared)
        if holding.dra is not None:
            take_device_parts(self, key, holding, holding.dra, -1)
        resources_moved(self, node, holding.cpu_milli, holding.memory_mib)
        if not holding.cpu_milli:
            self.pods_without_cpu[node] -= 1
        if not holding.memory_mib:
            self.pods_without_memory[node] -= 1
        model = self.nodes[node].gpu_model
        self.free_milli_by_model[model] += holding.milli
        priority = self.priority_of.get(key[0], 0)
        self.held_milli_by_class[(model, priority)] -= holding.milli
        indexes_moved(self, node, priority, whole_before, -holding.milli)
        if self.level_changes.pending:
            self.level_changes.changed(key, priority, None)
        del self.pods_on_node[node][key]
        del self.holdings[key]


def indexes_moved(state: ClusterState, node: int, priority: int, whole_before: int, milli: int) -> None:
    """The indexes follow `milli` more milli-GPUs (negative: fewer) held on `node`, which had
    `whole_before` whole free GPUs (`_apply` and `_unapply` call it last, after every write)."""
    whole_free = state.whole_free[node]
    state.flat.whole_free[node] = flat(whole_free)
    if whole_free != whole_before:
        state.room.whole_moved(node, whole_before, whole_free)
    if state.places.kept:
        state.places.moved(node, whole_before, whole_free, milli)
    if milli:
        used = state.used[node] + milli
        if state.usage_index.kept:
            state.usage_index.moved(node, state.used[node], used)
        state.used[node] = used
        state.flat.used[node] = flat(used)
        if state.virtual_free.levels:
            state.virtual_free.taken(node, priority, milli)


def share_taken(state: ClusterState, node: int, device: int, milli: int) -> None:
    """`milli` milli-GPUs of `device` on `node` taken by a share (a whole free device starts
    being shared when it was not), in the list and the per-model counts (`ClusterState.room`)."""
    shared = state.shared_free[node]
    before = shared.get(device)
    if before is None:  # a whole free device starts being shared
        state.whole_free[node] -= 1
        shared[device] = after = MILLI - milli
    else:
        shared[device] = after = before - milli
    state.room.share_moved(node, before, after)


def share_given(state: ClusterState, node: int, device: int, milli: int) -> None:
    """`milli` milli-GPUs of the shared `device` on `node` given back: `share_taken` undone."""
    shared = state.shared_free[node]
    before = shared[device]
    after = before + milli
    if after == MILLI:  # nobody shares it any more: a whole free device again
        del shared[device]
        state.whole_free[node] += 1
        state.room.share_moved(node, before, None)
    else:
        shared[device] = after
        state.room.share_moved(node, before, after)


def resources_moved(state: ClusterState, node: int, cpu_milli: int, memory_mib: int) -> None:
    """`cpu_milli` and `memory_mib` more free on `node` (negative: fewer), in the lists and
    the native walk's arrays (`ClusterState.flat`)."""
    if cpu_milli:
        cpu_free = state.cpu_free[node] + cpu_milli
        state.cpu_free[node] = cpu_free
        state.flat.cpu_free[node] = flat(cpu_free)
    if memory_mib:
        memory_free = state.memory_free[node] + memory_mib
        state.memory_free[node] = memory_free
        state.flat.memory_free[node] = flat(memory_free)


def held_by_priority(state: ClusterState) -> list[tuple[int, int, int]]:
    """(node, holder priority, milli-GPUs) of every pod holding GPUs."""
    priority_of = state.priority_of
    return [(h.node, priority_of.get(key[0], 0), h.milli) for key, h in state.holdings.items() if h.milli]


def gpus_held(state: ClusterState, workload_id: str, pods: Sequence[int]) -> dict[int, tuple[int, int]]:
    """(whole devices, milli-GPUs) per node held by these pods of one workload (Kueue's TAS
    cache reads a workload's usage per node from them)."""
    held: dict[int, tuple[int, int]] = {}
    for pod in pods:
        holding = state.holdings.get((workload_id, pod))
        if holding is not None and holding.milli:
            whole, milli = held.get(holding.node, (0, 0))
            held[holding.node] = (whole + holding.whole, milli + holding.milli)
    return held


def fullest_fitting(state: ClusterState, node: int, milli: int) -> int | None:
    """The free milli-GPUs of the fullest device of `node` that still fits a slice of
    `milli` (a whole free device: MILLI), or None: where `allocate` puts such a slice."""
    shared = [free for free in state.shared_free[node].values() if free >= milli]
    if shared:
        return min(shared)
    return MILLI if state.whole_free[node] else None


def free_shares(state: ClusterState, node: int) -> tuple[int, ...]:
    """Every device's free milli-GPUs on `node`, ascending (the FGD measure reads this)."""
    return ((0,) * state.whole_taken[node] + tuple(sorted(state.shared_free[node].values()))
            + (MILLI,) * state.whole_free[node])


def count_holding(state: ClusterState, node: int, request: PodRequest) -> Holding:
    """What a plain GPU count takes on `node`: whole free devices, or a slice of the fullest
    shared device that still fits it (lowest id on a tie), else of a fresh one: keeps whole
    devices whole for big requests."""
    shared: tuple[int, int] | None = None
    whole = 0
    if request.milli >= MILLI:
        whole = request.milli // MILLI
    elif request.milli > 0:
        fitting = [(free, device) for device, free in state.shared_free[node].items() if free >= request.milli]
        if fitting:
            device = min(fitting)[1]
        else:
            device = state.next_shared_id[node]
            state.next_shared_id[node] += 1
        shared = (device, request.milli)
    return Holding(node, whole, shared, request.cpu_milli, request.memory_mib)


def device_holding(state: ClusterState, key: PodKey, node: int, request: PodRequest, dra: DraState) -> Holding:
    """What `key` holds once DRA allocates its devices on `node`; the count view takes each
    GPU's share, never more than the GPU has left."""
    plan = dra.plan(node, request.claims, request.milli)
    if isinstance(plan, str):
        raise RuntimeError(f"allocate: {key} does not fit on node {state.nodes[node].name}: {plan}")
    shared = state.shared_free[node]
    parts = []
    for unit, milli in plan.parts:
        device = unit_device_id(unit)
        taken = min(milli, shared.get(device, MILLI))
        if taken:
            parts.append((device, taken))
    holding = Holding(node, 0, None, request.cpu_milli, request.memory_mib, parts=tuple(parts), dra=plan)
    state.dra_gpus[key] = holding.milli / MILLI
    return holding


def take_device_parts(state: ClusterState, key: PodKey, holding: Holding, devices: DraHolding, sign: int) -> None:
    """A DRA holding's devices allocated (`sign` 1) or given back (-1), and its GPU shares
    taken from or returned to the count view's devices. In a preemption search that cannot
    free claimed devices (`ClaimedDevicesKept`), a pod taken off keeps them, and putting it
    back takes nothing again; a pod placed in the search takes and gives back its own."""
    dra = state.dra
    assert dra is not None
    if dra.keep_devices:
        if sign < 0 and key not in dra.placed_in_what_if:
            dra.kept.add(key)
            return
        if sign > 0 and key in dra.kept:
            dra.kept.discard(key)
            return
        if sign > 0:
            dra.placed_in_what_if.add(key)
        else:
            dra.placed_in_what_if.discard(key)
    node = holding.node
    for device, milli in holding.parts:
        if sign > 0:
            share_taken(state, node, device, milli)
        else:
            share_given(state, node, device, milli)
    if sign > 0:
        dra.apply(node, devices)
    else:
        dra.unapply(node, devices)
