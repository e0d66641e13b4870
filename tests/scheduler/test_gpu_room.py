"""The per-model counts of whole free GPUs and shared devices' free shares
(`scheduler/state/gpu_room.py`) and the node searches they settle (`no_fit.settled_by_room`).

Hypothesis draws clusters (GPU models mixed, GPUs, CPU and memory modelled or not, labelled
pools, a tainted node), a random sequence of allocations (whole GPUs and fractions),
releases, what-ifs rolled back or committed, reprieves and nominations, then a request: the
counts must equal a recount of the state's lists, say "none fits" exactly when no node of
the request's models has the room GpuFit needs, and a search they settle must give what
the search calling every filter on every node gives (nothing feasible, the same diagnosis,
the start unmoved).
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.framework import no_fit
from scheduler.framework.node_search import Diagnosis, PartialSearch
from scheduler.model import Cluster, Node
from scheduler.model.cluster import NO_SELECTOR, NodeSelector, Taint
from scheduler.plugins.gpu_fit import GpuFit, NodeResourcesFit
from scheduler.plugins.scoring import LeastAllocated
from scheduler.state.cluster_state import ClusterState, PodRequest
from scheduler.state.gpu_room import GpuRoom
from tests.scheduler.state_operations import Operation, operate

FUZZ = settings(max_examples=400, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
MODELS = ("A100", "H100", "L4")
SCOPES = ("", "", "", "open", "rollback", "commit", "reprieve", "nominate", "unnominate")

nodes = st.builds(
    lambda model, gpus, cpu, memory, pool, tainted: Node(
        name="n", gpu_model=model, gpus=gpus, cpu_milli=cpu, memory_mib=memory, labels=(("pool", pool),),
        taints=(Taint("dedicated", "x", "NoSchedule"),) if tainted else ()),
    st.sampled_from(MODELS), st.sampled_from((0, 1, 2, 4, 8)), st.sampled_from((0, 4000, 32000)),
    st.sampled_from((0, 16384, 262144)), st.sampled_from(("x", "y")), st.sampled_from((False, False, False, True)))
requests = st.builds(
    PodRequest, milli=st.sampled_from((1, 100, 250, 300, 500, 750, 1000, 1500, 2000, 3000, 4000, 8000)),
    cpu_milli=st.sampled_from((0, 500, 4000, 16000)), memory_mib=st.sampled_from((0, 1024, 65536)),
    models=st.sampled_from(((), ("A100",), ("H100",), ("H100", "L4"), ("L4", "A100"), ("A100", "B200"), ("B200",))),
    priority=st.sampled_from((0, 10)),
    selector=st.sampled_from((NO_SELECTOR, NodeSelector.of({"pool": "x"}))))


def _answer(found: tuple[list[tuple[float, int]], Diagnosis, int]) -> tuple[object, ...]:
    feasible, diagnosis, next_start = found
    return (feasible, diagnosis.message(), sorted(diagnosis.reasons.items()), sorted(diagnosis.unresolvable),
            sorted(diagnosis.short_of), next_start)


def _operate(state: ClusterState, operations: list[Operation]) -> None:
    """The operations, then every what-if still open rolled back."""
    marks = operate(state, operations)
    while marks:
        state.rollback(marks.pop())


@FUZZ
@given(st.lists(nodes, min_size=1, max_size=30),
       st.lists(st.tuples(st.integers(0, 10**6), requests, st.sampled_from(SCOPES)), max_size=60),
       requests, st.integers(0, 10**6), st.booleans())
def test_the_counts_follow_the_state_and_settle_exactly_what_the_search_finds(drawn_nodes, operations, request,
                                                                             start_at, gpu_filter_first):
    cluster = Cluster(tuple(replace(node, name=f"n{i}") for i, node in enumerate(drawn_nodes)))
    state = ClusterState(cluster)
    _operate(state, operations)
    assert state.room.differences(state.whole_free, state.shared_free) == []
    accepted = [n for n, spec in enumerate(state.nodes) if not request.models or spec.gpu_model in request.models]
    room = any(state.gpu_fits(n, request.milli) for n in accepted)  # GpuFit without nominations
    assert state.room.none_fits(request.models, request.milli) == (not room)
    filters = [GpuFit(), NodeResourcesFit()] if gpu_filter_first else [NodeResourcesFit(), GpuFit()]
    search = PartialSearch(filters, [(LeastAllocated(), 1.0)], 0)
    search.kernel = None
    start = start_at % len(state.nodes)
    plain = _answer(search.run_plain(state, request, start))
    if no_fit.settles(filters, state, request):
        settled = no_fit.settled_by_room(state, request)
        if settled is not None:
            assert _answer(([], settled, start)) == plain
        else:
            assert room
    else:
        assert not gpu_filter_first


def test_a_count_the_state_forgets_shows_in_the_recount():
    cluster = Cluster((Node(name="a", gpu_model="A100", gpus=8), Node(name="b", gpu_model="H100", gpus=8)))
    state = ClusterState(cluster)
    state.allocate(("w", 0), 0, PodRequest(8000))
    state.allocate(("v", 0), 1, PodRequest(250))
    assert state.room.none_fits(("A100",), 1) and not state.room.none_fits(("H100",), 750)
    assert state.room.none_fits(("H100",), 7500) and not state.room.none_fits((), 7000)
    state.room.whole_moved(0, 0, 1)  # a change no list saw
    assert state.room.differences(state.whole_free, state.shared_free) == ["A100"]


def test_a_fresh_count_holds_every_node_at_its_capacity():
    room = GpuRoom((Node(name="a", gpu_model="A100", gpus=8), Node(name="b", gpu_model="A100", gpus=0)))
    assert room.whole == [{8: 1, 0: 1}] and room.shares == [{}]
    assert room.none_fits(("A100",), 9000) and not room.none_fits(("A100",), 8000) and room.none_fits(("L4",), 1)
