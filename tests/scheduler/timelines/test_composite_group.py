"""A CompositePodGroup starts no child before its siblings can start too."""

from tests.scheduler.scenario import (
    GANG_V137_PREEMPTING,
    job,
    lowest_index,
    node,
    replay_rows,
    story,
)


def test_a_composite_group_starts_no_child_before_its_siblings_can(tmp_path):
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2"), node("n3")],
        [
            job("busy", 0, 1000),
            # A 1-node child would fit at once; the 2-node sibling only when "busy" ends.
            job("learner", 10, 500, parent_group="rl-run", parent_min_groups=2),
            job("actors", 20, 500, pods=2, parent_group="rl-run", parent_min_groups=2),
        ],
        lowest_index(GANG_V137_PREEMPTING),
    )
    children = story([r for r in rows if r["workload_id"] in ("learner", "actors")], events=("started",))
    assert [t[0] for t in children] == [1000.0, 1000.0, 1000.0]
    reasons = [(r["workload_id"], r["reason"]) for r in rows if r["event"] == "pending"]
    assert ("learner", "WaitingForGang") in reasons  # quorum: 1 of 2 child groups arrived
    assert any(w == "learner" and reason == "GangNotSatisfiable" for w, reason in reasons)


def test_a_composite_with_a_rack_constraint_keeps_all_children_in_one_rack(tmp_path):
    rows = replay_rows(
        tmp_path,
        [node("n1", rack="r1"), node("n2", rack="r1"), node("n3", rack="r2"), node("n4", rack="r2")],
        [
            job("a", 0, 500, parent_group="p", parent_topology_required="rack"),
            job("b", 0, 500, parent_group="p", parent_topology_required="rack"),
        ],
        lowest_index(GANG_V137_PREEMPTING),
    )
    nodes = {r["node"] for r in rows if r["event"] == "started"}
    assert nodes in ({"n1", "n2"}, {"n3", "n4"})


def test_a_composite_quorum_preempts_lower_priority_groups_to_start_together(tmp_path):
    """CompositePodGroup in workload-aware preemption (podgrouppreemption.go, with the
    composite's quorum as the preemptor): lower-priority groups are removed, the quorum is
    planned once, victims not needed by that plan are reprieved."""
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2"), node("n3")],
        [
            job("low-1", 0, 9000, priority=1),
            job("low-2", 1, 9000, priority=1),
            job("low-3", 2, 9000, priority=1),
            job("learner", 100, 500, priority=9, parent_group="rl", parent_min_groups=2),
            job("actor", 100, 500, priority=9, parent_group="rl", parent_min_groups=2),
        ],
        lowest_index(GANG_V137_PREEMPTING),
    )
    assert sorted(r["workload_id"] for r in rows if r["event"] == "preempted") == ["low-1", "low-2"]
    children = story([r for r in rows if r["workload_id"] in ("learner", "actor")], events=("started",))
    assert [t[0] for t in children] == [130.0, 130.0]  # together, once the victims terminated


def test_a_running_composite_is_one_victim_whose_children_go_together(tmp_path):
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2")],
        [
            job("learner", 0, 9000, priority=1, parent_group="rl", parent_min_groups=2, disruption_mode="all"),
            job("actor", 0, 9000, priority=1, parent_group="rl", parent_min_groups=2, disruption_mode="all"),
            job("urgent", 100, 500, priority=9),
        ],
        lowest_index(GANG_V137_PREEMPTING),
    )
    # disruptionMode All: urgent needs one node, and the composite goes as one victim
    assert sorted(r["workload_id"] for r in rows if r["event"] == "preempted") == ["actor", "learner"]
    assert {r["preemptor"] for r in rows if r["event"] == "preempted"} == {"urgent"}


def test_a_single_mode_composite_loses_only_the_pod_the_preemptor_needs(tmp_path):
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2")],
        [
            job("learner", 0, 9000, priority=1, parent_group="rl", parent_min_groups=2),
            job("actor", 0, 9000, priority=1, parent_group="rl", parent_min_groups=2),
            job("urgent", 100, 500, priority=9),
        ],
        lowest_index(GANG_V137_PREEMPTING),
    )
    # disruptionMode Single (the API default): each pod is a victim; the later-started or,
    # started together, the last by id among equals is the least important: one pod goes
    assert [r["workload_id"] for r in rows if r["event"] == "preempted"] == ["learner"]
