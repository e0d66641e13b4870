"""The node walk in C (`scheduler/framework/native_walk.c`) against its Python twin.

Hypothesis draws clusters (GPU models mixed or in blocks, GPUs, CPU and memory modelled or not,
labelled pools), requests that accept any GPU model, one, several or none of the cluster's,
a random sequence of allocations and releases, then a request, a start, a number of nodes
wanted and a score: `PartialSearch.run` with the kernel and without it must return the same
feasible (score, node) list, the same diagnosis (the same count per reason, which the
message lists sorted; unresolvable nodes, resources short of) and the same next start; both must agree with `run_plain`, which
calls every filter.
"""

from __future__ import annotations

from array import array
from dataclasses import replace
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.framework import node_search
from scheduler.framework.node_heap import SortedScoredNodes
from scheduler.framework.node_search import Diagnosis, PartialSearch
from scheduler.model import Cluster, Node
from scheduler.model.cluster import NO_SELECTOR, NodeSelector
from scheduler.plugins.gpu_fit import GpuFit, NodeResourcesFit
from scheduler.plugins.scoring import LeastAllocated, MostAllocated
from scheduler.state.cluster_state import ClusterState, PodRequest
from scheduler.state.flat_counts import BEYOND_INT64
from tests.scheduler.native_kernel import build_kernel
from tests.scheduler.state_operations import operate

