"""A group plan that cannot succeed, counted instead of searched (`framework/pod_room.py`).

Hypothesis draws clusters (GPU models mixed, GPUs, CPU and memory modelled or not, labelled
pools, a tainted node; small ones and ones past kube-scheduler's 100-node floor, where a
search may stop early), a random sequence of allocations, releases, what-ifs and
nominations, then a group of pods of one request: wherever `runtime.failing_plan` counts a
plan, the plan made pod by pod (each pod's search from the rotating start, its allocation,
a rollback at the end) places that many pods, fails, leaves the start where it was and
gives its first failure that diagnosis. The C count of CPU and memory running out is held
to the Python one on every draw.
"""

from __future__ import annotations

import random
from dataclasses import replace
from unittest import mock

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from scheduler.framework import pod_room
from scheduler.framework.node_search import Diagnosis
from scheduler.framework.profile import load_profile
from scheduler.framework.runtime import Framework, failing_plan
from scheduler.model import Cluster, Node
from scheduler.model.cluster import NO_SELECTOR, NodeSelector, Taint
from scheduler.state.cluster_state import ClusterState, PodRequest
from tests.scheduler.native_kernel import build_kernel
from tests.scheduler.state_operations import operate

FUZZ = settings(max_examples=500, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
MODELS = ("A100", "H100")
SCOPES = ("",) * 12 + ("open", "rollback", "commit", "nominate", "unnominate")

nodes = st.builds(
    lambda model, gpus, cpu, memory, pool, tainted: Node(
        name="n", gpu_model=model, gpus=gpus, cpu_milli=cpu, memory_mib=memory, labels=(("pool", pool),),
        taints=(Taint("dedicated", "x", "NoSchedule"),) if tainted else ()),
    st.sampled_from(MODELS), st.sampled_from((0, 1, 2, 4, 8)), st.sampled_from((0, 4000, 32000)),
    st.sampled_from((0, 16384, 262144)), st.sampled_from(("x", "y")),
    st.sampled_from((False,) * 12 + (True,)))
requests = st.builds(
    PodRequest, milli=st.sampled_from((250, 300, 500, 1000, 1000, 1500, 2000, 2000, 4000, 8000)),
    cpu_milli=st.sampled_from((0, 500, 4000, 16000)), memory_mib=st.sampled_from((0, 1024, 65536)),
    models=st.sampled_from(((), ("A100",), ("H100",), ("A100", "B200"))),
    selector=st.sampled_from((NO_SELECTOR,) * 4 + (NodeSelector.of({"pool": "x"}),)))


@pytest.fixture(scope="module")
def room_kernel(tmp_path_factory):
    return build_kernel(tmp_path_factory.mktemp("pod-room")).gpus_run_out_first


def _facts(diagnosis: Diagnosis | None) -> tuple[object, ...] | None:
    if diagnosis is None:
        return None
    return diagnosis.message(), sorted(diagnosis.reasons.items()), sorted(diagnosis.unresolvable), sorted(diagnosis.short_of)


def _plan(framework: Framework, state: ClusterState, request: PodRequest, pending: int, needed: int
          ) -> tuple[int, Diagnosis | None]:
    """`planning.place_group`'s loop: each pod searched and allocated, stopping once `needed`
    is out of reach; the first failure's diagnosis; rolled back."""
    placed, first_failure = 0, None
    mark = state.mark()
    try:
        for tried in range(1, pending + 1):
            node, diagnosis = framework.find_node(state, request, None, first_failure is None, ("g", tried))
            if node is not None:
                state.allocate(("g", tried), node, request)
                placed += 1
            elif first_failure is None:
                first_failure = diagnosis
            if placed + pending - tried < needed:
                break
    finally:
        state.rollback(mark)
    return placed, first_failure


@FUZZ
@given(st.lists(nodes, min_size=1, max_size=24), st.sampled_from((1, 1, 6)),
       st.lists(st.tuples(st.integers(0, 10**6), requests, st.sampled_from(SCOPES)), max_size=150),
       requests, st.integers(1, 64), st.integers(0, 3), st.integers(0, 10**6), st.booleans())
def test_a_counted_plan_is_the_plan_made_pod_by_pod(room_kernel, drawn_nodes, copies, operations, request, pending,
                                                   short, start_at, in_c):
    _check(room_kernel, drawn_nodes * copies, operations, request, pending, short, start_at, in_c)


fractions = st.builds(PodRequest, milli=st.sampled_from((100, 250, 300, 500, 750)),
                      cpu_milli=st.sampled_from((0, 500, 2000, 8000)), memory_mib=st.sampled_from((0, 1024, 16384)),
                      models=st.sampled_from(((), ("A100",))))
small_nodes = st.builds(lambda model, gpus, cpu, memory: Node(name="n", gpu_model=model, gpus=gpus, cpu_milli=cpu,
                                                             memory_mib=memory),
                        st.sampled_from(MODELS), st.sampled_from((0, 1, 2)), st.sampled_from((0, 4000, 16000)),
                        st.sampled_from((0, 16384, 65536)))


@FUZZ
@given(st.lists(small_nodes, min_size=1, max_size=12),
       st.lists(st.tuples(st.integers(0, 10**6), fractions, st.sampled_from(SCOPES)), max_size=60),
       fractions, st.integers(1, 40), st.integers(0, 3), st.integers(0, 10**6), st.booleans())
def test_a_counted_plan_of_fractions_is_the_plan_made_pod_by_pod(room_kernel, drawn_nodes, operations, request, pending,
                                                                short, start_at, in_c):
    """Pods of a fraction of a GPU on small nodes, whose shared devices fill first."""
    _check(room_kernel, drawn_nodes, operations, request, pending, short, start_at, in_c)


def _check(room_kernel, drawn_nodes, operations, request, pending, short, start_at, in_c):
    state = ClusterState(Cluster(tuple(replace(node, name=f"n{i}") for i, node in enumerate(drawn_nodes))))
    operate(state, operations)
    if request.milli < 1000 or request.milli % 1000 == 0:  # the C count of CPU and memory running out is Python's
        arrays, flat = state.node_arrays, state.flat
        accepted = arrays.accepted_nodes(request.models)
        assert room_kernel(flat.whole_free, flat.cpu_free, flat.memory_free, arrays.has_cpu, arrays.has_memory,
                           accepted, len(state.nodes), request.milli, request.cpu_milli, request.memory_mib,
                           state.shared_free) == pod_room.gpus_run_out_first(
            state, range(len(state.nodes)) if accepted is None else accepted, request.milli, request.cpu_milli,
            request.memory_mib)
    framework = Framework(load_profile("gang-v1.37"), random.Random(0))
    framework._next_start = start = start_at % len(state.nodes)
    needed = max(1, pending - short)
    with mock.patch.object(pod_room, "ROOM_KERNEL", room_kernel if in_c else None):
        counted = failing_plan(framework, state, request, pending, needed, True)
    if counted is None:
        event("left to the plan")
        return
    event("counted: no pod fits" if not counted[0] else "counted: a fraction" if request.milli < 1000 else "counted: whole GPUs")
    placed, diagnosis = _plan(framework, state, request, pending, needed)
    assert placed == counted[0] < needed
    assert framework._next_start == start
    assert _facts(diagnosis) == _facts(counted[1])


def test_cpu_running_out_before_the_gpus_leaves_the_plan_to_decide():
    """Two pods of 1 GPU and 16 CPUs on a node of 8 GPUs and 16 CPUs: the GPUs would hold
    eight, the CPU holds one, so the second pod fails on CPU, not GPUs: not counted."""
    state = ClusterState(Cluster((Node(name="a", gpu_model="A100", gpus=8, cpu_milli=16000),)))
    framework = Framework(load_profile("gang-v1.37"), random.Random(0))
    request = PodRequest(1000, cpu_milli=16000)
    assert failing_plan(framework, state, request, 9, 9, True) is None
    assert _plan(framework, state, request, 9, 9)[0] == 1
    roomy = PodRequest(1000, cpu_milli=2000)
    assert failing_plan(framework, state, roomy, 9, 9, True) is not None
    assert _plan(framework, state, roomy, 9, 9)[0] == 8


def test_a_plan_whose_searches_stop_early_is_left_to_decide():
    """150 nodes of one free GPU each, a gang of 151 pods of one GPU: it cannot fit, but the
    first searches stop at kube-scheduler's 100 feasible nodes (one more cancels the search),
    so they move the start; only the plan knows where to: not counted."""
    state = ClusterState(Cluster(tuple(Node(name=f"n{i}", gpu_model="A100", gpus=1) for i in range(150))))
    framework = Framework(load_profile("gang-v1.37"), random.Random(0))
    request = PodRequest(1000)
    assert failing_plan(framework, state, request, 151, 151, True) is None
    placed, _ = _plan(framework, state, request, 151, 151)
    assert placed == 150 and framework._next_start != 0
    assert failing_plan(framework, state, request, 151, 151, True) is None  # the start moved, nothing else
    state.allocate(("w", 0), 0, request)
    framework._next_start = 7
    for node in range(1, 51):  # 99 nodes left with room: every search processes every node
        state.allocate(("w", node), node, request)
    assert failing_plan(framework, state, request, 151, 151, True)[0] == 99
    assert _plan(framework, state, request, 151, 151)[0] == 99 and framework._next_start == 7
