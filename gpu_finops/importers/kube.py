"""Kubernetes vocabulary shared by the importers: label keys, quantities, timestamps.

Label keys are the ones the upstream projects write (docs/importers.md lists each with its
source). Node labels are read in the order given: the first key a node carries wins.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

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

_SUFFIXES = {
    "": Decimal(1), "m": Decimal("0.001"), "k": Decimal(10) ** 3, "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9, "T": Decimal(10) ** 12, "P": Decimal(10) ** 15, "E": Decimal(10) ** 18,
    "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40, "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60,
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?)$")


def parse_quantity(value: Any) -> Decimal:
    """A Kubernetes quantity ("8", "500m", "64Gi", "1e3", or a number) as an exact Decimal.
    Raises ValueError for anything else."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"not a quantity: {value!r}")
    if isinstance(value, int | float):
        return Decimal(str(value))
    match = _QUANTITY.match(str(value).strip())
    if not match:
        raise ValueError(f"not a quantity: {value!r}")
    number, exponent, suffix = match.groups()
    try:
        result = Decimal(number) * (Decimal(10) ** int(exponent[1:]) if exponent else _SUFFIXES[suffix or ""])
    except InvalidOperation:
        raise ValueError(f"not a quantity: {value!r}") from None
    return result


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 API timestamp ("2026-03-02T10:04:05Z") as an aware UTC datetime; None when
    missing. Raises ValueError for text that is not a time."""
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        moment = value
    else:
        moment = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def text_map(value: Any) -> dict[str, str]:
    """Labels or annotations as a str → str dict (values that are not text are made text)."""
    if not isinstance(value, Mapping):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
