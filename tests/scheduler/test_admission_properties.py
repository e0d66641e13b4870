"""Properties of the admission layer on random small cohorts: quota is never exceeded at any
level of the tree, every usage change balances out, and every workload that is still waiting
at the end has a reason in the event log."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.admission.kueue import KueueAdmission
from scheduler.admission.policies import (
    BorrowWithinCohortPolicy,
    PreemptionPolicy,
    QueueingStrategy,
)
from scheduler.eventlog.writer import EventLogWriter
from scheduler.framework.profile import load_profile
from scheduler.model.cluster import Cluster
from scheduler.runner import Replay
from tests.scheduler.admission_state import with_local_queues
from tests.scheduler.admission_story import A100
from tests.scheduler.builders import (
    make_cluster_queue,
    make_configuration,
    make_node,
    make_workload,
    queue_config,
)

LOWER = PreemptionPolicy.LOWER_PRIORITY
POLICIES = st.sampled_from([
    {}, {"reclaim": PreemptionPolicy.ANY}, {"reclaim": LOWER, "within": LOWER},
    {"reclaim": LOWER, "borrow": BorrowWithinCohortPolicy.LOWER_PRIORITY},
])
QUEUE = st.fixed_dictionaries({
    "gpus": st.integers(0, 16),
    "limit": st.one_of(st.none(), st.integers(0, 8)),
    "strategy": st.sampled_from(list(QueueingStrategy)),
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
            held: dict[tuple[str, str], int] = {}
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
    teams = [
        make_cluster_queue(name).cohort("org").quota("a100", gpus=q["gpus"], borrowing_limit=q["limit"])
        .strategy(q["strategy"]).preemption(**q["preemption"]).obj()
        for name, q in (("team-a", a), ("team-b", b))
    ]
    config = queue_config(*with_local_queues([A100.obj(), *teams, *([make_configuration().fair_sharing().obj()] if fair else [])]))
    workloads = sorted(
        (make_workload(f"w{i}").at(j["at"]).runs_for(j["duration"]).pods(j["pods"]).gpus(j["gpus"]).queue(j["queue"])
         .tenant(j["queue"]).priority(j["priority"]).obj() for i, j in enumerate(jobs)),
        key=lambda w: w.submit_time_s,
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events.parquet"
        writer = EventLogWriter(path)
        cluster = Cluster(tuple(make_node(f"node-{i}").obj() for i in range(3)))
        replay = Replay(cluster, workloads, [], load_profile("gang-v1.37"), writer, seed=1,
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