MODELS = ("A100", "H100", "L4")
FUZZ = settings(max_examples=300, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    return build_kernel(tmp_path_factory.mktemp("native-walk")).walk


nodes = st.builds(
    lambda index, model, gpus, cpu, memory, pool: Node(
        name=f"n{index}", gpu_model=model, gpus=gpus, cpu_milli=cpu, memory_mib=memory, labels=(("pool", pool),)),
    st.just(0), st.sampled_from(MODELS), st.sampled_from((0, 1, 2, 3, 4, 6, 8)), st.sampled_from((0, 4000, 32000)),
    st.sampled_from((0, 16384, 262144)), st.sampled_from(("x", "y")))
requests = st.builds(
    PodRequest, milli=st.sampled_from((0, 1, 100, 250, 300, 500, 750, 1000, 1500, 2000, 3000, 4000, 8000)),
    cpu_milli=st.sampled_from((0, 1, 500, 4000, 16000)), memory_mib=st.sampled_from((0, 1, 1024, 16384, 65536)),
    models=st.sampled_from(((), ("A100",), ("H100",), ("H100", "L4"), ("L4", "A100"), ("A100", "B200"), ("B200",))),
    selector=st.sampled_from((NO_SELECTOR, NodeSelector.of({"pool": "x"}))))


def _answer(found: tuple[list[tuple[float, int]], Diagnosis, int]) -> tuple[object, ...]:
    feasible, diagnosis, next_start = found
    return (feasible, sorted(diagnosis.reasons.items()), sorted(diagnosis.unresolvable), sorted(diagnosis.short_of),
            next_start)


SCOPES = ("", "", "", "open", "rollback", "commit", "reprieve")  # what-ifs among the operations


@FUZZ
@given(st.lists(nodes, min_size=1, max_size=40),
       st.lists(st.tuples(st.integers(0, 10**6), requests, st.sampled_from(SCOPES)), max_size=60),
       requests, st.integers(0, 10**6), st.integers(1, 40), st.sampled_from((LeastAllocated, MostAllocated)),
       st.sampled_from((1.0, 2.0, 0.3)), st.booleans(), st.booleans())
def test_the_kernel_walks_as_the_python_walk(kernel, drawn_nodes, operations, request, start_at, wanted, scorer,
                                             weight, gpu_filter_first, in_blocks):
    if in_blocks:  # each GPU model's nodes side by side, as a real cluster lists its pools
        drawn_nodes = sorted(drawn_nodes, key=lambda node: node.gpu_model)
    cluster = Cluster(tuple(replace(node, name=f"n{i}") for i, node in enumerate(drawn_nodes)))
    state = ClusterState(cluster)
    count = len(cluster.nodes)
    operate(state, operations)  # allocate where it fits, else release a pod
    assert state.flat.differences(state) == []  # the walk's int64 arrays hold what the lists hold
    filters = [GpuFit(), NodeResourcesFit()] if gpu_filter_first else [NodeResourcesFit(), GpuFit()]
    with mock.patch.object(node_search, "feasible_nodes_to_find", lambda percentage, nodes: min(wanted, nodes)):
        native = PartialSearch(filters, [(scorer(), weight)], 0, kernel=kernel)
        python = PartialSearch(filters, [(scorer(), weight)], 0)
        python.kernel = None
        start = start_at % count
        with_kernel = _answer(native.run(state, request, start))
        assert with_kernel == _answer(python.run(state, request, start))
        plain = _answer(python.run_plain(state, request, start))
        # the root kept during the walk: the listed search's heap root, the same diagnosis and start
        root, root_diagnosis, root_next = native.run_root(state, request, start)
        heap = SortedScoredNodes(with_kernel[0]).peek() if with_kernel[0] else None
        assert (root, root_next) == (heap, with_kernel[4])
        if root is None:
            assert _answer(([], root_diagnosis, root_next)) == with_kernel
    assert with_kernel[0] == plain[0] and with_kernel[4] == plain[4]
    if not with_kernel[0]:  # the diagnosis is built only when nothing is feasible
        assert (sorted(with_kernel[1]), with_kernel[2], with_kernel[3]) == (sorted(plain[1]), plain[2], plain[3])


@pytest.mark.parametrize(("full", "start", "next_start", "mismatched"), [
    (False, 1, 6, 3),  # steps 0-4 processed (nodes 1, 2, 4 of another model); node 6 cancels the search
    (False, 5, 0, 1),  # nodes 5 and 6 found, node 7 of another model, node 0 (round the end) cancels it
    (False, 6, 3, 3),  # round the end: nodes 7, 1, 2 of another model; node 3 cancels it
    (False, 7, 5, 4),  # from a node of another model, round the end: nodes 7, 1, 2, 4; node 5 cancels it
    (True, 2, 2, 4),  # nothing feasible: every node processed, the four of another model counted
])
def test_nodes_of_other_models_are_counted_where_the_walk_stops(kernel, full, start, next_start, mismatched):
    """The kernel visits only the A100 nodes (0, 3, 5, 6 of 8 nodes) and counts the H100 nodes
    between them: the search wants 2 of 8 nodes, so the third A100 node found cancels it, and
    the next start, the mismatches and the diagnosis are those of the walk over every node."""
    cluster = Cluster(tuple(Node(f"n{i}", "A100" if i in (0, 3, 5, 6) else "H100", 8) for i in range(8)))
    state = ClusterState(cluster)
    if full:
        for node in (0, 3, 5, 6):
            state.allocate((f"w{node}", 0), node, PodRequest(8000))
    request = PodRequest(1000, models=("A100",))
    with mock.patch.object(node_search, "feasible_nodes_to_find", lambda percentage, nodes: 2):
        native = PartialSearch([GpuFit(), NodeResourcesFit()], [(LeastAllocated(), 1.0)], 0, kernel=kernel)
        python = PartialSearch([GpuFit(), NodeResourcesFit()], [(LeastAllocated(), 1.0)], 0)
        python.kernel = None
        found = native.run(state, request, start)
        assert found[2] == next_start and len(found[0]) == (0 if full else 2)
        assert _answer(found) == _answer(python.run(state, request, start)) == _answer(
            python.run_plain(state, request, start))
        if full:
            assert found[1].reasons[node_search.MODEL_MISMATCH] == mismatched
            assert found[1].message() == ("0/8 nodes are available: 4 Insufficient nvidia.com/gpu, "
                                          f"{mismatched} {node_search.MODEL_MISMATCH}.")
        else:  # the kernel's own count, before the diagnosis drops it
            counted = []

            def counting(*args):
                answer = kernel(*args)
                counted.append(answer[2])
                return answer

            native.kernel = counting
            native.run(state, request, start)
            assert sum(counted) == mismatched


def test_the_kernel_refuses_accepted_nodes_out_of_order_or_range(kernel):
    """The accepted nodes must be the cluster's, in ascending order: the steps are computed
    from them."""
    ones = [array("q", [1] * 3) for _ in range(3)] + [array("q", [0] * 3), array("q", [8] * 3)]
    ones += [array("q", [1] * 3), array("q", [1] * 3)]
    for wrong in (array("q", [2, 1]), array("q", [0, 0]), array("q", [0, 3]), array("q", [-1]),
                  array("q", [0, 1, 2, 2])):
        with pytest.raises(ValueError, match="accepted"):
            kernel([], *ones, wrong, None, 0, 3, 0, 0, 3, 1, 0, 0, 1000, True, 1.0, [], True, [{}] * 3, None, True)


@pytest.mark.parametrize("scorer", [LeastAllocated, MostAllocated])
def test_every_score_rounds_as_python_rounds_it(kernel, scorer):
    """Every used level in steps of 50 milli-GPUs on nodes of 1 to 8 GPUs, for requests of
    50 milli-GPUs to whole GPUs: the kernel's IEEE double arithmetic gives Python's score to
    the last bit (100.0 * (1.0 - f) and 100.0 - 100.0 * f differ on a third of them), and the
    root it keeps is the listed nodes' heap root."""
    cluster = Cluster(tuple(Node(f"n{gpus}", "A100", gpus) for gpus in (1, 2, 3, 4, 6, 7, 8)))
    for milli in (50, 150, 250, 300, 700, 1000, 2000):
        for used in range(0, 8000, 50):
            state = ClusterState(cluster)
            for node, spec in enumerate(cluster.nodes):  # read by the score only
                state.used[node] = state.flat.used[node] = min(used, spec.gpus * 1000 - milli)
            request = PodRequest(milli=milli)
            for weight in (1.0, 0.3):
                native = PartialSearch([GpuFit(), NodeResourcesFit()], [(scorer(), weight)], 0, kernel=kernel)
                python = PartialSearch([GpuFit(), NodeResourcesFit()], [(scorer(), weight)], 0)
                python.kernel = None
                listed = python.run(state, request, 0)[0]
                assert native.run(state, request, 0)[0] == listed
                assert native.run_root(state, request, 0)[0] == SortedScoredNodes(listed).peek()


def test_a_fraction_fits_a_shared_device_as_gpu_fit_decides(kernel):
    """Nodes whose every GPU is taken, some by slices: a fraction fits where a shared device
    has at least its milli-GPUs free (exactly as many, too), and fails elsewhere, without a
    filter call, as GpuFit decides."""
    cluster = Cluster(tuple(Node(f"n{i}", "A100", gpus) for i, gpus in enumerate((1, 2, 1, 2))))
    for taken in (250, 300, 500, 750):
        for milli in (100, 250, 500, 700, 750):
            state = ClusterState(cluster)
            for node, spec in enumerate(cluster.nodes):
                if spec.gpus > 1:
                    state.allocate((f"whole{node}", 0), node, PodRequest(1000 * (spec.gpus - 1)))
                state.allocate((f"slice{node}", 0), node, PodRequest(taken if node % 2 else 1000 - taken))
            request = PodRequest(milli)
            native = PartialSearch([GpuFit(), NodeResourcesFit()], [(MostAllocated(), 1.0)], 0, kernel=kernel)
            python = PartialSearch([GpuFit(), NodeResourcesFit()], [(MostAllocated(), 1.0)], 0)
            python.kernel = None
            for start in range(4):
                assert _answer(native.run(state, request, start)) == _answer(python.run(state, request, start))


def test_values_beyond_exact_doubles_are_scored_by_python(kernel):
    """A node with more GPUs than a double holds exactly in milli-GPUs is handed back to
    Python, which scores it with its own integer division: the same score as without the kernel."""
    cluster = Cluster((Node("small", "A100", 8), Node("huge", "A100", 2**60 + 1), Node("cpu", "A100", 8, 2**70, 0)))
    state = ClusterState(cluster)
    native = PartialSearch([GpuFit(), NodeResourcesFit()], [(LeastAllocated(), 1.0)], 0, kernel=kernel)
    python = PartialSearch([GpuFit(), NodeResourcesFit()], [(LeastAllocated(), 1.0)], 0)
    python.kernel = None
    for request in (PodRequest(milli=3 * 2**55 + 1000), PodRequest(milli=1000, cpu_milli=2**66)):
        for start in range(3):
            assert _answer(native.run(state, request, start)) == _answer(python.run(state, request, start))


def test_the_kernel_refuses_arrays_that_are_not_int64_arrays(kernel):
    def q(*values):
        return array("q", values)

    def walk(*arrays, feasible=None, root=None, accepted=None):
        return kernel([] if feasible is None else feasible, *arrays, accepted, None, 0, 1, 0, 0, 1, 1, 0, 0, 1000,
                      True, 1.0, [], True, [{}], root, True)

    good = [q(1), q(1), q(1), q(0), q(8), q(1), q(1)]  # whole free .. has memory: one node
    assert walk(*good)[:4] == (1, 1, 0, False)  # the node is feasible: the walk ends past it
    assert walk(*good, accepted=q(0))[:4] == (1, 1, 0, False)
    assert walk(*good, accepted=q())[:4] == (1, 1, 1, False)  # no node accepted: one mismatch
    for wrong in ([0], array("i", [0])):
        with pytest.raises(TypeError, match="int64 arrays"):
            walk(*good, accepted=wrong)
    for field in range(7):
        for wrong in ([1], (1,), array("i", [1]), q()):  # not a buffer, not of int64, shorter than the nodes
            arrays = list(good)
            arrays[field] = wrong
            with pytest.raises(TypeError, match="int64 arrays"):
                walk(*arrays)
    with pytest.raises(TypeError, match="lists of one int per node"):
        walk(*good, feasible=(1,))


def test_the_kernel_refuses_a_root_of_another_shape(kernel):
    for wrong in ([0, 0.0, -1], (0, 0.0, -1, -1), [1, 3, 0, 0]):  # a list of 4 with a float top once found
        with pytest.raises(TypeError, match="root must be None or a list"):
            kernel([], array("q", [1]), array("q", [1]), array("q", [1]), array("q", [0]), array("q", [8]),
                   array("q", [1]), array("q", [1]), None, None, 0, 1,
                   0, 0, 1, 1, 0, 0, 1000, True, 1.0, [], True, [{}], wrong, True)


def test_values_beyond_the_flat_arrays_are_left_to_python(kernel):
    """A free count the int64 arrays cannot hold is stored as BEYOND_INT64; the kernel hands
    that node to Python, which compares the list's exact int, as without the kernel."""
    cluster = Cluster((Node("a", "A100", 8, 2**64, 2**63), Node("b", "A100", 8, 4000, 16384)))
    state = ClusterState(cluster)
    assert state.flat.cpu_free[0] == state.flat.memory_free[0] == BEYOND_INT64
    native = PartialSearch([GpuFit(), NodeResourcesFit()], [(LeastAllocated(), 1.0)], 0, kernel=kernel)
    python = PartialSearch([GpuFit(), NodeResourcesFit()], [(LeastAllocated(), 1.0)], 0)
    python.kernel = None
    for request in (PodRequest(1000, cpu_milli=2**63 + 5), PodRequest(1000, cpu_milli=1000, memory_mib=2**63 - 1),
                    PodRequest(1000, cpu_milli=2**65)):
        for start in range(2):
            assert _answer(native.run(state, request, start)) == _answer(python.run(state, request, start))
    state.allocate(("w", 0), 0, PodRequest(1000, cpu_milli=2**64 - 4000, memory_mib=2**63 - 1))
    assert (state.flat.cpu_free[0], state.flat.memory_free[0]) == (4000, 1)  # back in range: flat again
    assert state.flat.differences(state) == []


@pytest.mark.parametrize(("gpus", "milli"), [(8, 1000), (0, 0)])
def test_the_kept_root_is_the_heaps_root_not_the_first_best(kernel, gpus, milli):
    """Two busy nodes, then two tied best ones: heap.Init lifts the fourth (the left child's
    child) above the third (the root's right child). On 8-GPU nodes the kernel keeps the root;
    nodes without GPUs the plugin scores (100 each), and Python folds them in as the kernel
    would."""
    cluster = Cluster(tuple(Node(f"n{i}", "A100", 8 if i < 2 else gpus, 64000, 262144) for i in range(4)))
    state = ClusterState(cluster)
    for node in (0, 1):
        state.allocate((f"busy{node}", 0), node, PodRequest(4000, cpu_milli=60000))
    native = PartialSearch([GpuFit(), NodeResourcesFit()], [(LeastAllocated(), 1.0)], 0, kernel=kernel)
    request = PodRequest(milli, cpu_milli=1000)
    listed = native.run(state, request, 0)[0]
    top = max(score for score, _ in listed)
    assert [node for score, node in listed if score == top] == [2, 3]
    assert native.run_root(state, request, 0)[0] == SortedScoredNodes(listed).peek() == 3
