"""Nodes and the cluster they form. Topology labels are plain strings (zone, block, rack)."""

from __future__ import annotations

from dataclasses import dataclass, field

PRICING_CATEGORIES = ("Standard", "Committed", "Dynamic")
TOPOLOGY_LEVELS = ("zone", "block", "rack", "node")


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    gpu_model: str
    gpus: int
    cpu_milli: int = 0  # 0: not modelled (no CPU constraint)
    memory_mib: int = 0  # 0: not modelled
    zone: str | None = None
    block: str | None = None
    rack: str | None = None
    pricing_category: str = "Standard"

    def label(self, level: str) -> str | None:
        """The node's value of a topology label; `node` is the node itself."""
        if level == "node":
            return self.name
        return {"zone": self.zone, "block": self.block, "rack": self.rack}.get(level)


@dataclass(frozen=True, slots=True)
class Cluster:
    nodes: tuple[Node, ...]
    gpu_models: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpu_models", frozenset(n.gpu_model for n in self.nodes if n.gpus))

    @property
    def total_gpus(self) -> int:
        return sum(n.gpus for n in self.nodes)

    def max_gpus_per_node(self, models: tuple[str, ...] = ()) -> int:
        return max((n.gpus for n in self.nodes if not models or n.gpu_model in models), default=0)
