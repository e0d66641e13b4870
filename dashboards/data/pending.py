"""Why pending: a workload's events, its place in the queue, what keeps the waiting ones waiting."""

from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd

from dashboards.data.core import _WORKLOAD_FILTER, Filters, _df

# --------------------------------------------------------------------------------------------
# Why pending
# --------------------------------------------------------------------------------------------


def workload_details(
    con: duckdb.DuckDBPyConnection, run_id: str, workload_id: str
) -> dict[str, Any] | None:
    """One row of fct_workloads as a dict; None when the workload is not in the run."""
    df = _df(
        con,
        "SELECT * FROM fct_workloads WHERE run_id = $run_id AND workload_id = $workload_id",
        {"run_id": run_id, "workload_id": workload_id},
    )
    if df.empty:
        return None
    return df.iloc[0].to_dict()


def workload_timeline(
    con: duckdb.DuckDBPyConnection, run_id: str, workload_id: str
) -> pd.DataFrame:
    """One workload's events in order: seq, ts, time_s, event, pod_index, node, gpus, reason,
    message."""
    return _df(
        con,
        """
        SELECT seq, ts, time_s, event, pod_index, node, gpus, reason, message
        FROM fct_workload_timeline
        WHERE run_id = $run_id AND workload_id = $workload_id
        ORDER BY seq
        """,
        {"run_id": run_id, "workload_id": workload_id},
    )


