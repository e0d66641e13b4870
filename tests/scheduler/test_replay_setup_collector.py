"""Building a replay allocates an object graph per workload (its run, its arrival event) that
lives for the whole replay: the cyclic collector, left on, would scan every object already
built (the trace, the cluster) again and again while it grows. `Replay.__init__` builds with
the collector off and puts it back as it was; decisions never depend on the collector.
Before, building bench-1m's replay ran collections that took half of its CPU time.
"""

from __future__ import annotations

import gc

import pytest

from scheduler.eventlog.writer import EventLogWriter
from scheduler.framework.profile import load_profile
from scheduler.model import Cluster
from scheduler.runner import Replay
from tests.scheduler.builders import make_node, make_workload


@pytest.mark.parametrize("enabled_before", [True, False])
def test_building_a_replay_runs_no_collection_and_leaves_the_collector_as_it_was(tmp_path, enabled_before):
    cluster = Cluster(tuple(make_node(f"node-{i}").obj() for i in range(4)))
    workloads = [make_workload(f"w{i}").at(float(i)).obj() for i in range(5000)]  # well past 700 allocations
    collections: list[int] = []

    def counted(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    writer = EventLogWriter(tmp_path / "events.parquet")
    profile = load_profile("gang-v1.37")
    was_enabled = gc.isenabled()
    (gc.enable if enabled_before else gc.disable)()
    gc.collect()  # the young generation's count at 0: the few allocations before the build cannot fill it
    gc.callbacks.append(counted)
    try:
        Replay(cluster, workloads, [], profile, writer, seed=1)
        assert gc.isenabled() is enabled_before
    finally:
        gc.callbacks.remove(counted)
        (gc.enable if was_enabled else gc.disable)()
        writer.abort()
    # No collection while building; once the collector is back, the next allocation runs one young
    # collection, which moves everything built out of the young generation in one pass.
    assert collections == ([0] if enabled_before else [])
