"""The structured-parameters allocator for one node: which devices satisfy a pod's claims.

Follows `staging/src/k8s.io/dynamic-resource-allocation/structured/internal/experimental/
allocator_experimental.go` (the variant with partitionable devices, consumable capacity and
device taints):

- claims, then their requests, in order; a `firstAvailable` request takes its first
  alternative (subrequest) that can be allocated together with everything else (`allocateOne`);
- `ExactCount` takes `count` devices, trying devices in slice and device order and
  backtracking when a later device or request cannot be satisfied (a device shared by
  capacity is never in use, so one request may take several shares of it); `All` takes every
  device that matches, and fails when there is none or one of them cannot be allocated;
- a device is selectable when every selector of its DeviceClass and of the request is
  true (`isSelectable`), and, for a request with capacity, it has the capacity left
  (`CmpRequestOverCapacity`);
- it is allocatable when no claim holds it (unless `allowMultipleAllocations`; an
  `adminAccess` request only needs that its own claim does not hold it), its counter
  sets have the counters it consumes left (`checkAvailableCounters`; a multi-allocatable
  device whose capacity is already in use consumes none again), every NoSchedule or
  NoExecute taint is tolerated by the request (`taintPreventsAllocation`), and every
  constraint of its claim that applies to the request accepts it (`matchAttribute`: the
  attribute, of the same type and value as the set's first device; `distinctAttribute`:
  the attribute, with a value no device of the set has); a constraint refusing a device
  an `All` request must have is upstream's error (`allocateDevice`, `must`).

Devices of one request are tried as combinations in index order, not as upstream's
permutations: counters and capacity add up the same in any order, and a constraint accepts a
set of devices whatever the order they join it in, so the first solution found is the same,
and a request that cannot be met is refused without n! retries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

from scheduler.dra.objects import (
    ALL,
    PREVENTING_EFFECTS,
    WHOLE_GPU_CLASS,
    ClaimSpec,
    Consumption,
    Device,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    Request,
    SelectorError,
)

CounterKey = tuple[str, str, str]  # driver, pool, counter set
ALLOCATION_RESULTS_MAX = 32  # resource.k8s.io/v1 AllocationResultsMaxSize: devices one claim may get


class Matcher(Protocol):
    def matches(self, expression: str, device: Device) -> bool: ...


@dataclass(frozen=True, slots=True)
class Pick:
    """One device given to one request of one claim; `capacity`: what a shared device gives
    this claim (consumable capacity), empty for an exclusive device."""

    claim: int
    request: str  # upstream's request name: `request` or `request/subrequest`
    device: int  # index in the node's devices
    capacity: tuple[tuple[str, Fraction], ...] = ()
    admin_access: bool = False  # allocated with adminAccess: the device is not made in use


class _ConstraintSet:
    """One constraint of a claim while devices are tried: the typed attribute values of the
    devices in its set (upstream's `matchAttributeConstraint`, `distinctAttributeConstraint`).
    `add` and `remove` are called in stack order, as the search backtracks."""

    __slots__ = ("constraint", "values")

    def __init__(self, constraint: DeviceConstraint) -> None:
        self.constraint = constraint
        self.values: list[tuple[str, object]] = []

    def add(self, label: str, device: Device) -> bool:
        if not self.constraint.applies_to(label):
            return True
        value = device.attribute(self.constraint.attribute)
        if value is None:
            return False  # "Constraint not satisfied, attribute not set"
        typed = (type(value).__name__, value)  # an int never equals a bool or a string
        if self.constraint.distinct:
            if typed in self.values:
                return False
        elif self.values and self.values[0] != typed:
            return False
        self.values.append(typed)
        return True

    def remove(self, label: str) -> None:
        if self.constraint.applies_to(label):
            self.values.pop()


class AllocationFailed(Exception):
    """A claim refers to something that does not exist or a selector cannot be decided:
    upstream's allocator returns an error (the pod cannot be scheduled on any node)."""


class NodeView(Protocol):
    """What the allocator reads of one node's devices and their current use."""

    devices: tuple[Device, ...]

    def in_use(self, device: int) -> bool: ...

    def is_whole(self, device: int) -> bool: ...

    def capacity_used(self, device: int) -> dict[str, Fraction]: ...

    def counters_left(self, key: CounterKey) -> dict[str, Fraction] | None: ...


class Allocator:
    """Allocates the claims of one pod on one node (`allocate`)."""

    def __init__(self, node: NodeView, classes: dict[str, DeviceClass], matcher: Matcher) -> None:
        self.node = node
        self.classes = classes
        self.matcher = matcher
        self._taken: dict[int, set[int]] = {}  # device -> claims it is given to exclusively in this attempt
        self._capacity: dict[int, dict[str, Fraction]] = {}  # capacity given in this attempt
        self._counters: dict[CounterKey, dict[str, Fraction]] = {}  # counters consumed in this attempt
        self._picks: list[Pick] = []
        self._claims: tuple[ClaimSpec, ...] = ()
        self._constraints: list[list[_ConstraintSet]] = []  # per claim
        self._results: list[int] = []  # devices given to each claim in this attempt
        self._shared_devices = any(d.allow_multiple_allocations for d in node.devices)

    def allocate(self, claims: tuple[ClaimSpec, ...]) -> list[Pick] | None:
        """The devices for every request of `claims`, or None when they cannot all be
        allocated on this node. `AllocationFailed` for an unknown class or a selector error."""
        self._claims = claims
        self._constraints = [[_ConstraintSet(c) for c in claim.constraints] for claim in claims]
        self._results = [0] * len(claims)
        for index, claim in enumerate(claims):
            fewest = sum(min(a.count if a.allocation_mode != ALL else len(self._matching(index, a))
                             for a in request.alternatives) for request in claim.requests)
            if fewest > ALLOCATION_RESULTS_MAX:
                raise AllocationFailed(f"claim {claim.name}: number of requested devices {fewest} exceeds "
                                       f"the claim limit of {ALLOCATION_RESULTS_MAX}")
        slots: list[tuple[int, DeviceRequest]] = [(index, request) for index, claim in enumerate(claims)
                                                  for request in claim.requests]
        return list(self._picks) if self._solve(slots, 0) else None

    # -- the search ---------------------------------------------------------------------

    def _solve(self, slots: list[tuple[int, DeviceRequest]], position: int) -> bool:
        if position == len(slots):
            return True
        claim, request = slots[position]
        for choice, alternative in enumerate(request.alternatives):
            label = request.label(choice)
            if alternative.allocation_mode != ALL and self._results[claim] + alternative.count > ALLOCATION_RESULTS_MAX:
                continue  # errAllocationResultMaxSizeExceeded: the next alternative may need fewer
            if alternative.allocation_mode == ALL:
                if self._all(claim, label, alternative, slots, position):
                    return True
            elif self._exact(claim, label, alternative, alternative.count, 0, slots, position):
                return True
        return False

    def _exact(self, claim: int, label: str, request: Request, left: int, start: int,
               slots: list[tuple[int, DeviceRequest]], position: int) -> bool:
        if left == 0:
            return self._solve(slots, position + 1)
        devices = self.node.devices
        for index in range(start, len(devices)):
            if len(devices) - index < left and not self._shared_devices:
                return False
            if not self._selectable(claim, request, index) or not self._has_capacity(request, index):
                continue
            undo = self._take(claim, label, request, index)
            if undo is None:
                continue
            # A device shared by capacity is never in use: the request may take another share of it.
            again = index if devices[index].allow_multiple_allocations else index + 1
            if self._exact(claim, label, request, left - 1, again, slots, position):
                return True
            undo()
        return False

    def _all(self, claim: int, label: str, request: Request, slots: list[tuple[int, DeviceRequest]],
             position: int) -> bool:
        matching = self._matching(claim, request)
        if not matching:  # "At least one device is required for 'All' allocation mode."
            return False
        if self._results[claim] + len(matching) > ALLOCATION_RESULTS_MAX:
            return False
        undos: list[Callable[[], None]] = []
        for index in matching:
            undo = self._take(claim, label, request, index, must=True)
            if undo is None:
                break
            undos.append(undo)
        else:
            if self._solve(slots, position + 1):
                return True
        for undo in reversed(undos):
            undo()
        return False

    def _matching(self, claim: int, request: Request) -> list[int]:
        """The devices an `All` request takes: every selectable one with the capacity it asks."""
        return [i for i in range(len(self.node.devices))
                if self._selectable(claim, request, i) and self._has_capacity(request, i)]

    # -- one device ---------------------------------------------------------------------

    def _selectable(self, claim: int, request: Request, index: int) -> bool:
        """Every selector of the request's class, then of the request (`isSelectable`); a
        selector that cannot be decided is upstream's error, naming the class or the claim."""
        device = self.node.devices[index]
        if request.device_class == WHOLE_GPU_CLASS:  # a plain GPU count on a DRA node
            return self.node.is_whole(index)
        device_class = self.classes.get(request.device_class)
        if device_class is None:
            raise AllocationFailed(f"request {request.name}: device class {request.device_class} does not exist")
        for owner, selectors in ((f"class {device_class.name}", device_class.selectors),
                                 (f"claim {self._claims[claim].name}", request.selectors)):
            for number, expression in enumerate(selectors):
                try:
                    if not self.matcher.matches(expression, device):
                        return False
                except SelectorError as error:
                    raise AllocationFailed(f"{owner}: selector #{number}: {error}") from None
        return True

    def _wanted(self, request: Request, device: Device) -> tuple[tuple[str, Fraction], ...]:
        """What a request consumes of each capacity of a device: what it names, rounded up by
        the capacity's requestPolicy; else the policy's default, else all of it
        (`GetConsumedCapacityFromRequest`, `calculateConsumedCapacity`)."""
        asked = {self._qualified(name, device): amount for name, amount in request.capacity}
        defaults = dict(device.capacity_defaults)
        wanted = []
        for name, total in device.capacity:
            policy = device.policy_of(name)
            if policy is not None:
                wanted.append((name, policy.consumed(asked.get(name), total)))
            else:
                wanted.append((name, asked.get(name, defaults.get(name, total))))
        return tuple(wanted)

    @staticmethod
    def _qualified(name: str, device: Device) -> str:
        return name if "/" in name else f"{device.driver}/{name}"

    def _has_capacity(self, request: Request, index: int) -> bool:
        """`CmpRequestOverCapacity`: the request names no capacity the device lacks, and for
        each capacity what it consumes keeps to the requestPolicy and, added to what shares
        of the device hold (none for an exclusive device), fits the capacity."""
        device = self.node.devices[index]
        if any(device.capacity_of(self._qualified(name, device)) is None for name, _ in request.capacity):
            return False  # "some requested capacity has not been defined"
        used = self.node.capacity_used(index)
        pending = self._capacity.get(index, {})
        for name, amount in self._wanted(request, device):
            policy = device.policy_of(name)
            if policy is not None and policy.violated_by(amount):
                return False
            total = device.capacity_of(name) or Fraction(0)
            if used.get(name, 0) + pending.get(name, 0) + amount > total:
                return False
        return True

    def _take(self, claim: int, label: str, request: Request, index: int,
              must: bool = False) -> Callable[[], None] | None:
        """Allocate device `index` to the request for this attempt: an undo, or None. `must`:
        the request needs this very device (`All`), so a constraint refusing it is an error."""
        device = self.node.devices[index]
        multiple = device.allow_multiple_allocations
        holders = self._taken.get(index)
        if not multiple and request.admin_access:
            if holders and claim in holders:
                return None  # "Device in use in same claim"
        elif not multiple and (holders or self.node.in_use(index)):
            return None
        consumes: Consumption = device.consumes
        if multiple and (self.node.capacity_used(index) or index in self._capacity):
            consumes = ()  # its counters were consumed by its first share
        if not self._counters_fit(device, consumes):
            return None
        if any(t.effect in PREVENTING_EFFECTS and not any(tol.tolerates(t) for tol in request.tolerations)
               for t in device.taints):
            return None
        constraints = self._constraints[claim]
        for number, constraint in enumerate(constraints):
            if not constraint.add(label, device):
                for added in constraints[:number]:
                    added.remove(label)
                if must:
                    raise AllocationFailed(
                        f"claim {self._claims[claim].name}, request {request.name}: cannot add device "
                        f"{device.driver}/{device.pool}/{device.name} because a claim constraint would not be satisfied")
                return None
        self._add_counters(device, consumes, 1)
        capacity: tuple[tuple[str, Fraction], ...] = ()
        if multiple:
            capacity = self._wanted(request, device)
            pending = self._capacity.setdefault(index, {})
            for name, amount in capacity:
                pending[name] = pending.get(name, Fraction(0)) + amount
        else:
            self._taken.setdefault(index, set()).add(claim)
        self._picks.append(Pick(claim, label, index, capacity, request.admin_access))
        self._results[claim] += 1

        def undo() -> None:
            self._picks.pop()
            self._results[claim] -= 1
            for constraint in constraints:
                constraint.remove(label)
            self._add_counters(device, consumes, -1)
            if multiple:
                pending = self._capacity[index]
                for name, amount in capacity:
                    pending[name] -= amount
                if not any(pending.values()):
                    del self._capacity[index]
            else:
                self._taken[index].discard(claim)
                if not self._taken[index]:
                    del self._taken[index]
        return undo

    def _counters_fit(self, device: Device, consumes: Consumption) -> bool:
        for set_name, counters in consumes:
            key = (device.driver, device.pool, set_name)
            left = self.node.counters_left(key)
            if left is None:
                return False  # a counter set no slice declares: validation refuses it upstream
            pending = self._counters.get(key, {})
            for name, amount in counters:
                if left.get(name, Fraction(0)) - pending.get(name, Fraction(0)) < amount:
                    return False
        return True

    def _add_counters(self, device: Device, consumes: Consumption, sign: int) -> None:
        for set_name, counters in consumes:
            pending = self._counters.setdefault((device.driver, device.pool, set_name), {})
            for name, amount in counters:
                pending[name] = pending.get(name, Fraction(0)) + sign * amount
