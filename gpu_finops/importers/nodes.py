"""A Node API object (``kubectl get nodes -o json``) → a row of cluster.csv, or a rejected row.

GPUs are ``status.allocatable["nvidia.com/gpu"]`` (else ``capacity``), CPU and memory the
allocatable amounts; the GPU model, zone, block, rack and pricing category come from node labels
(`gpu_finops.importers.kube` lists the keys, first found wins). A node without GPUs is not a
row of the cluster (the replay places GPU workloads only) and is listed as rejected with the
reason, like a GPU node that carries no GPU product label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from typing import Any

from gpu_finops.importers.documents import SourceObject
from gpu_finops.importers.kube import (
    CAPACITY_LABELS,
    GPU_RESOURCE,
    PRICING_BY_CAPACITY,
    ZONE_LABELS,
    first_label,
    parse_quantity,
    text_map,
)
from gpu_finops.importers.records import NodeRow, Rejected

_MIB = Decimal(2) ** 20


@dataclass(frozen=True)
class NodeLabels:
    """Which label keys name a node's GPU product, block and rack (first found wins)."""

    gpu_product: tuple[str, ...]
    block: tuple[str, ...]
    rack: tuple[str, ...]


def node_row(obj: SourceObject, keys: NodeLabels, dra: tuple[int, str] | None = None) -> NodeRow | Rejected:
    """`dra`: (GPUs, product) its ResourceSlices publish; they replace its `nvidia.com/gpu`
    (a DRA driver's node has none) and name the product when no label does."""
    def rejected(field: str, reason: str) -> Rejected:
        return Rejected(obj.source, obj.row, obj.kind or "Node", "", obj.name, field, reason)

    if not obj.name:
        return rejected("metadata.name", "Invalid: a node without a name")
    status = _mapping(obj.value, "status")
    labels = text_map(obj.metadata.get("labels"))
    amounts: dict[str, Decimal] = {}
    for resource in (GPU_RESOURCE, "cpu", "memory"):
        for where in ("allocatable", "capacity"):
            table = _mapping(status, where)
            if resource in table:
                try:
                    amounts[resource] = parse_quantity(table[resource])
                except ValueError:
                    return rejected(f"status.{where}.{resource}", f"Invalid: not a quantity: {str(table[resource])[:40]!r}")
                break
    gpus = amounts.get(GPU_RESOURCE, Decimal(0)) if dra is None else Decimal(dra[0])
    if gpus <= 0:
        return rejected(f"status.allocatable.{GPU_RESOURCE}", f"NoGpus: the node has no allocatable {GPU_RESOURCE}; "
                        "the replay models GPU nodes only")
    if gpus != gpus.to_integral_value():
        return rejected(f"status.allocatable.{GPU_RESOURCE}", f"Invalid: GPUs must be whole, got {gpus}")
    product = first_label(labels, keys.gpu_product)
    if product is None and dra is not None and dra[1]:
        product = ("productName", dra[1])
    if product is None:
        return rejected("metadata.labels", f"MissingGpuProduct: {gpus} GPUs but none of the labels "
                        f"{', '.join(keys.gpu_product)}; label the node or name the label with --gpu-product-label")
    capacity = first_label(labels, CAPACITY_LABELS)
    pricing = "Standard"
    if capacity is not None:
        pricing = PRICING_BY_CAPACITY.get(capacity[1].strip().lower(), "")
        if not pricing:
            return rejected(f"metadata.labels.{capacity[0]}",
                            f"Invalid: capacity type {capacity[1]!r} is not spot, on-demand or reserved")
    return NodeRow(
        node=obj.name, gpu_model=product[1], gpus=int(gpus),
        cpu_milli=_whole(amounts.get("cpu", Decimal(0)) * 1000),
        memory_mib=_whole(amounts.get("memory", Decimal(0)) / _MIB),
        zone=_value(labels, ZONE_LABELS), block=_value(labels, keys.block), rack=_value(labels, keys.rack),
        pricing_category=pricing, labels=labels,
    )


def _mapping(value: Any, key: str) -> Mapping[str, Any]:
    found = value.get(key) if isinstance(value, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _whole(amount: Decimal) -> int:
    return int(amount.to_integral_value(rounding=ROUND_FLOOR))


def _value(labels: Mapping[str, str], keys: tuple[str, ...]) -> str:
    found = first_label(labels, keys)
    return found[1] if found else ""


def node_attribute(row: NodeRow, level: str) -> str:
    """The value a replay's flavor label of ``level`` reads on this node."""
    values: dict[str, Any] = {"gpu_model": row.gpu_model, "zone": row.zone, "block": row.block,
                              "rack": row.rack, "node": row.node}
    return str(values.get(level, ""))
