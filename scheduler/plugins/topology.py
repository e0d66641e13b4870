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

from scheduler.model.cluster import NO_SELECTOR, NodeSelector
from scheduler.state.cluster_state import ClusterState
from scheduler.state.place_index import PLACE_LEVELS


@dataclass(frozen=True, slots=True, init=False)
class Domain:
    level: str
    value: str
    nodes: list[int]
    label: str  # the label value shared by the nodes (value without a model prefix)
    models: tuple[str, ...]  # GPU models of its nodes
    # Its free GPUs are summed over its nodes: a node selector left out some nodes of its
    # place, so the state's running sums per (level, label, model) would count too many.
    by_nodes: bool
    # The ids of its places, one per model (`PlaceIndex.place_id`), when its level is one the
    # state keeps running sums for and `by_nodes` is False; empty otherwise.
    places: tuple[int, ...]

    # Written out: mypyc compiles it, the dataclasses module's would run interpreted (every
    # placement attempt of a topology-aware group lists its domains).
    def __init__(self, level: str, value: str, nodes: list[int], label: str = "", models: tuple[str, ...] = (),
                 by_nodes: bool = False, places: tuple[int, ...] = ()) -> None:
        object.__setattr__(self, "level", level)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "label", label)
        object.__setattr__(self, "models", models)
        object.__setattr__(self, "by_nodes", by_nodes)
        object.__setattr__(self, "places", places)


def domains(state: ClusterState, models: tuple[str, ...], level: str | None, *, per_model: bool = False,
            selector: NodeSelector = NO_SELECTOR) -> list[Domain]:
    """Candidate domains at `level` among nodes of accepted models that `selector` admits,
    by label value.

    `per_model` splits every domain by GPU model: a pod group whose pods share one DRA
    device claim gets devices of one class (one model) for all its pods. `level` None with
    `per_model` gives one domain per model."""
    restricted = bool(state.candidates.excluded(selector))
    if level is None and per_model and not restricted:  # one domain per model: the state already groups them
        return [Domain("gpu_model", m, state.nodes_by_model[m]) for m in sorted(state.candidate_models(models))]
    # Node labels never change during a replay, so the domains of a question are computed once.
    key = (models, level, per_model, selector)
    cached = state.domains_cache.get(key)
    if cached is None:
        cached = state.domains_cache[key] = _domains(state, models, level, per_model, selector, restricted)
    return cached


def _domains(state: ClusterState, models: tuple[str, ...], level: str | None, per_model: bool,
             selector: NodeSelector, restricted: bool) -> list[Domain]:
    by_value: dict[str, list[int]] = {}
    labels: dict[str, str] = {}
    for node in state.candidates.candidate_nodes(models, selector):
        spec = state.nodes[node]
        value = spec.label(level) if level else ""
        if value is None:
            continue
        label = value
        if per_model:
            value = f"{spec.gpu_model}/{value}" if level else spec.gpu_model
        by_value.setdefault(value, []).append(node)
        labels[value] = label
    level_name = level or "gpu_model"
    if level is None and per_model and restricted:
        level_name = "gpu_models"  # one model's admitted nodes: not the whole model, a node list
    domains = []
    for value, nodes in sorted(by_value.items()):
        models_of = tuple(sorted({state.nodes[n].gpu_model for n in nodes}))
        places: tuple[int, ...] = ()
        if level_name in PLACE_LEVELS and models_of and not restricted:
            ids = [state.places.place_id((level_name, labels[value], model)) for model in models_of]
            places = tuple(i for i in ids if i is not None)
        domains.append(Domain(level_name, value, nodes, labels[value], models_of, by_nodes=restricted, places=places))
    return domains


def domain_of(state: ClusterState, nodes: list[int], level: str | None, *, per_model: bool = False) -> str | None:
    """The one domain `nodes` share (as `domains` names it), or None if they span several."""
    values = set()
    for n in nodes:
        spec = state.nodes[n]
        value = spec.label(level) if level else ""
        values.add((f"{spec.gpu_model}/{value}" if level else spec.gpu_model) if per_model else value)
    return values.pop() if len(values) == 1 else None


def domain_free_milli(state: ClusterState, domain: Domain) -> int:
    """Free milli-GPUs on the domain's nodes, from the state's running sums where it has them."""
    if domain.by_nodes:
        return sum(state.nodes[n].gpus * 1000 - state.used_milli(n) for n in domain.nodes)
    if domain.level == "gpu_model":
        return state.free_milli_by_model[domain.value]
    if domain.places:
        return sum(state.places.free_milli(place) for place in domain.places)
    return sum(state.nodes[n].gpus * 1000 - state.used_milli(n) for n in domain.nodes)


def placement_rank(state: ClusterState, domain: Domain, placed: int, request_milli: int) -> tuple[int, int, str]:
    """Smaller is better: (−pods placed, free milli-GPUs left after placement, name)."""
    return (-placed, domain_free_milli(state, domain) - placed * request_milli, domain.value)


def best_possible_rank(state: ClusterState, domain: Domain, pods: int, request_milli: int) -> tuple[int, int, str]:
    """A rank no placement of `pods` pods in `domain` can beat: at most as many pods as its
    free GPUs hold (and as there are pods; pods of whole GPUs: as its nodes' whole free
    GPUs hold), leaving at least that much free. A placement that reaches the bound has
    exactly this rank; one that places fewer ranks worse."""
    most = pods if request_milli <= 0 else min(pods, domain_free_milli(state, domain) // request_milli)
    if request_milli % 1000 == 0 and most > 0 and domain.places:
        # Whole GPUs: each pod takes that many whole free GPUs of one node.
        whole = request_milli // 1000
        most = min(most, sum(count * (k // whole) for place in domain.places
                             for k, count in enumerate(state.places.whole_free_nodes(place))))
    return placement_rank(state, domain, most, request_milli)
