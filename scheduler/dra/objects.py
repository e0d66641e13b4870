"""Dynamic Resource Allocation objects as the replay keeps them (`resource.k8s.io/v1`).

ResourceSlices become `Device`s and `CounterSet`s per node; DeviceClasses, ResourceClaim
templates and claims become `DeviceClass` and `ClaimSpec`. Every quantity is an exact
`Fraction` of its base unit (bytes, counters), as `resource.Quantity` is exact upstream.
Field names follow `staging/src/k8s.io/api/resource/v1/types.go`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

EXACT_COUNT = "ExactCount"
ALL = "All"
ALLOCATION_MODES = (EXACT_COUNT, ALL)
# DeviceTaintEffect: only these two prevent allocation (`taintPreventsAllocation`); None and
# unknown effects are ignored.
PREVENTING_EFFECTS = ("NoSchedule", "NoExecute")
DEVICE_TAINT_EFFECTS = ("None", "NoSchedule", "NoExecute")
WHOLE_GPU_CLASS = "gpu-finops.whole-gpu"
"""The class of a plain GPU count on a DRA node: whole GPUs only, never a partition or a
share (`scheduler/dra/state.py`)."""

_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$")
_SUFFIX = {
    None: Fraction(1), "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30), "Ti": Fraction(2**40),
    "Pi": Fraction(2**50), "Ei": Fraction(2**60),
}


def parse_quantity(text: object) -> Fraction | None:
    """A Kubernetes `resource.Quantity` ("80Gi", "500m", "1e3", 7) as an exact Fraction, or
    None when it is not one (apimachinery `ParseQuantity`)."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return Fraction(text)
    if not isinstance(text, str):
        return None
    match = _QUANTITY.match(text.strip())
    if match is None:
        return None
    number, exponent, suffix = match.groups()
    value = Fraction(number)
    if exponent:
        power = int(exponent[1:])
        if abs(power) > 30:
            return None
        return value * Fraction(10) ** power
    return value * _SUFFIX[suffix]


class SelectorError(Exception):
    """A CEL selector that cannot be compiled or evaluated (the message: upstream's words)."""


Consumption = tuple[tuple[str, tuple[tuple[str, Fraction], ...]], ...]
"""A device's ConsumesCounters: (counter set, ((counter, amount), ...)) per entry."""


@dataclass(frozen=True, slots=True)
class Version:
    """A device attribute of kind `version` (a semantic version, "12.4.0"): CEL reads it as
    the Kubernetes library's semver."""

    text: str


@dataclass(frozen=True, slots=True)
class DeviceTaint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"


@dataclass(frozen=True, slots=True)
class DeviceToleration:
    """resource.k8s.io DeviceToleration: operator Equal (default) or Exists; an empty key
    with Exists tolerates every taint; an empty effect every effect (`ToleratesTaint`)."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: DeviceTaint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


def _ceil(value: Fraction) -> int:
    """`resource.Quantity.Value()`: the value as a whole number, rounded up."""
    return -((-value.numerator) // value.denominator)


@dataclass(frozen=True, slots=True)
class CapacityRequestPolicy:
    """A capacity's `requestPolicy` (KEP-5075): what a request consumes of a shared device
    (`calculateConsumedCapacity`) and which amounts it may consume (`violatesPolicy`)."""

    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] = ()  # ascending
    minimum: Fraction | None = None  # validRange
    maximum: Fraction | None = None
    step: Fraction | None = None

    def consumed(self, requested: Fraction | None, total: Fraction) -> Fraction:
        """What a request consumes: nothing asked, the default (else all of it); asked, rounded
        up into the valid range (`roundUpRange`: to min, then to min + a multiple of step) or
        to the first valid value at least as large (`roundUpValidValues`; above them all, as asked)."""
        if requested is None:
            return total if self.default is None else self.default
        if self.minimum is not None:
            if requested < self.minimum:
                return self.minimum
            if self.step is None:
                return requested
            step, start = _ceil(self.step), _ceil(self.minimum)
            steps = -((start - _ceil(requested)) // step)  # ceil((requested - min) / step), whole units
            return Fraction(start + step * steps)
        for value in self.valid_values:
            if requested <= value:
                return value
        return requested

    def violated_by(self, amount: Fraction) -> bool:
        """Whether consuming `amount` breaks the policy: the default never does; above the
        range's max or off its step grid does; a value not listed in validValues does."""
        if self.default is not None and amount == self.default:
            return False
        if self.minimum is not None:
            if self.maximum is not None and amount > self.maximum:
                return True
            return self.step is not None and (_ceil(amount) - _ceil(self.minimum)) % _ceil(self.step) != 0
        if self.valid_values:
            return amount not in self.valid_values
        return False


