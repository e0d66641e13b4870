"""The usage index is built the first time a walk asks for it, then kept: an index built
late holds exactly what one asked for at the start holds, after any allocations and releases,
and a state nobody asks does not keep it."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.model import Cluster, Node
from scheduler.state.cluster_state import ClusterState, PodRequest

nodes = st.builds(lambda model, gpus: Node(name="n", gpu_model=model, gpus=gpus),
                  st.sampled_from(("A100", "H100")), st.sampled_from((0, 1, 4, 8)))
operations = st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from((250, 500, 1000, 2000, 4000))), max_size=50)


def _buckets(state: ClusterState) -> list[object]:
    """Each class's capacity, used levels and nodes per level (read through `levels`, in order)."""
    return [(key, usage.capacity_milli, list(usage.levels), sorted(usage.nodes_at.items()))
            for key, usage in state.usage_index.classes.items()]


def _apply(state: ClusterState, steps: list[tuple[int, int]]) -> None:
    count = len(state.nodes)
    for step, (pick, milli) in enumerate(steps):  # allocate where it fits, else release a pod
        node = pick % count
        if state.gpu_fits(node, milli):
            state.allocate((f"w{step}", 0), node, PodRequest(milli=milli))
        elif state.holdings:
            state.release(sorted(state.holdings)[pick % len(state.holdings)])


@settings(max_examples=200, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(nodes, min_size=1, max_size=20), operations, operations)
def test_an_index_built_late_holds_what_one_kept_from_the_start_holds(drawn, before, after):
    cluster = Cluster(tuple(replace(node, name=f"n{i}") for i, node in enumerate(drawn)))
    early, late = ClusterState(cluster), ClusterState(cluster)
    early.usage_index.classes_for(())  # asked at the start: kept through every step
    assert early.usage_index.kept and not late.usage_index.kept
    for state in (early, late):
        _apply(state, before)
    assert not late.usage_index.kept  # nobody asked: nothing kept
    late.usage_index.classes_for(())  # asked late: built from the current use
    assert _buckets(late) == _buckets(early)
    for state in (early, late):
        _apply(state, after)
    assert _buckets(late) == _buckets(early)
