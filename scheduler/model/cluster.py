"""Nodes and the cluster they form. Topology labels are plain strings (zone, block, rack).

A node's Kubernetes labels are its well-known attributes (`WELL_KNOWN_LABELS`: GPU product,
zone, block, rack, hostname, pricing category) plus any others its cluster file gives it
(`Node.labels`). Taints come from the Kueue ResourceFlavors whose nodeLabels the node
matches (`scheduler.admission.objects.taint_nodes`); a pod lands on a node only when the
node carries every label of the pod's `NodeSelector` and the pod tolerates every NoSchedule
and NoExecute taint of the node (kube-scheduler's NodeAffinity and TaintToleration filters).
"""

from __future__ import annotations

from dataclasses import dataclass, field

PRICING_CATEGORIES = ("Standard", "Committed", "Dynamic")
TOPOLOGY_LEVELS = ("zone", "block", "rack", "node")
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
HOSTNAME_LABEL = "kubernetes.io/hostname"
# Label keys that read a Node attribute instead of its free-form `labels`.
WELL_KNOWN_LABELS = {
    GPU_PRODUCT_LABEL: "gpu_model",
    "topology.kubernetes.io/zone": "zone",
    "gpu-finops/block": "block",
    "gpu-finops/rack": "rack",
    HOSTNAME_LABEL: "name",
    "gpu-finops/pricing-category": "pricing_category",
}
# The label of each topology level of the kube-side topology plugin (`plugins/topology`).
LEVEL_LABELS = {"zone": "topology.kubernetes.io/zone", "block": "gpu-finops/block", "rack": "gpu-finops/rack",
                "node": HOSTNAME_LABEL}
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_FILTERING_EFFECTS = ("NoSchedule", "NoExecute")  # PreferNoSchedule only scores


@dataclass(frozen=True, slots=True, order=True)
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"

    @property
    def filters(self) -> bool:
        """kube-scheduler's TaintToleration filter reads NoSchedule and NoExecute only."""
        return self.effect in _FILTERING_EFFECTS

    def __str__(self) -> str:  # corev1.Taint.ToString: key=value:effect
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True, order=True)
class Toleration:
    """corev1.Toleration: operator Equal (key and value match) or Exists (key matches; an
    empty key tolerates every taint); an empty effect tolerates every effect."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:  # corev1 Toleration.ToleratesTaint
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


def untolerated(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> Taint | None:
    """The first NoSchedule/NoExecute taint no toleration tolerates (FindMatchingUntoleratedTaint)."""
    for taint in taints:
        if taint.filters and not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """What a pod asks of a node beyond its resources: labels the node must carry (a
    nodeSelector: every pair must match) and the tolerations the pod has. Canonical (sorted
    pairs, sorted tolerations), so equal selectors are equal values: it is part of the pod
    request and of the queue's `GpuShape`."""

    labels: tuple[tuple[str, str], ...] = ()
    tolerations: tuple[Toleration, ...] = ()

    # Written out, as the dataclasses module would generate them (the same values): mypyc
    # compiles these, while the generated ones run interpreted, and the placement queue hashes
    # a selector into every GpuShape it makes.
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodeSelector):
            return NotImplemented
        return self.labels == other.labels and self.tolerations == other.tolerations

    def __hash__(self) -> int:
        return hash((self.labels, self.tolerations))

    @staticmethod
    def of(labels: dict[str, str] | tuple[tuple[str, str], ...] = (), tolerations: tuple[Toleration, ...] = ()) -> NodeSelector:
        pairs = labels.items() if isinstance(labels, dict) else labels
        if not pairs and not tolerations:
            return NO_SELECTOR  # the one empty selector: placement's fast paths compare by identity
        return NodeSelector(tuple(sorted(pairs)), tuple(sorted(set(tolerations))))

    def with_labels(self, labels: dict[str, str]) -> NodeSelector:
        """This selector with `labels` added (a later value for a key replaces the earlier)."""
        merged = dict(self.labels)
        merged.update(labels)
        return NodeSelector(tuple(sorted(merged.items())), self.tolerations)

    def selects(self, node: Node) -> bool:
        return all(node.label_value(key) == value for key, value in self.labels)

    def admits(self, node: Node) -> str | None:
        """None when a pod with this selector may run on `node`; else kube's reason."""
        if not self.selects(node):
            return NODE_AFFINITY_MISMATCH
        taint = untolerated(node.taints, self.tolerations)
        if taint is not None:
            return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
        return None


NODE_AFFINITY_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
NO_SELECTOR = NodeSelector()


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
    labels: tuple[tuple[str, str], ...] = ()  # other Kubernetes labels, sorted (key, value)
    taints: tuple[Taint, ...] = ()  # from the ResourceFlavors it matches

    def label(self, level: str) -> str | None:
        """The node's value of a topology label; `node` is the node itself."""
        if level == "node":
            return self.name
        return {"zone": self.zone, "block": self.block, "rack": self.rack}.get(level)

    def label_value(self, key: str) -> str | None:
        """The node's value of Kubernetes label `key` (None: the node lacks it)."""
        attribute = WELL_KNOWN_LABELS.get(key)
        if attribute is not None:
            return getattr(self, attribute) or None
        for label, value in self.labels:
            if label == key:
                return value
        return None


@dataclass(frozen=True, slots=True)
class Cluster:
    nodes: tuple[Node, ...]
    gpu_models: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpu_models", frozenset(n.gpu_model for n in self.nodes if n.gpus))

    @property
    def total_gpus(self) -> int:
        return sum(n.gpus for n in self.nodes)

    @property
    def tainted(self) -> bool:
        return any(n.taints for n in self.nodes)

    def max_gpus_per_node(self, models: tuple[str, ...] = ()) -> int:
        return max((n.gpus for n in self.nodes if not models or n.gpu_model in models), default=0)
