"""Admission fair sharing through the real replay: who is admitted next inside a ClusterQueue.

Upstream: kueue pkg/cache/queue/cluster_queue.go `queueOrderingFunc` (the LocalQueue usage
before priority and time), pkg/util/admissionfairsharing (`CalculateEntryPenalty`,
`CalculateDecayedConsumed`, `CalculateUsage`), pkg/controller/core/localqueue_controller.go
(`reconcileConsumedUsage` every usageSamplingInterval), workload_controller.go
(`updateAfsConsumedUsage`: the penalty settles at admission).

One 8-GPU node and one ClusterQueue "team" of 8 GPUs in UsageBasedAdmissionFairSharing
mode, LocalQueues "a" and "b" (half-life 10 min, sampling every 5 min; α = 1 − √½):

- 0 s: a1 (LocalQueue a, 1000 s) is admitted; a's usage is its entry penalty 8·α = 2.343.
- 10 s: a2 (a, 100 s) and 20 s: b1 (b, 100 s) wait for quota.
- samples at 300, 600 and 900 s fold a1's 8 GPUs in: a's usage 4.000, 5.172, 6.000.
- 1000 s: a1 finishes; 1 s later (the inadmissible requeue batch) b (0) < a (6.000): b1 is
  admitted at 1001 s, though a2 arrived first.
- 1101 s: b1 finishes; a2, the only one left, is admitted at 1102 s.

Kueue's usual order (no admissionScope) admits a2 at 1001 s and b1 at 1102 s.
"""

from __future__ import annotations

import pytest

from scheduler.admission.queues import PendingQueue
from scheduler.commands import replay
from scheduler.verify import VerificationError, Verifier
from tests.scheduler.admission_story import A100, kueue_files, kueue_rows, timeline
from tests.scheduler.builders import (
    make_cluster_queue,
    make_configuration,
    make_local_queue,
    make_node,
    make_workload,
)


def _objects(fair: bool):
    queue = make_cluster_queue("team").quota("a100", gpus=8)
    return [A100.obj(), (queue.admission_mode() if fair else queue).obj(),
            make_local_queue("a").namespace("ns").cluster_queue("team").obj(),
            make_local_queue("b").namespace("ns").cluster_queue("team").obj(),
            make_configuration().admission_fair_sharing(half_life="10m", sampling_interval="5m").obj()]


JOBS = [make_workload("a1").queue("a").at(0).runs_for(1000).gpus(8).obj(),
        make_workload("a2").queue("a").at(10).runs_for(100).gpus(8).obj(),
        make_workload("b1").queue("b").at(20).runs_for(100).gpus(8).obj()]


@pytest.mark.parametrize(("fair", "want"), [
    pytest.param(True, [
        (0.0, "admitted", "a1", None),
        (1001.0, "admitted", "b1", None),  # b's usage 0 < a's 6.000
        (1102.0, "admitted", "a2", None),
    ], id="UsageBasedAdmissionFairSharing: b1 before a2"),
    pytest.param(False, [
        (0.0, "admitted", "a1", None),
        (1001.0, "admitted", "a2", None),
        (1102.0, "admitted", "b1", None),
    ], id="no admissionScope: arrival order"),
])
def test_the_local_queue_with_less_decayed_usage_goes_first(tmp_path, fair, want):
    rows = kueue_rows(tmp_path, [make_node("n1").obj()], JOBS, _objects(fair))
    assert timeline(rows, "admitted") == want


def _verified_replay(tmp_path):
    trace, cluster, queues = kueue_files(tmp_path, [make_node("n1").obj()], JOBS, _objects(True))
    verifier = Verifier()
    replay(trace, cluster, tmp_path / "run", profile="gang-v1.37", seed=1, queues=queues, verifier=verifier)
    return verifier


def test_replay_verify_checks_the_fair_head_against_a_plain_scan(tmp_path):
    assert _verified_replay(tmp_path).checks["admission fair sharing head from the rebuilt heap"] > 0


def test_a_heap_key_broken_on_purpose_stops_the_verified_replay(tmp_path, monkeypatch):
    """The heap ordered by the opposite usage admits a2 at 1001 s; the plain scan says b1."""
    monkeypatch.setattr(PendingQueue, "_fair_key", staticmethod(lambda usage, wl: (-usage.of(wl), wl.queue_key)))
    with pytest.raises(VerificationError, match="admission fair sharing head from the rebuilt heap"):
        _verified_replay(tmp_path)
    assert not (tmp_path / "run").exists()  # nothing half-written
