"""A cycle's processing taken from an earlier cycle (`cycle_memo.CycleMemo`): a preemptor
waiting for its victim is processed again in every cycle that arrivals start meanwhile.

team-a and team-b, 8 GPUs of nominal quota each, share a cohort of 16 GPUs (two nodes).
"hog" (team-b) borrows 4 of team-a's; "a" (team-a, 8 GPUs) reclaims them: "hog" is evicted
and holds its quota for 30 s while its pods terminate, "a" its queue's preemptor meanwhile.
Every second in between a team-b workload of 8 GPUs arrives (Preempt without targets,
inert) and starts a cycle: "a" is processed again with the same nomination, on the same tree.
At 20.5 s "other" (team-c, alone on L40S) is admitted: a commit between two such cycles.
"""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from scheduler.admission import cycle_memo
from scheduler.admission.cycle_memo import MEMO_CHECK, CycleMemo
from scheduler.admission.policies import PreemptionPolicy
from scheduler.commands import replay
from scheduler.verify import VerificationError, Verifier
from tests.scheduler.admission_story import A100, kueue_files
from tests.scheduler.builders import make_cluster_queue, make_flavor, make_node, make_workload

L40S = make_flavor("l40s").gpu_model("L40S")


def _files(tmp_path):
    manifests = [
        A100.obj(),
        make_cluster_queue("team-a").cohort("org").quota("a100", gpus=8).preemption(reclaim=PreemptionPolicy.ANY).obj(),
        make_cluster_queue("team-b").cohort("org").quota("a100", gpus=8).preemption(reclaim=PreemptionPolicy.ANY).obj(),
        L40S.obj(),
        make_cluster_queue("team-c").quota("l40s", gpus=8).obj(),
    ]
    jobs = [
        make_workload("hog").queue("team-b").at(0).runs_for(5_000).gpus(6).pods(2).obj(),
        make_workload("a").queue("team-a").at(10).runs_for(100).gpus(8).obj(),
        make_workload("other").queue("team-c").model("L40S").at(20.5).runs_for(5_000).gpus(1).obj(),
        *(make_workload(f"big-{i}").queue("team-b").at(11 + i).runs_for(100).gpus(8).obj() for i in range(20)),
    ]
    nodes = [make_node("n1").obj(), make_node("n2").obj(), make_node("n3").model("L40S").obj()]
    return kueue_files(tmp_path, nodes, jobs, manifests)


def _replay(tmp_path, name, verifier=None):
    trace, cluster, queues = _files(tmp_path)
    replay(trace, cluster, tmp_path / name, profile="gang-v1.37", seed=1, queues=queues, verifier=verifier)
    return (tmp_path / name / "events.parquet").read_bytes()


def test_a_waiting_preemptor_is_processed_as_in_an_earlier_cycle_and_the_log_is_the_same(tmp_path):
    verifier = Verifier()
    verified = _replay(tmp_path, "verified", verifier)
    assert verifier.checks[MEMO_CHECK] >= 10, verifier.summary()
    assert verified == _replay(tmp_path, "plain")
    rows = pq.read_table(tmp_path / "plain" / "events.parquet").to_pylist()
    admitted = [(r["time_s"], r["workload_id"]) for r in rows if r["event"] == "admitted" and r["pod_index"] is None]
    assert (40.0, "a") in admitted  # once the victim's 30 s of grace are over


def test_a_memo_keyed_by_workloads_that_outlives_a_commit_stops_the_verified_replay(tmp_path, monkeypatch):
    """After "other" is admitted, "a" is processed again: the memo's outcome for it was
    recorded before that commit."""
    monkeypatch.setattr(CycleMemo, "_tree_unchanged", lambda self: True)
    monkeypatch.setattr(cycle_memo, "_key_of", lambda entry: (entry.wl,))
    with pytest.raises(VerificationError, match="admission cycle processed as an earlier one"):
        _replay(tmp_path, "broken", Verifier())
