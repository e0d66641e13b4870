"""The GPU-hours a workload's policy on pod loss throws away are lost to preemption.

Under disruption mode Single the replay preempts single pods; with on_pod_loss
`replace_pod` (or `keep_running`) the group goes on: the victim pod has a `preempted` row
naming the preemptor and no `requeued` row follows. Its work since the group's last
checkpoint is lost to preemption, charged to the preemptor's eviction; the pod created again
is productive from its new start; the other pods stay productive throughout.
"""

from __future__ import annotations

import duckdb
from runs import RunBuilder
from tables import rows

from pipeline.build import build

START = "2026-11-02T00:00:00Z"


def _replaced_pod_run() -> RunBuilder:
    # g: 2 pods x 4 GPUs from 0, checkpoint every 600 s; at 1000 its pod 1 is preempted
    # for "u" (replace_pod: g goes on), and created again at 2000 when "u" is done
    return (
        RunBuilder(START, 7200, run_id="pod-loss")
        .node("n1", "A100", 8)
        .workload("g", pods=2, gpus_per_pod=4, checkpoint_interval_s=600, tenant="team-a")
        .workload("u", pods=1, gpus_per_pod=4, priority=10, tenant="team-b", submit_time_s=970)
        .event(0, "submitted", "g")
        .event(0, "started", "g", pod=0, node="n1", gpus=4)
        .event(0, "started", "g", pod=1, node="n1", gpus=4)
        .event(970, "submitted", "u")
        .event(1000, "preempted", "g", pod=1, node="n1", gpus=4, reason="preempted-by:u", preemptor="u")
        .event(1000, "started", "u", pod=0, node="n1", gpus=4)
        .event(2000, "finished", "u", pod=0, node="n1", gpus=4)
        .event(2000, "started", "g", pod=1, node="n1", gpus=4)
        .event(5000, "finished", "g", pod=0, node="n1", gpus=4)
        .event(5000, "finished", "g", pod=1, node="n1", gpus=4)
    )


def test_a_pod_lost_alone_is_lost_to_preemption_and_its_group_stays_productive(tmp_path, prices_csv):
    run = _replaced_pod_run().write(tmp_path / "runs")
    result = build([run], prices_csv, tmp_path / "finops.duckdb", show_progress=False)
    con = duckdb.connect(str(result.db), read_only=True)
    try:
        intervals = rows(con, """select workload_id, pod_index, start_s, end_s, usage_class, preemptor
                                 from int_pod_intervals where workload_id = 'g' order by pod_index, start_s""")
        preemptions = rows(con, "select workload_id, preemptor from int_preemptions")
    finally:
        con.close()
    assert intervals == [
        ("g", 0, 0.0, 5000.0, "productive", None),
        ("g", 1, 0.0, 600.0, "productive", None),  # the last checkpoint before 1000
        ("g", 1, 600.0, 1000.0, "lost_to_preemption", "u"),
        ("g", 1, 2000.0, 5000.0, "productive", None),  # created again: productive from its start
    ]
    assert preemptions == [("g", "u")]