@dataclass(frozen=True, slots=True)
class Device:
    """One device of a ResourceSlice. `attributes` and `capacity` are keyed by their fully
    qualified name (`gpu.nvidia.com/productName`): an unqualified name in the slice gets the
    driver's domain, as upstream does."""

    name: str
    driver: str
    pool: str
    node: str
    attributes: tuple[tuple[str, object], ...] = ()
    capacity: tuple[tuple[str, Fraction], ...] = ()
    consumes: Consumption = ()  # (counter set, ((counter, amount), ...)) per ConsumesCounters entry
    taints: tuple[DeviceTaint, ...] = ()
    allow_multiple_allocations: bool = False
    # capacity name -> the requestPolicy's default (consumable capacity)
    capacity_defaults: tuple[tuple[str, Fraction], ...] = ()
    # capacity name -> its whole requestPolicy (default, validValues, validRange)
    capacity_policies: tuple[tuple[str, CapacityRequestPolicy], ...] = ()

    def policy_of(self, name: str) -> CapacityRequestPolicy | None:
        for key, policy in self.capacity_policies:
            if key == name:
                return policy
        return None

    @property
    def key(self) -> tuple[str, str, str]:
        """DeviceID: driver, pool, device."""
        return (self.driver, self.pool, self.name)

    def attribute(self, name: str) -> object | None:
        """The value of attribute `name` (fully qualified), None when the device has none."""
        for key, value in self.attributes:
            if key == name:
                return value
        return None

    def capacity_of(self, name: str) -> Fraction | None:
        for key, value in self.capacity:
            if key == name:
                return value
        return None


@dataclass(frozen=True, slots=True)
class CounterSet:
    """A SharedCounters entry of a pool: counters the pool's devices draw on (KEP-4815)."""

    driver: str
    pool: str
    name: str
    counters: tuple[tuple[str, Fraction], ...]


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...] = ()  # CEL expressions, all must be true


@dataclass(frozen=True, slots=True)
class Request:
    """An ExactDeviceRequest or a DeviceSubRequest (one alternative of firstAvailable)."""

    name: str
    device_class: str
    selectors: tuple[str, ...] = ()
    allocation_mode: str = EXACT_COUNT
    count: int = 1
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: tuple[tuple[str, Fraction], ...] = ()  # capacity.requests, fully qualified names
    # adminAccess: the device may be in use by other claims, and this allocation does not
    # make it in use (only an `exactly` request has the field)
    admin_access: bool = False


@dataclass(frozen=True, slots=True)
class DeviceConstraint:
    """A claim's `constraints[]` entry: every device allocated for the requests it names (all
    requests of the claim when `requests` is empty) has the attribute, with one value
    (`matchAttribute`) or pairwise different values (`distinctAttribute`, `distinct`)."""

    attribute: str  # a fully qualified name, `domain/id`
    requests: tuple[str, ...] = ()  # `request` or `request/subrequest`
    distinct: bool = False

    def applies_to(self, label: str) -> bool:
        """Whether a device for request `label` (`request` or `request/subrequest`) is in
        its set: named by its request, or by its subrequest (`matches`)."""
        if not self.requests:
            return True
        return label in self.requests or label.split("/", 1)[0] in self.requests


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """A claim's request: `exactly` one Request, or `first_available` alternatives in order."""

    name: str
    alternatives: tuple[Request, ...]  # one for `exactly`
    prioritized: bool = False  # true: firstAvailable

    def label(self, chosen: int) -> str:
        """The request's name as upstream reports it: `request/subrequest` for an alternative."""
        return f"{self.name}/{self.alternatives[chosen].name}" if self.prioritized else self.name


@dataclass(frozen=True, slots=True)
class ClaimSpec:
    """A ResourceClaim's (or a template's) device requests."""

    name: str
    requests: tuple[DeviceRequest, ...]
    kind: str = "ResourceClaimTemplate"
    constraints: tuple[DeviceConstraint, ...] = ()
    has_config: bool = False  # opaque `config` for the driver: the allocator does not read it


@dataclass(frozen=True, slots=True)
class PodClaims:
    """What one pod asks through DRA: claims made from its templates (one per pod) and its
    PodGroup's shared claim (one for the group: the same devices for every pod)."""

    group: str  # the workload (PodGroup) id: its shared claim is allocated once for it
    per_pod: tuple[ClaimSpec, ...] = ()
    shared: ClaimSpec | None = None


@dataclass(frozen=True, slots=True)
class DraInputs:
    """Everything the DRA files say: devices per node (in slice and device order, the order
    the allocator tries them), counter sets, classes, templates and claims by name."""

    devices: dict[str, tuple[Device, ...]] = field(default_factory=dict)
    counter_sets: dict[tuple[str, str, str], CounterSet] = field(default_factory=dict)
    classes: dict[str, DeviceClass] = field(default_factory=dict)
    templates: dict[str, ClaimSpec] = field(default_factory=dict)
    claims: dict[str, ClaimSpec] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.devices or self.classes or self.templates or self.claims)
