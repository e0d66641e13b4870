"""Kubernetes vocabulary shared by the importers: label keys, quantities, timestamps.

Label keys are the ones the upstream projects write (docs/importers.md lists each with its
source). Node labels are read in the order given: the first key a node carries wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from scheduler.admission.manifests.quantities import parse_quantity as bounded_quantity

GPU_RESOURCE = "nvidia.com/gpu"

# --- node labels -------------------------------------------------------------------------------

# The GPU product a node carries: NVIDIA GPU feature discovery, GKE, EKS/Karpenter.
GPU_PRODUCT_LABELS = (
    "nvidia.com/gpu.product",
    "cloud.google.com/gke-accelerator",
    "k8s.amazonaws.com/accelerator",
    "karpenter.k8s.aws/instance-gpu-name",
)
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
# Network blocks and racks, largest first within each level: the project's own labels, GKE
# (block / sub-block), AWS (network node layers 2 and 3), the Kueue documentation's examples,
# NVIDIA's NVLink clique (a GB200 rack).
BLOCK_LABELS = (
    "gpu-finops/block",
    "cloud.google.com/gce-topology-block",
    "topology.k8s.aws/network-node-layer-2",
    "cloud.provider.com/topology-block",
)
RACK_LABELS = (
    "gpu-finops/rack",
    "cloud.google.com/gce-topology-subblock",
    "topology.k8s.aws/network-node-layer-3",
    "cloud.provider.com/topology-rack",
    "nvidia.com/gpu.clique",
)
HOSTNAME_LABEL = "kubernetes.io/hostname"
# How a node's GPUs are bought → FOCUS PricingCategory. Values are compared case-insensitively.
CAPACITY_LABELS = (
    "gpu-finops/pricing-category",
    "karpenter.sh/capacity-type",
    "eks.amazonaws.com/capacityType",
    "cloud.google.com/gke-spot",
    "cloud.google.com/gke-preemptible",
    "kubernetes.azure.com/scalesetpriority",
    "node.kubernetes.io/lifecycle",
)
PRICING_BY_CAPACITY = {
    "standard": "Standard", "committed": "Committed", "dynamic": "Dynamic",
    "spot": "Dynamic", "preemptible": "Dynamic", "true": "Dynamic",  # gke-spot: "true"
    "on-demand": "Standard", "on_demand": "Standard", "ondemand": "Standard", "regular": "Standard",
    "false": "Standard", "normal": "Standard",
    "reserved": "Committed", "capacity_block": "Committed", "capacity-block": "Committed",
}

# The replay's names for topology levels and the node labels its Kueue flavors select on.
SIM_LABEL_OF_LEVEL = {
    "gpu_model": "nvidia.com/gpu.product",
    "zone": "topology.kubernetes.io/zone",
    "block": "gpu-finops/block",
    "rack": "gpu-finops/rack",
    "node": HOSTNAME_LABEL,
}


def level_of_label(key: str, *, block_labels: tuple[str, ...] = BLOCK_LABELS,
                   rack_labels: tuple[str, ...] = RACK_LABELS) -> str | None:
    """The replay's topology level (or ``gpu_model``) a node label key stands for, if any."""
    if key in GPU_PRODUCT_LABELS:
        return "gpu_model"
    if key in ZONE_LABELS:
        return "zone"
    if key in block_labels:
        return "block"
    if key in rack_labels:
        return "rack"
    if key == HOSTNAME_LABEL:
        return "node"
    return None


def first_label(labels: Mapping[str, str], keys: tuple[str, ...]) -> tuple[str, str] | None:
    """(key, value) of the first of ``keys`` that ``labels`` has with a non-empty value."""
    for key in keys:
        value = labels.get(key)
        if value not in (None, ""):
            return key, str(value)
    return None


# --- values --------------------------------------------------------------------------------------

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(2200, 1, 1, tzinfo=UTC)
"""The calendar an import's times must lie in (``EARLIEST`` included, ``LATEST`` not): from
the Unix epoch (no Kubernetes object is older) to well before the year 2262 that a run's
nanosecond timestamps reach; a time outside it makes its object a rejected row. Within it,
`gpu_finops.importers.calendar` keeps an import to the cluster's own years."""
MAX_QUANTITY = Decimal(2**63 - 1)
"""A quantity's value at most, as Kubernetes' int64 ``Quantity.Value()`` holds it: 8 EiB of
memory, 9.2 x 10^18 GPUs. Each field has a tighter bound where it is read (a pod's GPUs are a
32-bit integer); this one stops 1e400 and 5,000-digit numbers before any arithmetic."""


def parse_quantity(value: Any) -> Decimal:
    """A Kubernetes quantity ("8", "500m", "64Gi", "1e3", or a number) as an exact Decimal,
    read by the replay's own parser (`scheduler.admission.manifests.quantities`). Raises
    ValueError for anything else: NaN and infinities, an exponent past any bound
    (``1e9999999``), a value above `MAX_QUANTITY` (``1e400``, 5,000 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_QUANTITY:
        raise ValueError(f"more than {MAX_QUANTITY:,} units")  # checked before the 4,300-digit str() limit
    amount = bounded_quantity(value)  # NaN, infinities and unbounded exponents are refused there
    if abs(amount) > MAX_QUANTITY:
        raise ValueError(f"more than {MAX_QUANTITY:,} units")
    return amount


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 API timestamp ("2026-03-02T10:04:05Z") as an aware UTC datetime; None when
    missing. Raises ValueError for text that is not a time, and for a time outside the
    import's calendar (`EARLIEST` to `LATEST`: a year-1 or year-9999 time)."""
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        moment = value
    else:
        text = str(value).strip()
        if len(text) > 64:
            raise ValueError("not a time")
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
            moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        except OverflowError:  # 0001-01-01T00:00+14:00 is before year 1 in UTC
            raise ValueError(f"outside the years {EARLIEST.year}-{LATEST.year - 1}") from None
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    if not EARLIEST <= moment < LATEST:
        raise ValueError(f"outside the years {EARLIEST.year}-{LATEST.year - 1}")
    return moment


def unix_time(seconds: float) -> datetime:
    """Unix seconds (a Prometheus sample) as a UTC datetime; ValueError outside the calendar."""
    if not EARLIEST.timestamp() <= seconds < LATEST.timestamp():  # also False for NaN
        raise ValueError(f"outside the years {EARLIEST.year}-{LATEST.year - 1}")
    return datetime.fromtimestamp(seconds, UTC)


def text_map(value: Any) -> dict[str, str]:
    """Labels or annotations as a str → str dict (values that are not text are made text)."""
    if not isinstance(value, Mapping):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
