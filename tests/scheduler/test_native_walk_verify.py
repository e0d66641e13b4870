"""`replay --verify` with the C kernels: the node walk inside `PartialSearch.run` and the heap's
root inside `heap_choice`. A verified replay with them passes and writes the log the Python
code writes; a walk wrong on purpose stops it at the search check ("partial node search with
inline fit checks"), a wrong root at the heap root's ("heap root by pre-order rank"), nothing
half-written.

The scenario is test_verify's small demo under gang-v1.37 with the heap's tie order, so every
placement takes the partial search from the rotating start (the usage index answers the other
tie rules on a cluster this small).
"""

from __future__ import annotations

import pytest

from scheduler.framework import node_heap, node_search
from scheduler.framework.no_fit import NO_FIT_CHECK, ROOM_CHECK
from scheduler.framework.runtime import LISTED_WALK_CHECK
from scheduler.state.node_arrays import NodeArrays
from scheduler.verify import VerificationError, Verifier
from tests.scheduler.native_kernel import build_kernel
from tests.scheduler.scenario import with_tie_break
from tests.scheduler.test_verify import (  # noqa: F401  (small_demo: a fixture)
    HEAP_ROOT_CHECK,
    SEARCH_CHECK,
    WALK_ROOT_CHECK,
    _replay,
    small_demo,
)

PROFILE = with_tie_break("gang-v1.37", "heap_order")


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    return build_kernel(tmp_path_factory.mktemp("native-walk"))


@pytest.fixture(scope="module")
def kernel(kernels):
    return kernels.walk


def test_a_verified_replay_with_the_kernel_writes_the_python_walks_log(small_demo, tmp_path,  # noqa: F811
                                                                      monkeypatch, kernels):
    calls = [0]
    roots = [0]

    def counted(*args):
        calls[0] += 1
        return kernels.walk(*args)

    def counted_root(scored):
        roots[0] += 1
        return kernels.heap_root(scored)

    monkeypatch.setattr(node_search, "KERNEL", counted)
    monkeypatch.setattr(node_heap, "HEAP_ROOT", counted_root)
    verifier = Verifier()
    _replay(small_demo, tmp_path / "native", PROFILE, verifier)
    assert calls[0] > 1000 and verifier.checks[SEARCH_CHECK] > 1000, verifier.summary()
    assert roots[0] >= verifier.checks[HEAP_ROOT_CHECK] > 1000, verifier.summary()  # also in topology domains
    assert verifier.checks[WALK_ROOT_CHECK] >= verifier.checks[HEAP_ROOT_CHECK], verifier.summary()
    assert verifier.checks[LISTED_WALK_CHECK] > 100, verifier.summary()  # the gangs' topology domains
    monkeypatch.setattr(node_search, "KERNEL", None)
    monkeypatch.setattr(node_heap, "HEAP_ROOT", None)
    _replay(small_demo, tmp_path / "python", PROFILE, None)
    native, python = ((tmp_path / name / "events.parquet").read_bytes() for name in ("native", "python"))
    assert native == python


@pytest.mark.parametrize(("wrong", "check"), [("a score off by one ulp", SEARCH_CHECK),
                                              ("one node fewer processed", SEARCH_CHECK),
                                              # The nodes of other GPU models are counted, not visited: a count one
                                              # short shows in the diagnosis of a search that finds nothing.
                                              ("nodes of other models counted one short",
                                               f"{SEARCH_CHECK}|{NO_FIT_CHECK}|{ROOM_CHECK}"),
                                              ("the kept root one position off",
                                               f"{WALK_ROOT_CHECK}|{LISTED_WALK_CHECK}"),
                                              # A search that finds nothing is settled from the per-model counts or
                                              # the usage index where GpuFit is the first filter; their twins run
                                              # the search with the kernel.
                                              ("GPUs short named CPU short",
                                               f"{SEARCH_CHECK}|{NO_FIT_CHECK}|{ROOM_CHECK}|{LISTED_WALK_CHECK}")])
def test_a_wrong_kernel_stops_the_verified_replay(small_demo, tmp_path, monkeypatch, kernel, wrong, check):  # noqa: F811
    def broken(feasible, *args):
        i, processed, mismatched, at_node, kinds = kernel(feasible, *args)
        root = args[-2]
        if wrong == "a score off by one ulp" and feasible:
            score, node = feasible[-1]
            feasible[-1] = (score + abs(score) * 2**-52 + 5e-324, node)
        if wrong == "one node fewer processed" and not at_node and processed > 1:
            processed -= 1
        if wrong == "nodes of other models counted one short" and not at_node and mismatched:
            mismatched -= 1
        if wrong == "the kept root one position off" and root is not None and not at_node and root[0] > 1:
            root[3] = (root[3] + 1) % len(args[0])  # the next node of the cluster, feasible or not
        if wrong == "GPUs short named CPU short" and kinds[0]:
            kinds = (kinds[0] - 1, kinds[1], kinds[2] + 1, kinds[3])
        return i, processed, mismatched, at_node, kinds

    monkeypatch.setattr(node_search, "KERNEL", broken)
    with pytest.raises(VerificationError, match=check):
        _replay(small_demo, tmp_path / "run", PROFILE, Verifier())
    assert not (tmp_path / "run").exists()  # nothing half-written


def test_a_wrong_c_heap_root_stops_the_verified_replay(small_demo, tmp_path, monkeypatch, kernels):  # noqa: F811
    """The kernel's root replaced by the first best-scoring node scanned (right whenever the
    best score is not tied deeper in the heap): the heap root's check stops the replay."""

    def first_best(scored):
        top = max(score for score, _ in scored)
        return next(node for score, node in scored if score == top)

    monkeypatch.setattr(node_heap, "HEAP_ROOT", first_best)
    with pytest.raises(VerificationError, match=HEAP_ROOT_CHECK):
        _replay(small_demo, tmp_path / "run", PROFILE, Verifier())
    assert not (tmp_path / "run").exists()  # nothing half-written


def test_a_node_list_walked_short_stops_the_verified_replay(small_demo, tmp_path, monkeypatch, kernel):  # noqa: F811
    """A topology domain's nodes handed to the C walk without the last one: the twin that
    scans the domain's list in Python stops the replay."""
    listed_nodes = NodeArrays.listed_nodes

    def short(self, nodes, models):
        listed = listed_nodes(self, nodes, models)
        return listed[:-1] if listed is not None and len(listed) > 1 else listed

    monkeypatch.setattr(node_search, "KERNEL", kernel)
    monkeypatch.setattr(NodeArrays, "listed_nodes", short)
    with pytest.raises(VerificationError, match=LISTED_WALK_CHECK):
        _replay(small_demo, tmp_path / "run", PROFILE, Verifier())
    assert not (tmp_path / "run").exists()  # nothing half-written
