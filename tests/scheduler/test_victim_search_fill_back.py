"""The victim search's fill-back settled by the running sums (`VictimSearch._surely_short_without`):
a candidate the sums say the preemptor cannot do without stays removed without being added
back, and `replay --verify`'s twin (the plain add, fit check, remove) agrees; broken on
purpose, the twin stops the search."""

from __future__ import annotations

import pytest

from scheduler.admission.policies import PreemptionPolicy
from scheduler.admission.preemption.search import VictimSearch
from scheduler.verify import ClockedVerifier, VerificationError, Verifier
from tests.scheduler.admission_state import AdmissionState
from tests.scheduler.builders import make_cluster_queue, make_workload

CHECK = "victim search fill-back step ruled out by a running sum"


def _targets(holding: list[tuple[str, int]], wanted_gpus: int) -> tuple[list[str], Verifier]:
    """team-a alone with 8 GPUs, holding `holding` (name, GPUs; oldest first) at priority 0;
    the victims of a workload of `wanted_gpus` at priority 10, the search verified."""
    state = AdmissionState(make_cluster_queue("team-a").quota("a100", gpus=8)
                           .preemption(within=PreemptionPolicy.LOWER_PRIORITY).obj())
    for at, (name, gpus) in enumerate(holding):
        state.holding("team-a", make_workload(name).gpus(gpus).at(at).obj())
    verifier = Verifier()
    state.preemptor.strategy.check = ClockedVerifier(verifier, lambda: 0.0)
    wl = state.pending("team-a", make_workload("big").gpus(wanted_gpus).priority(10).obj())
    return [t.workload.name for t in state.targets(wl)], verifier


def test_candidates_the_preemptor_cannot_do_without_stay_removed_without_a_fit_check():
    # 8 of 1 GPU, newest removed first: with 4 gone the 4 GPUs fit, and the sums say each of
    # the other three is needed (3 GPUs available without it).
    victims, verifier = _targets([(f"a{i}", 1) for i in range(8)], 4)
    assert victims == ["a7", "a6", "a5", "a4"]
    assert verifier.checks[CHECK] > 0  # each search of the oracle and the nomination, and their twins


def test_a_fill_back_settled_wrongly_stops_the_verified_search(monkeypatch):
    # 2 free; a2 (1 GPU) and a1 (3 GPUs) removed make room for 5, and a2 goes back: the sums
    # (2 + 3 = 5) do not rule it out, and the plain fit check keeps it.
    assert _targets([("a0", 2), ("a1", 3), ("a2", 1)], 5)[0] == ["a1"]
    monkeypatch.setattr(VictimSearch, "_surely_short_without", lambda self, target: True)
    with pytest.raises(VerificationError, match=CHECK):
        _targets([("a0", 2), ("a1", 3), ("a2", 1)], 5)
