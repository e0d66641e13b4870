"""Which waiting workload gets freed GPUs first, among equal priorities.

kube-scheduler's PrioritySort (`plugins/queuesort/priority_sort.go` `Less`) orders by
priority, then `QueuedPodInfo.Timestamp`: when the pods were (last) added to the queue.
Behind Kueue a job's pods are created when Kueue admits it, so the order is the admission
order. scheduler-plugins Coscheduling (`pkg/coscheduling/coscheduling.go` `Less`) orders by
priority, then its PodGroup's creation time."""

import pytest

from tests.scheduler.admission_story import A100, kueue_rows
from tests.scheduler.builders import make_cluster_queue, make_node, make_workload

# "early" is created at 1 but waits for quota (its queue's other job, "filler", holds half of
# it) until filler ends at 59, and is admitted at 60; "late" is created and admitted at 50.
# Both need the 8-GPU node that "blocker" holds until 200 (filler's node is too small).
MANIFESTS = [A100.obj(), *(make_cluster_queue(name).quota("a100", gpus=8).obj() for name in ("qa", "qb", "qc"))]
NODES = [make_node("n1").obj(), make_node("n2").gpus(4).obj()]
JOBS = [
    make_workload("blocker").queue("qc").at(0).runs_for(200).gpus(8).obj(),
    make_workload("filler").queue("qa").at(0).runs_for(59).gpus(4).obj(),
    make_workload("early").queue("qa").at(1).runs_for(100).gpus(8).obj(),
    make_workload("late").queue("qb").at(50).runs_for(100).gpus(8).obj(),
]


@pytest.mark.parametrize(("profile", "want_first"), [
    pytest.param("gang-v1.35", "late", id="PrioritySort: pods created at admission: the one admitted first"),
    pytest.param("coscheduling", "early", id="Coscheduling: the PodGroup created first"),
])
def test_equal_priorities_are_served_in_the_queue_sorts_order(tmp_path, profile, want_first):
    rows = kueue_rows(tmp_path, NODES, JOBS, MANIFESTS, profile=profile)
    admitted = {r["workload_id"]: r["time_s"] for r in rows if r["event"] == "admitted"}
    assert (admitted["early"], admitted["late"]) == (60.0, 50.0)
    started = [(r["time_s"], r["workload_id"]) for r in rows if r["event"] == "started"]
    assert [w for t, w in started if t == 200.0] == [want_first]
