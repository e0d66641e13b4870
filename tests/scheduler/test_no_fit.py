"""A node search that finds nothing, settled from the usage index (`framework/no_fit.py`),
against the search that calls every filter on every node.

Hypothesis draws clusters (GPU models and counts, CPU and memory modelled or not, labelled
pools), a random sequence of allocations and releases, and a request: where `settled_no_fit`
settles, `PartialSearch.run_plain` from any start finds no node, gives the same diagnosis
(reasons, unresolvable nodes, resources short of) and leaves the start where it was; where it
does not, the plain search finds a node.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.framework import no_fit
from scheduler.framework.node_search import Diagnosis, PartialSearch
from scheduler.model import Cluster, Node
from scheduler.model.cluster import NO_SELECTOR, NodeSelector
from scheduler.plugins.gpu_fit import GpuFit, NodeResourcesFit
from scheduler.plugins.scoring import LeastAllocated
from scheduler.state.cluster_state import ClusterState, PodRequest

MODELS = ("A100", "H100", "L4")
FUZZ = settings(max_examples=400, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

nodes = st.builds(
    lambda model, gpus, cpu, memory, pool: Node(
        name="n", gpu_model=model, gpus=gpus, cpu_milli=cpu, memory_mib=memory, labels=(("pool", pool),)),
    st.sampled_from(MODELS), st.sampled_from((0, 1, 2, 4, 8)), st.sampled_from((0, 4000, 32000)),
    st.sampled_from((0, 16384, 262144)), st.sampled_from(("x", "y")))
requests = st.builds(
    PodRequest, milli=st.sampled_from((1, 250, 500, 1000, 2000, 4000, 8000, 16000)),
    cpu_milli=st.sampled_from((0, 500, 4000, 16000)), memory_mib=st.sampled_from((0, 1024, 65536)),
    models=st.sampled_from(((), ("A100",), ("H100", "L4"), ("B200",))),
    selector=st.sampled_from((NO_SELECTOR, NodeSelector.of({"pool": "x"}))))


def _fits(state: ClusterState, request: PodRequest, node: int) -> bool:
    return all(plugin.filter(state, request, node).ok for plugin in (GpuFit(), NodeResourcesFit()))


def _explained(diagnosis: Diagnosis) -> tuple[object, ...]:
    return (diagnosis.message(), sorted(diagnosis.unresolvable), sorted(diagnosis.short_of))


@FUZZ
@given(st.lists(nodes, min_size=1, max_size=40), st.lists(st.tuples(st.integers(0, 10**6), requests), max_size=60),
       requests, st.integers(0, 10**6))
def test_a_settled_search_is_the_search_that_finds_nothing(drawn_nodes, operations, request, start_at):
    cluster = Cluster(tuple(replace(node, name=f"n{i}") for i, node in enumerate(drawn_nodes)))
    state = ClusterState(cluster)
    for step, (pick, pod) in enumerate(operations):  # allocate where it fits, else release a pod
        node = pick % len(cluster.nodes)
        if _fits(state, pod, node):
            state.allocate((f"w{step}", 0), node, pod)
        elif state.holdings:
            state.release(sorted(state.holdings)[pick % len(state.holdings)])
    filters = [GpuFit(), NodeResourcesFit()]
    assert no_fit.settles(filters, state, request)
    settled = no_fit.settled_no_fit(filters, state, request)
    start = start_at % len(cluster.nodes)
    feasible, diagnosis, next_start = PartialSearch(filters, [(LeastAllocated(), 1.0)], 0).run_plain(state, request, start)
    if settled is None:
        assert feasible  # a node passed the filters
    else:
        assert (feasible, next_start) == ([], start)
        assert _explained(settled) == _explained(diagnosis)


def test_it_settles_only_where_gpu_fit_decides_first():
    """NodeResourcesFit first would give a CPU-short node's reason where the index counts
    GPUs; a pod without GPUs passes GpuFit everywhere."""
    state = ClusterState(Cluster((Node("n0", "A100", 8),)))
    assert no_fit.settles([GpuFit(), NodeResourcesFit()], state, PodRequest(1000))
    assert not no_fit.settles([NodeResourcesFit(), GpuFit()], state, PodRequest(1000))
    assert not no_fit.settles([GpuFit(), NodeResourcesFit()], state, PodRequest(0))
