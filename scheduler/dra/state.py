"""Which devices are allocated on each node, and the DynamicResources filter over them.

A node with ResourceSlices is a DRA node. Its GPUs (the count view of `ClusterState`) are
its *units*: every shared counter set of its pools is one physical GPU (its partitions draw on
it), and every device that consumes no counters is one. A device's share of its unit, in
milli-GPUs, is what the count view, the event log and the cost see:

- an exclusive device that consumes counters: the largest fraction of any counter of its
  set it consumes (a MIG 1g.10gb slice of an 80 GB GPU with 8 memory slices and 7 compute
  slices takes max(1/8, 1/7) = 142 milli-GPUs, rounded down), 1000 when it consumes all;
- a device shared by capacity (`allowMultipleAllocations`): the largest fraction of any of
  its capacities a claim takes;
- any other device: 1000 (one whole GPU).

Shares on one unit never add past 1000: the count view takes what is left. A device
allocated with admin access is no share at all: it stays free for (or with) its user.

Every pod on a DRA node goes through the allocator: a plain GPU count is a claim for that
many whole units (`WHOLE_GPU_CLASS`), so a MIG slice and a whole-GPU pod exclude each other
through the same counters. A PodGroup's shared claim is allocated once, by the first pod
placed, and every other pod of the group uses the same devices (on their node); it is
deallocated when the last pod of the group holding it lets go.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from scheduler.dra.allocator import Allocator, CounterKey, Matcher, Pick
from scheduler.dra.objects import (
    EXACT_COUNT,
    WHOLE_GPU_CLASS,
    ClaimSpec,
    CounterSet,
    Device,
    DeviceClass,
    DeviceRequest,
    PodClaims,
    Request,
)

MILLI = 1000


def unit_device_id(unit: int) -> int:
    """The count view's device id of GPU unit `unit` on a DRA node: negative, so never one of
    the ids `ClusterState` gives devices shared by fractional counts."""
    return -1 - unit


@dataclass(frozen=True, slots=True)
class DraHolding:
    """What one pod holds through DRA on its node."""

    picks: tuple[Pick, ...]  # devices of its own claims
    shared_group: str | None  # the group whose shared claim it uses
    allocated_shared: bool  # it allocated the shared claim (`shared_picks`)
    parts: tuple[tuple[int, int], ...]  # (unit, milli-GPUs) it takes in the count view
    shared_picks: tuple[Pick, ...] = ()  # the shared claim's devices, when it allocated them
    # the ResourceClaim it shares (its name): pods of any workload naming it use its devices
    shared_claim: str | None = None


@dataclass(slots=True)
class NodeDevices:
    """One DRA node: its devices, units and counters, and what is allocated now."""

    devices: tuple[Device, ...]
    unit_of: tuple[int, ...]
    units: int
    whole: tuple[bool, ...]
    totals: dict[CounterKey, dict[str, Fraction]]
    used: set[int] = field(default_factory=set)
    capacity: dict[int, dict[str, Fraction]] = field(default_factory=dict)
    consumed: dict[CounterKey, dict[str, Fraction]] = field(default_factory=dict)

    def in_use(self, device: int) -> bool:
        return device in self.used

    def is_whole(self, device: int) -> bool:
        return self.whole[device]

    def capacity_used(self, device: int) -> dict[str, Fraction]:
        return self.capacity.get(device, {})

    def counters_left(self, key: CounterKey) -> dict[str, Fraction] | None:
        total = self.totals.get(key)
        if total is None:
            return None
        consumed = self.consumed.get(key, {})
        return {name: amount - consumed.get(name, Fraction(0)) for name, amount in total.items()}


def node_devices(devices: tuple[Device, ...], counter_sets: dict[CounterKey, CounterSet]) -> NodeDevices:
    """A node's devices with their units (docs above)."""
    pools = {(d.driver, d.pool) for d in devices}
    set_keys = [key for key in counter_sets if (key[0], key[1]) in pools]
    unit_of_set = {key: number for number, key in enumerate(set_keys)}
    units = len(set_keys)
    unit_of: list[int] = []
    whole: list[bool] = []
    for device in devices:
        if device.consumes:
            key = (device.driver, device.pool, device.consumes[0][0])
            unit_of.append(unit_of_set.get(key, 0))
            total = dict(counter_sets[key].counters) if key in counter_sets else {}
            consumed = dict(device.consumes[0][1])
            whole.append(not device.allow_multiple_allocations and bool(total)
                         and all(consumed.get(name, 0) >= amount for name, amount in total.items()))
        else:
            unit_of.append(units)
            units += 1
            whole.append(not device.allow_multiple_allocations)
    totals = {key: dict(counter_sets[key].counters) for key in set_keys}
    return NodeDevices(devices, tuple(unit_of), units, tuple(whole), totals)


