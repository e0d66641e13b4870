"""A gang that can never fit is rejected with its numbers."""

from tests.scheduler.scenario import job, node, replay_rows


def test_a_gang_larger_than_the_cluster_is_rejected_with_its_numbers(tmp_path):
    rows = replay_rows(tmp_path, [node("n1"), node("n2")], [job("huge", 0, 100, pods=3)], "gang-v1.37")
    assert [r["event"] for r in rows] == ["submitted", "rejected"]
    assert rows[1]["reason"] == "LargerThanCluster"
    assert "16" in rows[1]["message"]
