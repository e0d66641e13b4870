"""v1.37 workload-aware preemption frees enough for the preemptor and evicts no more than needed."""

from tests.scheduler.scenario import job, node, replay_rows


def test_gang_v137_preemption_evicts_whole_groups_and_no_more_than_needed(tmp_path):
    # Three low-priority single-node jobs; a high-priority 2-node gang needs two nodes.
    # Equal priorities: the longest-running victim is the most important and is spared.
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2"), node("n3")],
        [
            job("low-a", 0, 9000, priority=10),
            job("low-b", 5, 9000, priority=10),
            job("low-c", 6, 9000, priority=10),
            job("urgent", 100, 600, pods=2, priority=1000),
        ],
        "gang-v1.37",
    )
    preempted = {(r["workload_id"], r["reason"]) for r in rows if r["event"] == "preempted"}
    assert preempted == {("low-b", "preempted-by:urgent"), ("low-c", "preempted-by:urgent")}
    assert {r["preemptor"] for r in rows if r["event"] in ("preempted", "requeued")} == {"urgent"}
    assert all(r["queue_position"] is None for r in rows)  # no Kueue: no queue place to report
    started = [(r["pod_index"], r["node"]) for r in rows if r["event"] == "started" and r["workload_id"] == "urgent"]
    assert [t for t in rows if t["event"] == "started" and t["workload_id"] == "urgent"][0]["time_s"] == 100.0
    assert sorted(n for _, n in started) == ["n2", "n3"]


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
    rows = replay_rows(tmp_path, [node("n1"), node("n2")], LOSS_SCENARIO, CHEAPEST_LOSS_PROFILE)
    assert [r["workload_id"] for r in rows if r["event"] == "preempted"] == ["old"]


def test_by_default_the_most_recently_started_victim_goes_first(tmp_path):
    rows = replay_rows(tmp_path, [node("n1"), node("n2")], LOSS_SCENARIO, "gang-v1.37")
    assert [r["workload_id"] for r in rows if r["event"] == "preempted"] == ["fresh"]
