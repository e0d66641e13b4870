"""A gang that requires one rack lands within one rack, or waits with TopologyUnsatisfiable."""

from tests.scheduler.scenario import (
    GANG_V137_PER_POD_CLAIMS,
    job,
    lowest_index,
    node,
    replay_rows,
    story,
)

CLUSTER = [node("n1", model="A100", rack="r1"), node("n2", model="A100", rack="r1"),
           node("n3", model="H100", rack="r2"), node("n4", model="H100", rack="r2")]
# One busy node in each rack (the model steers them), so 2 free nodes exist but no free rack.
BUSY = [job("busy-r1", 0, 5000, model="A100"), job("busy-r2", 0, 1000, model="H100")]


def test_a_rack_required_gang_waits_until_one_rack_has_room(tmp_path):
    rows = replay_rows(
        tmp_path, CLUSTER, BUSY + [job("gang", 10, 300, pods=2, model="A100|H100", topology_required="rack")], lowest_index("gang-v1.37")
    )
    gang = story([r for r in rows if r["workload_id"] == "gang"], events=("started",))
    assert gang == [(1000.0, "started", "gang", 0, "n3"), (1000.0, "started", "gang", 1, "n4")]
    pending = next(r for r in rows if r["workload_id"] == "gang" and r["event"] == "pending")
    assert pending["reason"] == "TopologyUnsatisfiable"
    assert "can hold 2 pods x 8 GPUs" in pending["message"] and "fits 1" in pending["message"]


def test_without_the_constraint_the_same_gang_spans_racks_at_once(tmp_path):
    rows = replay_rows(tmp_path, CLUSTER, BUSY + [job("gang", 10, 300, pods=2, model="A100|H100")],
                       lowest_index(GANG_V137_PER_POD_CLAIMS))
    gang = story([r for r in rows if r["workload_id"] == "gang"], events=("started",))
    assert gang == [(10.0, "started", "gang", 0, "n2"), (10.0, "started", "gang", 1, "n4")]


def test_preferred_topology_falls_back_to_the_whole_cluster(tmp_path):
    rows = replay_rows(
        tmp_path, CLUSTER, BUSY + [job("gang", 10, 300, pods=2, model="A100|H100", topology_preferred="rack")],
        lowest_index(GANG_V137_PER_POD_CLAIMS),
    )
    gang = story([r for r in rows if r["workload_id"] == "gang"], events=("started",))
    assert [t[0] for t in gang] == [10.0, 10.0]
