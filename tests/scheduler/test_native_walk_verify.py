"""`replay --verify` with the C node walk inside `PartialSearch.run`: a verified replay with the
kernel passes and writes the log the Python walk writes; a kernel wrong on purpose stops it
at the search check ("partial node search with inline fit checks"), nothing half-written.

The scenario is test_verify's small demo under gang-v1.37 with the heap's tie order, so every
placement takes the partial search from the rotating start (the usage index answers the other
tie rules on a cluster this small).
"""

from __future__ import annotations

import pytest

from scheduler.framework import node_search
from scheduler.framework.no_fit import NO_FIT_CHECK
from scheduler.verify import VerificationError, Verifier
from tests.scheduler.native_kernel import build_kernel
from tests.scheduler.scenario import with_tie_break
from tests.scheduler.test_verify import SEARCH_CHECK, _replay, small_demo  # noqa: F401  (a fixture)

PROFILE = with_tie_break("gang-v1.37", "heap_order")


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    return build_kernel(tmp_path_factory.mktemp("native-walk")).walk


def test_a_verified_replay_with_the_kernel_writes_the_python_walks_log(small_demo, tmp_path,  # noqa: F811
                                                                      monkeypatch, kernel):
    calls = [0]

    def counted(*args):
        calls[0] += 1
        return kernel(*args)

    monkeypatch.setattr(node_search, "KERNEL", counted)
    verifier = Verifier()
    _replay(small_demo, tmp_path / "native", PROFILE, verifier)
    assert calls[0] > 1000 and verifier.checks[SEARCH_CHECK] > 1000, verifier.summary()
    monkeypatch.setattr(node_search, "KERNEL", None)
    _replay(small_demo, tmp_path / "python", PROFILE, None)
    native, python = ((tmp_path / name / "events.parquet").read_bytes() for name in ("native", "python"))
    assert native == python


@pytest.mark.parametrize("wrong", ["a score off by one ulp", "one node fewer processed",
                                   "GPUs short named CPU short"])
def test_a_wrong_kernel_stops_the_verified_replay(small_demo, tmp_path, monkeypatch, kernel, wrong):  # noqa: F811
    def broken(feasible, *args):
        i, processed, mismatched, at_node, kinds = kernel(feasible, *args)
        if wrong == "a score off by one ulp" and feasible:
            score, node = feasible[-1]
            feasible[-1] = (score + abs(score) * 2**-52 + 5e-324, node)
        if wrong == "one node fewer processed" and not at_node and processed > 1:
            processed -= 1
        if wrong == "GPUs short named CPU short" and kinds[0]:
            kinds = (kinds[0] - 1, kinds[1], kinds[2] + 1, kinds[3])
        return i, processed, mismatched, at_node, kinds

    monkeypatch.setattr(node_search, "KERNEL", broken)
    # A search that finds nothing is settled from the usage index where GpuFit is the first
    # filter; its twin runs the search with the kernel, so a wrong diagnosis stops it there.
    checks = f"{SEARCH_CHECK}|{NO_FIT_CHECK}" if wrong == "GPUs short named CPU short" else SEARCH_CHECK
    with pytest.raises(VerificationError, match=checks):
        _replay(small_demo, tmp_path / "run", PROFILE, Verifier())
    assert not (tmp_path / "run").exists()  # nothing half-written
