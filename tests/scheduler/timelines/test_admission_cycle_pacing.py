"""Kueue's scheduler loop slows down after cycles that admit nothing.

Upstream: pkg/scheduler/scheduler.go `schedule` returns `wait.SlowDown` when no entry of the
cycle was admitted (assumed), `wait.KeepGoing` otherwise; pkg/util/wait/backoff.go
`UntilWithBackoff` then waits 1 ms before the next cycle, doubling up to 100 ms, and runs the
next one at once after a KeepGoing. The replay runs a follow-up cycle at the same instant
(`SAME_INSTANT_SLOW_CYCLES` in a row, more than the demo's and the bench presets' longest
runs), then waits the full 100 ms before each further one until a cycle admits: before
this bound, two heads taking turns (one preempting a terminating victim, the other skipped
as "no longer fits" with flavors still to try) cycled at one simulated instant forever,
where upstream's clock moves on until the victim is gone.
"""

from __future__ import annotations

import pytest

from scheduler.admission.cycles import CYCLE_BACKOFF_MAX_S, SAME_INSTANT_SLOW_CYCLES
from tests.scheduler.admission_story import A100, kueue_rows
from tests.scheduler.builders import make_cluster_queue, make_node, make_workload

WAITING = 80  # more heads than the same-instant bound, each of its own shape


def test_a_long_run_of_cycles_that_admit_nothing_is_paced_at_kueues_longest_backoff(tmp_path):
    """"holder" fills team-a's 8 GPUs of quota for 1000 s. At 10 s, 80 workloads of 80
    priorities (80 shapes: none is parked with another) arrive; BestEffortFIFO pops one per
    cycle, each is NoFit and parked, and the next head gets its turn. The first cycles run
    at 10 s; after the bound, one cycle per 100 ms."""
    objects = [A100.obj(), make_cluster_queue("team-a").quota("a100", gpus=8).strategy("BestEffortFIFO").obj()]
    jobs = [make_workload("holder").queue("team-a").at(0).runs_for(1000).gpus(8).obj()]
    jobs += [make_workload(f"w{i:02d}").queue("team-a").at(10).runs_for(100).gpus(1).priority(100 - i).obj()
             for i in range(WAITING)]
    rows = kueue_rows(tmp_path, [make_node("n1").obj()], jobs, objects)
    first_row = {}
    for row in rows:
        if row["event"] == "pending" and row["workload_id"] != "holder":
            first_row.setdefault(row["workload_id"], row["time_s"])
    times = [first_row[f"w{i:02d}"] for i in range(WAITING)]  # in heap order: priority, highest first
    at_once = SAME_INSTANT_SLOW_CYCLES + 1  # the first cycle and the follow-ups run at 10 s
    assert times[:at_once] == [10.0] * at_once
    paced = times[at_once:]
    assert paced == pytest.approx([10.0 + CYCLE_BACKOFF_MAX_S * k for k in range(1, len(paced) + 1)])
