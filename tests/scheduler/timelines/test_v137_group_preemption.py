"""v1.37 workload-aware preemption frees enough for the preemptor and evicts no more than needed."""

import pytest

from tests.scheduler.scenario import GANG_V137_PREEMPTING, job, lowest_index, node, replay_rows


def test_gang_v137_preemption_evicts_whole_groups_and_no_more_than_needed(tmp_path):
    """kube-scheduler podgrouppreemption.go (selectVictimsOnDomain): every lower-priority
    group is removed, the preemptor is planned once (its proposed assignment), and victims
    are reprieved when the assignment still fits with them back: a group on a node the
    assignment does not use is always spared."""
    # Three low-priority single-node jobs; a high-priority 2-node gang needs two nodes. With
    # all three removed the plan takes n1 and n2 (equal scores: the lowest index here,
    # kube-scheduler draws at random), so low-c on n3 is reprieved.
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2"), node("n3")],
        [
            job("low-a", 0, 9000, priority=10),
            job("low-b", 5, 9000, priority=10),
            job("low-c", 6, 9000, priority=10),
            job("urgent", 100, 600, pods=2, priority=1000),
        ],
        lowest_index(GANG_V137_PREEMPTING),
    )
    preempted = {(r["workload_id"], r["reason"]) for r in rows if r["event"] == "preempted"}
    assert preempted == {("low-a", "preempted-by:urgent"), ("low-b", "preempted-by:urgent")}
    assert {r["preemptor"] for r in rows if r["event"] in ("preempted", "requeued")} == {"urgent"}
    assert all(r["queue_position"] is None for r in rows)  # no Kueue: no queue place to report
    started = [(r["pod_index"], r["node"]) for r in rows if r["event"] == "started" and r["workload_id"] == "urgent"]
    # the victims terminate for the 30 s grace period first (terminationGracePeriodSeconds)
    assert [t for t in rows if t["event"] == "started" and t["workload_id"] == "urgent"][0]["time_s"] == 130.0
    assert sorted(n for _, n in started) == ["n1", "n2"]


@pytest.mark.parametrize(("victims", "want_preempted"), [
    pytest.param(
        # started first, a single pod would be spared before a gang under start-time order
        [job("single-old", 0, 9000, gpus=4, priority=10), job("single-new", 5, 9000, gpus=4, priority=10),
         job("gang", 10, 9000, pods=2, gpus=4, priority=10, disruption_mode="all")],
        ["single-new", "single-old"], id="a gang is more important than single pods of its priority"),
    pytest.param(
        [job("small-gang", 0, 9000, pods=2, gpus=4, priority=10, disruption_mode="all"),
         job("big-gang", 10, 9000, pods=4, gpus=2, priority=10, disruption_mode="all")],
        ["small-gang"], id="a larger gang is more important than a smaller one"),
    pytest.param(
        [job("gang-old", 0, 9000, pods=2, gpus=4, priority=10, disruption_mode="all"), job("gang-new", 10, 9000, pods=2, gpus=4, priority=10, disruption_mode="all")],
        ["gang-new"], id="between gangs of one size the earlier start is more important"),
    pytest.param(
        [job("high", 0, 9000, gpus=4, priority=20), job("gang", 10, 9000, pods=3, gpus=4, priority=10, disruption_mode="all")],
        ["gang"], id="priority comes first"),
], )
def test_victims_are_reprieved_in_more_important_pod_group_order(tmp_path, victims, want_preempted):
    """kube-scheduler MoreImportantVictim (preemption/util.go): priority; a gang before a
    single pod; single pods by earlier start; gangs by size, then earlier start. The gangs
    here say disruptionMode All (each is one victim). One node of 16 GPUs, full; the
    preemptor needs 8: reprieved most important first while it fits."""
    rows = replay_rows(tmp_path, [node("n1", gpus=16)],
                       [*victims, job("urgent", 100, 600, gpus=8, priority=1000)], lowest_index(GANG_V137_PREEMPTING))
    assert sorted(r["workload_id"] for r in rows if r["event"] == "requeued") == sorted(want_preempted)


CHEAPEST_LOSS_PROFILE = """
name = "gang-v1.37-cheapest-loss"
unit = "pod_group"
[extension_points]
post_filter = ["WorkloadPreemption"]
[plugin_args.WorkloadPreemption]
victim_order = "cheapest_loss"
"""


# At t=1500: "old" (started 0, checkpoints every 1000 s) would lose 500 s of work;
# "fresh" (started 600, never checkpoints) would lose 900 s.
LOSS_SCENARIO = [
    job("old", 0, 9000, priority=10, checkpoint=1000),
    job("fresh", 600, 9000, priority=10),
    job("urgent", 1500, 100, priority=1000),
]


def test_victims_can_be_chosen_by_the_cheapest_loss(tmp_path):
    rows = replay_rows(tmp_path, [node("n1"), node("n2")], LOSS_SCENARIO, lowest_index(CHEAPEST_LOSS_PROFILE))
    assert [r["workload_id"] for r in rows if r["event"] == "preempted"] == ["old"]


def test_by_default_the_victim_on_the_proposed_node_goes(tmp_path):
    """Upstream reprieves against the preemptor's proposed assignment: with both jobs
    removed the plan takes n1 (ties: lowest index here), so "old" is the victim whatever its
    importance, and "fresh" on n2 is spared."""
    rows = replay_rows(tmp_path, [node("n1"), node("n2")], LOSS_SCENARIO, lowest_index(GANG_V137_PREEMPTING))
    assert [r["workload_id"] for r in rows if r["event"] == "requeued"] == ["old"]


def test_the_preemptor_is_planned_once_with_every_lower_priority_victim_gone(tmp_path):
    """podgrouppreemption.go selectVictimsOnDomain: one plan on the cluster without every
    lower-priority victim, then reprieves against that plan; no search over priority levels
    (KEP-5710's binary search was dropped). The plan takes n1 (both nodes empty, lowest
    index), so "mid" on n1 is the victim although evicting "low" on n2 would have done."""
    rows = replay_rows(tmp_path, [node("n1"), node("n2")],
                       [job("mid", 0, 9000, priority=5), job("low", 5, 9000, priority=1),
                        job("urgent", 100, 600, priority=9)], lowest_index(GANG_V137_PREEMPTING))
    assert [r["workload_id"] for r in rows if r["event"] == "preempted" and r["preemptor"] == "urgent"] == ["mid"]
    # mid, requeued, then preempts low in its turn (a cascade is upstream's behaviour too)
    assert [(r["workload_id"], r["preemptor"]) for r in rows if r["event"] == "preempted"] == [
        ("mid", "urgent"), ("low", "mid")]
