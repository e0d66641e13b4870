"""Properties of the admission layer on random small cohorts: quota is never exceeded at any
level of the tree, every usage change balances out, and every workload that is still waiting
at the end has a reason in the event log."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.admission import parse_queue_config
from scheduler.admission.kueue import KueueAdmission
from scheduler.eventlog.writer import EventLogWriter
from scheduler.framework.profile import load_profile
from scheduler.runner import Replay
from tests.builders import make_cluster, make_workload
from tests.scheduler.admission_story import cluster_queue, queues

POLICIES = st.sampled_from(["{}", "{reclaimWithinCohort: Any}", "{reclaimWithinCohort: LowerPriority, withinClusterQueue: LowerPriority}",
                            "{reclaimWithinCohort: LowerPriority, borrowWithinCohort: {policy: LowerPriority}}"])
QUEUE = st.fixed_dictionaries({
    "gpus": st.integers(0, 16),
    "limit": st.one_of(st.none(), st.integers(0, 8)),
    "strategy": st.sampled_from(["BestEffortFIFO", "StrictFIFO"]),
    "preemption": POLICIES,
})
JOB = st.fixed_dictionaries({
    "queue": st.sampled_from(["team-a", "team-b"]),
    "pods": st.integers(1, 2),
    "gpus": st.sampled_from([1.0, 2.0, 4.0, 8.0]),
    "at": st.integers(0, 600),
    "duration": st.integers(60, 3000),
    "priority": st.sampled_from([0, 10]),
})


class CheckedKueue(KueueAdmission):
    """Checks the quota invariants after every admission cycle and every release (inside a
    cycle, a preemptor's usage is reserved on top of its victims' until the cycle ends)."""

    def _cycle(self):
        super()._cycle()
        self.check()

    def _free(self, wl):
        super()._free(wl)
        self.check()

    def check(self) -> None:
        for name, node in self.tree.queues.items():
            held = {}
            for wl in self.holders.by_queue[name].values():
                for fr, value in wl.usage.items():
                    held[fr] = held.get(fr, 0) + value
            assert held == {fr: v for fr, v in node.usage.items() if v}, name
            for fr, value in node.usage.items():
                limit = node.borrowing_limit.get(fr)
                if limit is not None:
                    assert value <= node.subtree.get(fr, 0) + limit, (name, fr)
        for node in self.tree.cohorts.values():
            if node.parent is None:
                for fr, value in node.usage.items():
                    assert 0 <= value <= node.subtree.get(fr, 0), (node.name, fr)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(a=QUEUE, b=QUEUE, jobs=st.lists(JOB, min_size=1, max_size=12), fair=st.booleans())
def test_quota_is_never_exceeded_and_every_waiting_workload_says_why(a, b, jobs, fair):
    manifests = queues(
        cluster_queue("team-a", a["gpus"], cohort="org", borrowing_limit=a["limit"], strategy=a["strategy"], preemption=a["preemption"]),
        cluster_queue("team-b", b["gpus"], cohort="org", borrowing_limit=b["limit"], strategy=b["strategy"], preemption=b["preemption"]),
        *(["apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing: {enable: true}\n"] if fair else []),
    )
    config = parse_queue_config(manifests)
    workloads = sorted(
        (make_workload(workload_id=f"w{i}", submit_time_s=float(j["at"]), duration_s=float(j["duration"]), pods=j["pods"],
                       gpus_per_pod=j["gpus"], queue=j["queue"], tenant=j["queue"], priority=j["priority"])
         for i, j in enumerate(jobs)),
        key=lambda w: w.submit_time_s,
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events.parquet"
        writer = EventLogWriter(path)
        replay = Replay(make_cluster(nodes=3), workloads, [], load_profile("gang-v1.37"), writer, seed=1,
                        admission_factory=lambda r: CheckedKueue(r, config))
        replay.run()
        writer.close()
        rows = pq.read_table(path).to_pylist()
    last = {}
    for row in rows:
        last[row["workload_id"]] = row
    for wid, row in last.items():
        if row["event"] != "finished":  # still waiting at the end: the log says why
            assert any(r["event"] == "pending" and r["workload_id"] == wid for r in rows), wid
