"""Topology-aware placement of a pod group (KEP-5732 shape, our own code).

A group may require or prefer that all its pods share one value of a node label (zone,
block, rack). Placement generates one candidate per domain (the nodes with that value),
tries the group's placement restricted to each, and scores the feasible ones: more pods
placed first (PodGroupPodsCount), then the tightest fit — fewest free GPUs left in the
domain afterwards, which keeps big domains whole for big gangs — then the domain name, so
the choice is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.state import ClusterState


@dataclass(frozen=True, slots=True)
class Domain:
    level: str
    value: str
    nodes: list[int]


def domains(state: ClusterState, models: tuple[str, ...], level: str) -> list[Domain]:
    """Candidate domains at `level` among nodes of accepted models, by label value."""
    by_value: dict[str, list[int]] = {}
    for node in state.candidate_nodes(models):
        value = state.nodes[node].label(level)
        if value is not None:
            by_value.setdefault(value, []).append(node)
    return [Domain(level, value, nodes) for value, nodes in sorted(by_value.items())]


def domain_of(state: ClusterState, nodes: list[int], level: str) -> str | None:
    """The one domain `nodes` share at `level`, or None if they span several."""
    values = {state.nodes[n].label(level) for n in nodes}
    return values.pop() if len(values) == 1 else None


def placement_rank(state: ClusterState, domain: Domain, placed: int, request_milli: int) -> tuple[int, int, str]:
    """Smaller is better: (−pods placed, free milli-GPUs left after placement, name)."""
    free_after = sum(state.nodes[n].gpus * 1000 - state.used_milli(n) for n in domain.nodes) - placed * request_milli
    return (-placed, free_after, domain.value)
