"""Per-pod preemption picks its node as kube-scheduler's pickOneNodeForPreemption does
(pkg/scheduler/framework/preemption/preemption.go): the lowest highest-victim priority,
then the lowest sum of priorities each offset by 2^31 (so fewer victims win before the raw
priorities count), then the fewest victims, then the latest start among the highest-priority
victims. Each node holds one GPU model and the preemptor accepts both, so the victims sit
where the test says; the preemptor needs a whole node."""

import pytest

from tests.scheduler.scenario import job, node, replay_rows

NODES = [node("n1", model="A100"), node("n2", model="H100")]


@pytest.mark.parametrize(("victims", "want_preempted"), [
    pytest.param(
        [job("a-high", 0, 9000, gpus=4, priority=5, model="A100"),
         job("a-zero-1", 1, 9000, gpus=2, priority=0, model="A100"),
         job("a-zero-2", 2, 9000, gpus=2, priority=0, model="A100"),
         job("h-high", 3, 9000, gpus=4, priority=5, model="H100"),
         job("h-one", 4, 9000, gpus=4, priority=1, model="H100")],
        {"h-high", "h-one"},
        id="two victims beat three even when their raw priorities sum higher (5+1 > 5+0+0)"),
    pytest.param(
        [job("a-high", 0, 9000, gpus=8, priority=7, model="A100"),
         job("h-low-1", 1, 9000, gpus=4, priority=3, model="H100"),
         job("h-low-2", 2, 9000, gpus=4, priority=3, model="H100")],
        {"h-low-1", "h-low-2"},
        id="the node whose highest victim priority is lowest comes first"),
    pytest.param(
        [job("a-old", 0, 9000, gpus=8, priority=5, model="A100"),
         job("h-new", 10, 9000, gpus=8, priority=5, model="H100")],
        {"h-new"},
        id="on a tie the node whose highest-priority victims started latest"),
])
def test_per_pod_preemption_picks_the_node_upstream_picks(tmp_path, victims, want_preempted):
    urgent = job("urgent", 100, 600, gpus=8, priority=100, model="A100|H100")
    rows = replay_rows(tmp_path, NODES, [*victims, urgent], "kube-default")
    assert {r["workload_id"] for r in rows if r["event"] == "preempted"} == want_preempted
    started = [r["node"] for r in rows if r["event"] == "started" and r["workload_id"] == "urgent"]
    assert started == [next(r["node"] for r in rows if r["event"] == "preempted")]
