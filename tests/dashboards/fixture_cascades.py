"""fct_preemption_cascades of the fixture database (fixture_db.py).

=SUM(A1)'s one preempted pod event (hour 20, by gang-2, priority 100 over 0, hours 18-20 of
2 A100 GPUs lost: 4 GPU-hours, $8) is a chain of its own at depth 1: gang-2 was never
preempted. Its chain_id and event_seq are the seq of that row of the fixture's timeline.
"""

from __future__ import annotations

from datetime import datetime

import duckdb

DDL = """
CREATE TABLE fct_preemption_cascades (run_id VARCHAR, chain_id BIGINT, depth INTEGER,
    event_seq BIGINT, parent_seq BIGINT, preempted_at TIMESTAMP, victim_workload_id VARCHAR,
    victim_pod_index INTEGER, victim_attempt BIGINT, victim_priority INTEGER, victim_kind VARCHAR,
    victim_tenant VARCHAR, preemptor_workload_id VARCHAR, preemptor_priority INTEGER,
    preemptor_kind VARCHAR, preemptor_tenant VARCHAR, root_workload_id VARCHAR,
    lost_gpu_hours DOUBLE, lost_cost DOUBLE);
"""


def add_preemption_cascades(con: duckdb.DuckDBPyConnection, timeline: list[tuple]) -> None:
    """Create the table and write its one row; ``timeline`` is fixture_db.TIMELINE (its index is
    the rows' seq)."""
    con.execute(DDL)
    seq = next(i for i, row in enumerate(timeline) if row[1] == "=SUM(A1)" and row[3] == "preempted")
    con.execute(
        "INSERT INTO fct_preemption_cascades VALUES (?, ?, 1, ?, NULL, ?, '=SUM(A1)', 0, 0, 0, 'fine-tune',"
        " 'ml-research', 'gang-2', 100, 'training', 'team-o''brien', 'gang-2', 4.0, 8.0)",
        ["demo-a", seq, seq, datetime(2026, 11, 2, 20)],
    )
