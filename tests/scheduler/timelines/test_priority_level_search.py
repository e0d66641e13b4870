"""KEP-5710's search for the lowest sufficient priority level (`PriorityLevelSearchPreemption`):
NOT upstream behaviour, a proposal upstream dropped; the golden timelines show what it changes.

Four nodes of 8 GPUs: two priority-100 jobs on n1 and n2, two priority-0 jobs on n3 and n4; at
t=100 a priority-1000 one-node job arrives. Upstream's workload-aware preemption plans it once
on the cluster without every lower priority: the lowest index, n1, whose priority-100 job goes.
The level search plans it without priority 0 first, where it fits on n3: a priority-0 job goes,
and the cascade upstream's plan sets off (the evicted priority-100 job preempting in turn) is gone.
"""

from __future__ import annotations

from scheduler.commands import replay
from tests.scheduler.scenario import job, lowest_index, node, replay_rows

NODES = [node("n1"), node("n2"), node("n3"), node("n4")]
WORKLOADS = [job("mid-1", 0, 9000, priority=100), job("mid-2", 0, 9000, priority=100),
             job("low-1", 1, 9000, priority=0), job("low-2", 1, 9000, priority=0),
             job("urgent", 100, 500, priority=1000)]


def _profile(plugin: str) -> str:
    return lowest_index(f'name = "{plugin}"\nunit = "pod_group"\n[extension_points]\npost_filter = ["{plugin}"]\n')


def _victims(rows):
    return [(r["time_s"], r["workload_id"], r["node"], r["preemptor"]) for r in rows if r["event"] == "preempted"]


def test_upstream_plans_once_without_every_lower_priority(tmp_path):
    rows = replay_rows(tmp_path, NODES, WORKLOADS, _profile("WorkloadPreemption"))
    # the victim terminates for 30 s; the restarted priority-100 job then preempts in turn
    assert _victims(rows) == [(130.0, "mid-1", "n1", "urgent"), (161.0, "low-1", "n3", "mid-1")]


def test_the_level_search_takes_the_lowest_level_that_suffices(tmp_path):
    rows = replay_rows(tmp_path, NODES, WORKLOADS, _profile("PriorityLevelSearchPreemption"))
    assert _victims(rows) == [(130.0, "low-1", "n3", "urgent")]  # and no cascade


def test_the_level_search_goes_up_a_level_when_the_lower_one_does_not_suffice(tmp_path):
    two_nodes = [*WORKLOADS[:4], job("urgent", 100, 500, pods=3, priority=1000)]
    rows = replay_rows(tmp_path, NODES, two_nodes, _profile("PriorityLevelSearchPreemption"))
    # priority 0 holds two nodes, the preemptor needs three: the search plans with every lower
    # level removed, as upstream does, and the same victims go
    by_urgent = sorted(v[1] for v in _victims(rows) if v[3] == "urgent")
    (tmp_path / "upstream").mkdir()
    upstream = replay_rows(tmp_path / "upstream", NODES, two_nodes, _profile("WorkloadPreemption"))
    assert by_urgent == sorted(v[1] for v in _victims(upstream) if v[3] == "urgent") == ["low-1", "mid-1", "mid-2"]


def test_a_replay_with_it_says_it_is_not_upstream_behaviour(tmp_path):
    replay_rows(tmp_path, NODES, WORKLOADS, _profile("PriorityLevelSearchPreemption"))
    (tmp_path / "again").mkdir()
    result = replay(tmp_path / "trace.csv", tmp_path / "cluster.csv", tmp_path / "again" / "run",
                    profile=str(tmp_path / "profile.toml"))
    assert any("a proposal upstream dropped, not upstream behaviour" in w for w in result.warnings)


def test_no_shipped_profile_enables_it():
    from scheduler.framework.profile import load_profile, shipped_profiles

    assert all("PriorityLevelSearchPreemption" not in load_profile(name).post_filter for name in shipped_profiles())


def test_a_verified_replay_with_the_search_writes_the_same_log(tmp_path):
    """Its plans are made by removal (the view is the cluster without every lower level); the
    verifier still checks the deferred reprieves against the one-by-one twin."""
    import pyarrow.parquet as pq

    from scheduler.verify import Verifier

    replay_rows(tmp_path, NODES, WORKLOADS, _profile("PriorityLevelSearchPreemption"))
    verifier = Verifier()
    replay(tmp_path / "trace.csv", tmp_path / "cluster.csv", tmp_path / "verified",
           profile=str(tmp_path / "profile.toml"), verifier=verifier)
    assert verifier.checks["victims with deferred reprieves"] > 0
    assert pq.read_table(tmp_path / "verified" / "events.parquet").to_pylist() == \
        pq.read_table(tmp_path / "run" / "events.parquet").to_pylist()
