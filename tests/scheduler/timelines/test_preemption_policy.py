"""A priority class's `preemptionPolicy: Never` (golden timelines).

kube-scheduler's DefaultPreemption asks `PodEligibleToPreemptOthers` before any victim search:
a pod whose PriorityClass says `preemptionPolicy: Never` (copied into its spec) preempts no one,
it only goes ahead of lower priorities in the queue; it can itself be preempted. The trace says
it per workload (`preemption_policy`).

Four nodes of 8 GPUs, a 4-pod low-priority gang on all of them until t=9000; at t=100 a
high-priority one-node job arrives.
"""

import pytest

from tests.scheduler.scenario import (
    GANG_V137_PREEMPTING,
    job,
    lowest_index,
    node,
    replay_rows,
    story,
)

NODES = [node("n1"), node("n2"), node("n3"), node("n4")]


def _urgent(rows):
    return story([r for r in rows if r["workload_id"] == "urgent"], events=("started", "finished"))


@pytest.mark.parametrize("profile", [lowest_index(GANG_V137_PREEMPTING), lowest_index("kube-default")])
def test_a_never_workload_waits_instead_of_preempting(tmp_path, profile):
    gang = job("gang", 0, 9000, pods=4, priority=1, kind="training", disruption_mode="all")
    rows = replay_rows(tmp_path, NODES, [gang, job("urgent", 100, 500, priority=9, preemption_policy="never")],
                       profile)
    assert [r for r in rows if r["event"] == "preempted"] == []
    assert _urgent(rows) == [(9000.0, "started", "urgent", 0, "n1"), (9500.0, "finished", "urgent", 0, "n1")]


@pytest.mark.parametrize("profile", [lowest_index(GANG_V137_PREEMPTING), lowest_index("kube-default")])
def test_the_default_policy_preempts(tmp_path, profile):
    gang = job("gang", 0, 9000, pods=4, priority=1, kind="training", disruption_mode="all")
    rows = replay_rows(tmp_path, NODES, [gang, job("urgent", 100, 500, priority=9,
                                                     preemption_policy="preempt_lower_priority")], profile)
    assert {r["workload_id"] for r in rows if r["event"] == "preempted"} == {"gang"}
    assert _urgent(rows)[0][0] == 130.0  # after the victims' 30 s of termination


def test_a_never_workload_can_be_preempted(tmp_path):
    low = job("low", 0, 9000, pods=4, priority=1, kind="training", disruption_mode="all", preemption_policy="never")
    rows = replay_rows(tmp_path, NODES, [low, job("urgent", 100, 500, priority=9)],
                       lowest_index(GANG_V137_PREEMPTING))
    assert {r["workload_id"] for r in rows if r["event"] == "preempted"} == {"low"}


def test_an_unknown_policy_is_a_rejected_row_naming_the_column(tmp_path):
    replay_rows(tmp_path, NODES, [job("urgent", 0, 500, preemption_policy="sometimes"), job("ok", 0, 500)],
                "gang-v1.37")
    rejected = (tmp_path / "run" / "rejected.csv").read_text()
    assert "preemption_policy" in rejected and "never" in rejected and "urgent" in rejected
