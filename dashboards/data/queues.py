"""Kueue queues (quota use against nominal quota and borrowing) and preemption (victims, lost
GPU-hours and their cost).

Queue usage comes from the ``fct_queue_usage`` mart, one row per run × ClusterQueue × flavor ×
charge period: ``admitted_gpus`` and ``borrowed_gpus`` (time-weighted mean GPUs in the period),
``nominal_quota`` and ``borrowing_limit`` (GPUs; a null limit means no limit). A database built
before that mart, or a run replayed without a queues file, has no rows: the page says so.
"""

from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd

from dashboards.data.core import (
    _FOCUS_TENANT,
    _FOCUS_WHERE,
    _USAGE_TENANT,
    _USAGE_WHERE,
    _WORKLOAD_FILTER,
    Filters,
    _df,
    _execute,
    check_bucket,
    focus_gpu_rows,
    table_columns,
)

QUEUE_USAGE_COLUMNS = ("run_id", "cluster_queue", "cohort", "flavor", "charge_period_start",
                       "admitted_gpus", "nominal_quota", "borrowing_limit", "borrowed_gpus")


def _has_queue_usage(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the database has fct_queue_usage (databases built before it do not)."""
    return set(QUEUE_USAGE_COLUMNS) <= table_columns(con, "fct_queue_usage")


# Rows of fct_queue_usage in the selection (alias q). A team filter keeps the ClusterQueues
# that hold the selected teams' workloads; quotas are per flavor, so the GPU model filter does
# not apply (the page offers a flavor picker instead).
_QUEUE_WHERE = """
        q.run_id = $run_id
        AND ($ts_from::TIMESTAMP IS NULL OR q.charge_period_start >= $ts_from::TIMESTAMP)
        AND ($ts_to::TIMESTAMP IS NULL OR q.charge_period_start < $ts_to::TIMESTAMP)
        AND ($flavor::VARCHAR IS NULL OR q.flavor = $flavor::VARCHAR)
        AND (len($tenants::VARCHAR[]) = 0 OR q.cluster_queue IN (
            SELECT w.cluster_queue FROM fct_workloads w
            WHERE w.run_id = $run_id AND list_contains($tenants::VARCHAR[], w.tenant)))
"""


def _empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({c: [] for c in columns})


def list_cluster_queues(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """cluster_queue, cohort, flavor, nominal_quota, borrowing_limit of the run (no dates)."""
    columns = ["cluster_queue", "cohort", "flavor", "nominal_quota", "borrowing_limit"]
    if not _has_queue_usage(con):
        return _empty(columns)
    return _df(
        con,
        """
        SELECT q.cluster_queue, any_value(q.cohort) AS cohort, q.flavor,
               max(q.nominal_quota) AS nominal_quota, max(q.borrowing_limit) AS borrowing_limit
        FROM fct_queue_usage q
        WHERE q.run_id = $run_id
        GROUP BY q.cluster_queue, q.flavor
        ORDER BY q.cluster_queue, q.flavor
        """,
        filters.params(),
    )


def queue_usage_over_time(
    con: duckdb.DuckDBPyConnection, filters: Filters, bucket: str = "hour",
    flavor: str | None = None,
) -> pd.DataFrame:
    """Per ClusterQueue and ``bucket``: mean admitted and borrowed GPUs, nominal quota and the
    borrowing ceiling (nominal + borrowing limit; null when borrowing is unlimited), summed over
    flavors (or for one ``flavor``)."""
    columns = ["period_start", "cluster_queue", "admitted_gpus", "borrowed_gpus",
               "nominal_quota", "borrowing_ceiling"]
    if not _has_queue_usage(con):
        return _empty(columns)
    return _df(
        con,
        f"""
        WITH per_flavor AS (
            SELECT date_trunc($bucket, q.charge_period_start) AS period_start, q.cluster_queue,
                   q.flavor, avg(q.admitted_gpus) AS admitted_gpus,
                   avg(q.borrowed_gpus) AS borrowed_gpus, max(q.nominal_quota) AS nominal_quota,
                   max(q.borrowing_limit) AS borrowing_limit,
                   bool_or(q.borrowing_limit IS NULL) AS unlimited
            FROM fct_queue_usage q
            WHERE {_QUEUE_WHERE}
            GROUP BY ALL
        )
        SELECT period_start, cluster_queue,
               sum(admitted_gpus) AS admitted_gpus, sum(borrowed_gpus) AS borrowed_gpus,
               sum(nominal_quota) AS nominal_quota,
               CASE WHEN bool_or(unlimited) THEN NULL
                    ELSE sum(nominal_quota) + sum(borrowing_limit) END AS borrowing_ceiling
        FROM per_flavor
        GROUP BY ALL
        ORDER BY cluster_queue, period_start
        """,
        {**filters.params(), "bucket": check_bucket(bucket), "flavor": flavor},
    )


def queue_usage_summary(
    con: duckdb.DuckDBPyConnection, filters: Filters, flavor: str | None = None
) -> pd.DataFrame:
    """Per ClusterQueue × flavor over the selection: quota, mean and peak admitted GPUs, the
    share of nominal quota used, and borrowed GPU-hours."""
    columns = ["cluster_queue", "cohort", "flavor", "nominal_quota", "borrowing_limit",
               "mean_admitted_gpus", "peak_admitted_gpus", "nominal_used_pct",
               "peak_borrowed_gpus", "borrowed_gpu_hours"]
    if not _has_queue_usage(con):
        return _empty(columns)
    return _df(
        con,
        f"""
        SELECT q.cluster_queue, any_value(q.cohort) AS cohort, q.flavor,
               max(q.nominal_quota) AS nominal_quota, max(q.borrowing_limit) AS borrowing_limit,
               avg(q.admitted_gpus) AS mean_admitted_gpus,
               max(q.admitted_gpus) AS peak_admitted_gpus,
               avg(q.admitted_gpus) / nullif(max(q.nominal_quota), 0) AS nominal_used_pct,
               max(q.borrowed_gpus) AS peak_borrowed_gpus,
               -- one row per charge period: its mean GPUs x the period's hours
               sum(q.borrowed_gpus) * coalesce(any_value(p.charge_hours), 1.0) AS borrowed_gpu_hours
        FROM fct_queue_usage q
        LEFT JOIN (
            -- every record of a run spans one charge period
            SELECT epoch(f.ChargePeriodEnd - f.ChargePeriodStart) / 3600.0 AS charge_hours
            FROM focus_cost_records f WHERE f.x_RunId = $run_id LIMIT 1
        ) p ON TRUE
        WHERE {_QUEUE_WHERE}
        GROUP BY q.cluster_queue, q.flavor
        ORDER BY q.cluster_queue, q.flavor
        """,
        {**filters.params(), "flavor": flavor},
    )


def cluster_queue_holdings(
    con: duckdb.DuckDBPyConnection, filters: Filters, bucket: str = "hour"
) -> pd.DataFrame:
    """Mean GPUs held per ClusterQueue and ``bucket``, from the FOCUS records' x_ClusterQueue.

    Available for every run replayed with a queues file, with or without fct_queue_usage (which
    adds quotas and borrowing). Columns: period_start, cluster_queue, held_gpus, gpu_hours.
    """
    gpu = focus_gpu_rows(con)
    return _df(
        con,
        f"""
        WITH cells AS (
            SELECT date_trunc($bucket, r.ChargePeriodStart) AS period_start,
                   r.x_ClusterQueue AS cluster_queue,
                   sum(r.ConsumedQuantity) AS gpu_hours,
                   epoch(max(r.ChargePeriodEnd) - min(r.ChargePeriodStart)) / 3600.0 AS span_h
            FROM focus_cost_records r
            WHERE {_FOCUS_WHERE} {_FOCUS_TENANT}
              AND r.x_ClusterQueue IS NOT NULL AND r.x_ClusterQueue <> ''
              AND r.x_UsageClass <> 'idle' AND {gpu}
            GROUP BY ALL
        )
        SELECT period_start, cluster_queue,
               gpu_hours / nullif(max(span_h) OVER (PARTITION BY period_start), 0) AS held_gpus,
               gpu_hours
        FROM cells
        ORDER BY cluster_queue, period_start
        """,
        {**filters.params(), "bucket": check_bucket(bucket)},
    )


def borrowed_by_team(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """tenant, cluster_queue, borrowed_gpu_hours, borrowed_cost from the FOCUS records'
    ``x_Borrowed`` mark; empty when the database has no such column."""
    columns = ["tenant", "cluster_queue", "borrowed_gpu_hours", "borrowed_cost"]
    if "x_Borrowed" not in table_columns(con, "focus_cost_records"):
        return _empty(columns)
    gpu = focus_gpu_rows(con)
    return _df(
        con,
        f"""
        SELECT r.x_Tenant AS tenant, r.x_ClusterQueue AS cluster_queue,
               coalesce(sum(r.ConsumedQuantity) FILTER (WHERE {gpu}), 0) AS borrowed_gpu_hours,
               sum(r.EffectiveCost) AS borrowed_cost
        FROM focus_cost_records r
        WHERE {_FOCUS_WHERE} {_FOCUS_TENANT} AND coalesce(r.x_Borrowed::BOOLEAN, false)
        GROUP BY ALL
        ORDER BY borrowed_gpu_hours DESC, tenant, cluster_queue
        """,
        filters.params(),
    )


# --------------------------------------------------------------------------------------------
# Preemption
# --------------------------------------------------------------------------------------------

# Preempted pod rows in the window, of workloads that pass the team and GPU model filters.
# The few preempted rows are picked first and kept (MATERIALIZED): joining every timeline row,
# or evaluating the workload filter on every workload, costs far more on a large run.
_PREEMPTED = f"""
    evictions AS MATERIALIZED (
        SELECT t.workload_id, t.ts, t.pod_index, t.node,
               t.preemptor
        FROM fct_workload_timeline t
        WHERE t.run_id = $run_id AND t.event = 'preempted'
          AND ($ts_from::TIMESTAMP IS NULL OR t.ts >= $ts_from::TIMESTAMP)
          AND ($ts_to::TIMESTAMP IS NULL OR t.ts < $ts_to::TIMESTAMP)
    ),
    preempted AS MATERIALIZED (
        SELECT e.* FROM evictions e
        JOIN (
            SELECT w.workload_id FROM fct_workloads w
            WHERE w.run_id = $run_id
              AND w.workload_id IN (SELECT workload_id FROM evictions)
              AND {_WORKLOAD_FILTER}
        ) kept USING (workload_id)
    )
"""


def preemption_loss(con: duckdb.DuckDBPyConnection, filters: Filters) -> dict[str, float]:
    """GPU-hours of work lost to preemption (since the victims' last checkpoints) and their
    cost, in the selection."""
    lost = _execute(
        con,
        f"""
        SELECT coalesce(sum(u.gpu_hours), 0), coalesce(sum(u.effective_cost), 0)
        FROM fct_usage_hourly u
        WHERE {_USAGE_WHERE} {_USAGE_TENANT} AND u.usage_class = 'lost_to_preemption'
        """,
        filters.params(),
    ).fetchone()
    assert lost is not None  # an aggregate always returns one row
    return {"lost_gpu_hours": float(lost[0]), "lost_cost": float(lost[1])}


def preemption_summary(victims: pd.DataFrame, loss: dict[str, float]) -> dict[str, Any]:
    """Headline numbers from :func:`preemption_victims` and :func:`preemption_loss`: evicted
    pods, victim workloads, preempting workloads, lost GPU-hours and their cost."""
    preemptors = {name.strip() for names in victims.get("preempted_by", pd.Series(dtype=str))
                  .dropna() for name in str(names).split(",") if name.strip()}
    return {
        "evicted_pods": int(victims["evicted_pods"].sum()) if not victims.empty else 0,
        "victim_workloads": int((victims["evicted_pods"] > 0).sum()) if not victims.empty else 0,
        "preemptors": len(preemptors),
        **loss,
    }


def preemption_victims(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """One row per workload preempted in the window or whose work lost to a preemption lies in
    it (an eviction just after the window throws away work done inside it), most lost cost
    first: the rows add up to the page's lost GPU-hours and cost. Columns: workload_id, tenant,
    kind, priority, evicted_pods, evictions (distinct moments; both in the window),
    preempted_by, first_preempted_ts, lost_gpu_hours, lost_cost, final_state."""
    gpu = focus_gpu_rows(con)
    return _df(
        con,
        f"""
        WITH {_PREEMPTED},
        victims AS MATERIALIZED (
            SELECT workload_id, count(*) AS evicted_pods, count(DISTINCT ts) AS evictions,
                   string_agg(DISTINCT nullif(preemptor, ''), ', ') AS preempted_by,
                   min(ts) AS first_preempted_ts
            FROM preempted GROUP BY workload_id
        ),
        lost AS (
            SELECT r.x_Workload AS workload_id,
                   sum(r.ConsumedQuantity) FILTER (WHERE {gpu}) AS lost_gpu_hours,
                   sum(r.EffectiveCost) AS lost_cost
            FROM focus_cost_records r
            WHERE {_FOCUS_WHERE} {_FOCUS_TENANT} AND r.x_UsageClass = 'lost_to_preemption'
              AND r.x_Workload IS NOT NULL
            GROUP BY 1
        ),
        both_sides AS (
            SELECT coalesce(v.workload_id, l.workload_id) AS workload_id,
                   coalesce(v.evicted_pods, 0) AS evicted_pods, coalesce(v.evictions, 0) AS evictions,
                   v.preempted_by, v.first_preempted_ts,
                   coalesce(l.lost_gpu_hours, 0) AS lost_gpu_hours, coalesce(l.lost_cost, 0) AS lost_cost
            FROM victims v FULL OUTER JOIN lost l ON l.workload_id = v.workload_id
        )
        SELECT b.workload_id, w.tenant, w.kind, w.priority, b.evicted_pods, b.evictions,
               b.preempted_by, b.first_preempted_ts, b.lost_gpu_hours, b.lost_cost, w.final_state
        FROM both_sides b
        LEFT JOIN fct_workloads w ON w.run_id = $run_id AND w.workload_id = b.workload_id
        ORDER BY b.lost_cost DESC, b.evicted_pods DESC, b.workload_id
        """,
        filters.params(),
    )


def preemption_over_time(
    con: duckdb.DuckDBPyConnection, filters: Filters, bucket: str = "day"
) -> pd.DataFrame:
    """period_start, tenant, lost_gpu_hours, lost_cost per ``bucket`` (lost_to_preemption)."""
    return _df(
        con,
        f"""
        SELECT date_trunc($bucket, u.charge_period_start) AS period_start, u.tenant,
               sum(u.gpu_hours) AS lost_gpu_hours, sum(u.effective_cost) AS lost_cost
        FROM fct_usage_hourly u
        WHERE {_USAGE_WHERE} {_USAGE_TENANT} AND u.usage_class = 'lost_to_preemption'
        GROUP BY ALL
        HAVING sum(u.gpu_hours) > 0
        ORDER BY period_start, u.tenant
        """,
        {**filters.params(), "bucket": check_bucket(bucket)},
    )