@dataclass(slots=True)
class SharedAllocation:
    node: int
    picks: tuple[Pick, ...]
    holders: int


class DraState:
    """DRA nodes (by node index) and the claims allocated on them; `shared`: each allocated
    ResourceClaim (by its name), whichever workloads' pods use it."""

    def __init__(self, nodes: list[NodeDevices | None], classes: dict[str, DeviceClass], matcher: Matcher) -> None:
        self.nodes = nodes
        self.classes = dict(classes)
        self.classes[WHOLE_GPU_CLASS] = DeviceClass(WHOLE_GPU_CLASS)
        self.matcher = matcher
        self.shared: dict[str, SharedAllocation] = {}
        self._count_claims: dict[int, tuple[ClaimSpec, ...]] = {}
        # Preemption's what-ifs while claimed devices cannot be freed (`ClaimedDevicesKept`):
        # pods taken off keep their devices (`kept`); pods placed in the what-if take theirs.
        self.keep_devices = False
        self.kept: set[tuple[str, int]] = set()
        self.placed_in_what_if: set[tuple[str, int]] = set()

    def fresh(self) -> DraState:
        """The same devices and classes with nothing allocated (a what-if view's start)."""
        nodes = [None if n is None else NodeDevices(n.devices, n.unit_of, n.units, n.whole, n.totals)
                 for n in self.nodes]
        return DraState(nodes, self.classes, self.matcher)

    def involves(self, node: int, claims: PodClaims | None) -> bool:
        """Whether placing a pod with `claims` on `node` goes through DRA."""
        return claims is not None or self.nodes[node] is not None

    def count_claim(self, whole_gpus: int) -> tuple[ClaimSpec, ...]:
        """A plain count of whole GPUs as a claim (`WHOLE_GPU_CLASS`)."""
        claims = self._count_claims.get(whole_gpus)
        if claims is None:
            request = Request("gpus", WHOLE_GPU_CLASS, (), EXACT_COUNT, whole_gpus)
            claims = (ClaimSpec("gpus", (DeviceRequest("gpus", (request,)),), "count"),)
            self._count_claims[whole_gpus] = claims
        return claims

    def plan(self, node: int, claims: PodClaims | None, milli: int) -> DraHolding | str:
        """The devices a pod gets on `node`, or why not (upstream's words). `milli`: the
        pod's GPU count when it has no claims. Raises `AllocationFailed` (unknown class,
        selector error)."""
        devices = self.nodes[node]
        if claims is None:
            if milli % MILLI:
                return FRACTION_ON_DRA_NODE
            to_allocate = self.count_claim(milli // MILLI) if milli else ()
            group = None
        else:
            group = claims.group if claims.shared is not None else None
            claim_name = claims.shared.name if claims.shared is not None else None
            shared = self.shared.get(claim_name) if claim_name is not None else None
            if shared is not None and shared.node != node:
                return CLAIM_NOT_AVAILABLE
            to_allocate = claims.per_pod
            if claims.shared is not None and shared is None:
                to_allocate = (*to_allocate, claims.shared)
        if not to_allocate:
            return DraHolding((), group, False, (), (), claims.shared.name if claims and claims.shared else None)
        if devices is None:
            return CANNOT_ALLOCATE
        allocator = Allocator(devices, self.classes, self.matcher)
        picks = allocator.allocate(to_allocate)
        if picks is None:
            return CANNOT_ALLOCATE
        claim_name = claims.shared.name if claims is not None and claims.shared is not None else None
        allocated_shared = claim_name is not None and claim_name not in self.shared
        own = len(claims.per_pod) if claims is not None else len(to_allocate)
        return DraHolding(tuple(p for p in picks if p.claim < own), group, allocated_shared, _parts(devices, picks),
                          tuple(p for p in picks if p.claim >= own), claim_name)

    def apply(self, node: int, holding: DraHolding) -> None:
        devices = self.nodes[node]
        if devices is not None:
            for pick in holding.picks:
                _use(devices, pick, 1)
        if holding.shared_claim is not None:
            shared = self.shared.get(holding.shared_claim)
            if shared is None:  # its first pod allocates the shared claim
                if devices is not None:
                    for pick in holding.shared_picks:
                        _use(devices, pick, 1)
                shared = self.shared[holding.shared_claim] = SharedAllocation(node, holding.shared_picks, 0)
            shared.holders += 1

    def unapply(self, node: int, holding: DraHolding) -> None:
        devices = self.nodes[node]
        if devices is not None:
            for pick in reversed(holding.picks):
                _use(devices, pick, -1)
        if holding.shared_claim is not None:
            shared = self.shared[holding.shared_claim]
            shared.holders -= 1
            if shared.holders == 0:  # its last pod lets go: the claim is deallocated
                if devices is not None:
                    for pick in reversed(shared.picks):
                        _use(devices, pick, -1)
                del self.shared[holding.shared_claim]


class ClaimedDevicesKept:
    """A preemption search in which victims keep their claimed devices: DynamicResources has
    no PreFilterExtensions (`dynamicresources.go`), so preemption's simulation of removing a
    victim leaves its claims allocated, whatever the preemptor asks for (a plain count on a
    DRA node too), until KEP-5690 (`keep` False: `dra_preemption`, or no DRA inputs)."""

    def __init__(self, dra: DraState | None, keep: bool) -> None:
        self.dra = dra if keep else None

    def __enter__(self) -> None:
        if self.dra is not None:
            self.dra.keep_devices = True

    def __exit__(self, *exc: object) -> None:
        if self.dra is not None:
            self.dra.keep_devices = False
            self.dra.kept.clear()
            self.dra.placed_in_what_if.clear()


CANNOT_ALLOCATE = "cannot allocate all claims"
CLAIM_NOT_AVAILABLE = "resourceclaim not available on the node"
FRACTION_ON_DRA_NODE = "a fraction of a GPU as a count cannot be allocated on a node whose GPUs are published as devices"


def _use(devices: NodeDevices, pick: Pick, sign: int) -> None:
    """Allocate (`sign` 1) or give back (-1) one picked device. A device allocated with
    admin access is not considered allocated (upstream's allocated state skips it)."""
    if pick.admin_access:
        return
    device = devices.devices[pick.device]
    if device.allow_multiple_allocations:
        held = devices.capacity.setdefault(pick.device, {})
        first = not any(held.values())
        for name, amount in pick.capacity:
            held[name] = held.get(name, Fraction(0)) + sign * amount
        last = not any(held.values())
        if last:
            del devices.capacity[pick.device]
        # A shared device's counters are consumed with its first share, given back with its last.
        if not ((sign > 0 and first) or (sign < 0 and last)):
            return
    elif sign > 0:
        devices.used.add(pick.device)
    else:
        devices.used.discard(pick.device)
    for set_name, counters in device.consumes:
        consumed = devices.consumed.setdefault((device.driver, device.pool, set_name), {})
        for name, amount in counters:
            consumed[name] = consumed.get(name, Fraction(0)) + sign * amount


def device_share(devices: NodeDevices, pick: Pick) -> int:
    """The milli-GPUs of its unit one picked device stands for (module docstring)."""
    device = devices.devices[pick.device]
    if device.allow_multiple_allocations:
        shares = [amount / capacity for name, amount in pick.capacity
                  if (capacity := device.capacity_of(name))]
        return max(1, min(MILLI, int(max(shares, default=Fraction(1)) * MILLI)))
    if devices.whole[pick.device] or not device.consumes:
        return MILLI
    set_name, counters = device.consumes[0]
    totals = devices.totals.get((device.driver, device.pool, set_name), {})
    fractions = [amount / totals[name] for name, amount in counters if totals.get(name)]
    return max(1, min(MILLI, int(max(fractions, default=Fraction(1)) * MILLI)))


def _parts(devices: NodeDevices, picks: list[Pick]) -> tuple[tuple[int, int], ...]:
    by_unit: dict[int, int] = {}
    for pick in picks:
        if pick.admin_access:
            continue  # the device's GPU is someone else's: counted (and priced) once, for them
        unit = devices.unit_of[pick.device]
        by_unit[unit] = min(MILLI, by_unit.get(unit, 0) + device_share(devices, pick))
    return tuple(sorted(by_unit.items()))