def pending_workloads(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """Workloads still waiting at the end of the window, with their latest pending reason.

    "Waiting" means: submitted before the window ends, not rejected, not finished by then, and
    no pod running at that moment (never started, or all its pods preempted). Columns:
    workload_id, tenant, queue, kind, pods, min_count, gpus_requested, submit_ts, waited_s
    (since submission), latest_reason, latest_message, reason_ts.
    """
    return _df(
        con,
        f"""
        WITH window_end AS (
            SELECT coalesce($ts_to::TIMESTAMP, r.end_ts) AS ts
            FROM dim_runs r WHERE r.run_id = $run_id
        ),
        running_pods AS (
            -- pods running at the window's end, counted from the event stream
            SELECT t.workload_id,
                   sum(CASE WHEN t.event = 'started' THEN 1
                            WHEN t.event IN ('finished', 'preempted') THEN -1 ELSE 0 END)
                       AS running
            FROM fct_workload_timeline t, window_end e
            WHERE t.run_id = $run_id AND t.ts <= e.ts
            GROUP BY t.workload_id
        ),
        waiting AS (
            SELECT w.* FROM fct_workloads w
            CROSS JOIN window_end e
            LEFT JOIN running_pods p USING (workload_id)
            WHERE w.run_id = $run_id AND w.final_state <> 'rejected'
              AND w.submit_ts < e.ts
              AND coalesce(p.running, 0) <= 0
              AND NOT (w.final_state = 'finished' AND w.end_ts <= e.ts)
              AND {_WORKLOAD_FILTER}
        ),
        latest_reason AS (
            SELECT t.workload_id,
                   arg_max(t.reason, t.seq) AS latest_reason,
                   arg_max(t.message, t.seq) AS latest_message,
                   max(t.ts) AS reason_ts
            FROM fct_workload_timeline t, window_end e
            WHERE t.run_id = $run_id AND t.event = 'pending' AND t.ts < e.ts
              AND t.workload_id IN (SELECT workload_id FROM waiting)
            GROUP BY t.workload_id
        )
        SELECT w.workload_id, w.tenant, w.queue, w.kind, w.pods, w.min_count,
               w.pods * w.gpus_per_pod AS gpus_requested,
               w.submit_ts,
               date_diff('second', w.submit_ts, e.ts) AS waited_s,
               coalesce(l.latest_reason, 'no_attempt_yet') AS latest_reason,
               l.latest_message, l.reason_ts
        FROM waiting w CROSS JOIN window_end e
        LEFT JOIN latest_reason l USING (workload_id)
        ORDER BY waited_s DESC, w.workload_id
        """,
        filters.params(),
    )


def pending_by_reason(pending: pd.DataFrame) -> pd.DataFrame:
    """Group the output of :func:`pending_workloads` by latest reason."""
    if pending.empty:
        return pd.DataFrame(
            {"latest_reason": [], "workloads": [], "gpus_requested": [], "longest_wait_s": []}
        )
    grouped = (
        pending.groupby("latest_reason", dropna=False)
        .agg(
            workloads=("workload_id", "count"),
            gpus_requested=("gpus_requested", "sum"),
            longest_wait_s=("waited_s", "max"),
        )
        .reset_index()
        .sort_values(["workloads", "latest_reason"], ascending=[False, True])
        .reset_index(drop=True)
    )
    return grouped


def queue_position(
    con: duckdb.DuckDBPyConnection, run_id: str, workload_id: str, max_points: int = 200
) -> pd.DataFrame:
    """The workload's place in its queue at each of its pending attempts.

    Kueue's pending rows carry it (``queue_position`` of ``queue_length``): where they do,
    those are the positions (``source`` = ``kueue``). Otherwise the position is
    derived (``source`` = ``derived``): the queue is the workload's ClusterQueue (else its
    LocalQueue, else the whole cluster), ordered as the schedulers order it, higher priority
    first, then earlier submission; a workload counts as queued from its submission until its
    first pod starts. Columns: ts, position (1 = head), queued, source. At most ``max_points``
    evenly spaced attempts are kept.
    """
    reported = _df(
        con,
        """
        WITH attempts AS (
            SELECT t.ts, t.queue_position AS position, t.queue_length AS queued
            FROM fct_workload_timeline t
            WHERE t.run_id = $run_id AND t.workload_id = $workload_id AND t.event = 'pending'
              AND t.queue_position IS NOT NULL
        ),
        numbered AS (
            SELECT ts, position::BIGINT AS position, queued::BIGINT AS queued,
                   row_number() OVER (ORDER BY ts) - 1 AS i, count(*) OVER () AS n
            FROM attempts
        )
        SELECT ts, position, queued, 'kueue' AS source FROM numbered
        WHERE n <= $max_points OR i % ceil(n / $max_points)::BIGINT = 0 OR i = n - 1
        ORDER BY ts
        """,
        {"run_id": run_id, "workload_id": workload_id, "max_points": int(max_points)},
    )
    if not reported.empty:
        return reported
    return _df(
        con,
        """
        WITH me AS (
            SELECT workload_id, priority, submit_ts,
                   coalesce(cluster_queue, queue) AS queue_key
            FROM fct_workloads WHERE run_id = $run_id AND workload_id = $workload_id
        ),
        attempts AS (
            SELECT DISTINCT t.ts FROM fct_workload_timeline t
            WHERE t.run_id = $run_id AND t.workload_id = $workload_id AND t.event = 'pending'
        ),
        points AS (
            SELECT ts FROM (
                SELECT ts, row_number() OVER (ORDER BY ts) - 1 AS i, count(*) OVER () AS n
                FROM attempts
            ) WHERE n <= $max_points OR i % ceil(n / $max_points)::BIGINT = 0 OR i = n - 1
        ),
        rivals AS (
            SELECT w.workload_id, w.priority, w.submit_ts,
                   coalesce(w.first_start_ts, w.end_ts) AS left_ts
            FROM fct_workloads w, me
            WHERE w.run_id = $run_id AND w.final_state <> 'rejected'
              AND coalesce(w.cluster_queue, w.queue) IS NOT DISTINCT FROM me.queue_key
        )
        SELECT p.ts,
               1 + count(*) FILTER (WHERE r.workload_id <> me.workload_id AND (
                       r.priority > me.priority OR (r.priority = me.priority AND (
                           r.submit_ts < me.submit_ts OR (r.submit_ts = me.submit_ts
                               AND r.workload_id < me.workload_id)))))
                   AS position,
               1 + count(*) FILTER (WHERE r.workload_id <> me.workload_id) AS queued,
               'derived' AS source
        FROM points p CROSS JOIN me
        JOIN rivals r ON r.submit_ts <= p.ts AND (r.left_ts IS NULL OR r.left_ts > p.ts)
        GROUP BY p.ts
        ORDER BY p.ts
        """,
        {"run_id": run_id, "workload_id": workload_id, "max_points": int(max_points)},
    )


def workload_pods(con: duckdb.DuckDBPyConnection, run_id: str, workload_id: str) -> pd.DataFrame:
    """Every interval a pod of the workload held GPUs: pod_index, node, gpu_model, gpus,
    start_ts, end_ts, usage_class, gpu_hours (for a Gantt chart of its pods on nodes)."""
    return _df(
        con,
        """
        SELECT pod_index, node, gpu_model, gpus, start_ts, end_ts, usage_class,
               gpus * date_diff('millisecond', start_ts, end_ts) / 3600000.0 AS gpu_hours
        FROM fct_pod_intervals
        WHERE run_id = $run_id AND workload_id = $workload_id
        ORDER BY pod_index, start_ts
        """,
        {"run_id": run_id, "workload_id": workload_id},
    )
