"""Overview queries: what the GPUs cost, who used them, how much sat idle; runs side by side."""

from __future__ import annotations

import duckdb
import pandas as pd

from dashboards.data.core import (
    _FOCUS_TENANT,
    _FOCUS_WHERE,
    _USAGE_TENANT,
    _USAGE_WHERE,
    IDLE_TENANT,
    Filters,
    _df,
    _execute,
    check_bucket,
    focus_gpu_rows,
)

# --------------------------------------------------------------------------------------------
# Overview
# --------------------------------------------------------------------------------------------


def headline_metrics(con: duckdb.DuckDBPyConnection, filters: Filters) -> dict[str, float]:
    """Headline numbers for the selection.

    ``total_cost`` and the GPU-hour totals honour the team filter (idle capacity is part of the
    total only when no team is selected). ``allocation_rate``, ``idle_pct`` and ``idle_cost``
    describe the cluster (date and GPU model filters only): idle capacity belongs to no team.
    """
    scoped = _execute(
        con,
        f"""
        SELECT coalesce(sum(u.effective_cost), 0),
               coalesce(sum(u.list_cost), 0),
               coalesce(sum(u.gpu_hours), 0),
               coalesce(sum(u.gpu_hours) FILTER (WHERE u.usage_class = 'productive'), 0),
               coalesce(sum(u.gpu_hours) FILTER (WHERE u.usage_class = 'gang_wait'), 0),
               coalesce(sum(u.effective_cost) FILTER (WHERE u.usage_class = 'gang_wait'), 0),
               coalesce(sum(u.gpu_hours) FILTER (WHERE u.usage_class = 'lost_to_preemption'), 0)
        FROM fct_usage_hourly u
        WHERE {_USAGE_WHERE} {_USAGE_TENANT}
        """,
        filters.params(),
    ).fetchone()
    cluster = _execute(
        con,
        f"""
        SELECT coalesce(sum(u.gpu_hours), 0),
               coalesce(sum(u.gpu_hours) FILTER (WHERE u.usage_class = 'idle'), 0),
               coalesce(sum(u.effective_cost) FILTER (WHERE u.usage_class = 'idle'), 0)
        FROM fct_usage_hourly u
        WHERE {_USAGE_WHERE}
        """,
        filters.params(),
    ).fetchone()
    assert scoped is not None and cluster is not None  # aggregates always return one row
    capacity, idle_hours, idle_cost = (float(v) for v in cluster)
    return {
        "total_cost": float(scoped[0]),
        "list_cost": float(scoped[1]),
        "gpu_hours": float(scoped[2]),
        "productive_gpu_hours": float(scoped[3]),
        "partial_placement_gpu_hours": float(scoped[4]),
        "partial_placement_cost": float(scoped[5]),
        "lost_to_preemption_gpu_hours": float(scoped[6]),
        "capacity_gpu_hours": capacity,
        "idle_gpu_hours": idle_hours,
        "idle_cost": idle_cost,
        "allocation_rate": (capacity - idle_hours) / capacity if capacity else 0.0,
        "idle_pct": idle_hours / capacity if capacity else 0.0,
    }


def spend_by_team(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """tenant, effective_cost, list_cost, gpu_hours (idle excluded), costliest first."""
    return _df(
        con,
        f"""
        SELECT u.tenant,
               sum(u.effective_cost) AS effective_cost,
               sum(u.list_cost) AS list_cost,
               sum(u.gpu_hours) AS gpu_hours
        FROM fct_usage_hourly u
        WHERE {_USAGE_WHERE} {_USAGE_TENANT}
          AND u.usage_class <> 'idle' AND u.tenant IS DISTINCT FROM $idle
        GROUP BY u.tenant
        ORDER BY effective_cost DESC, u.tenant
        """,
        {**filters.params(), "idle": IDLE_TENANT},
    )


def usage_class_over_time(
    con: duckdb.DuckDBPyConnection, filters: Filters, bucket: str = "hour"
) -> pd.DataFrame:
    """period_start, usage_class, gpu_hours, effective_cost per ``bucket`` (hour or day)."""
    check_bucket(bucket)
    return _df(
        con,
        f"""
        SELECT date_trunc($bucket, u.charge_period_start) AS period_start,
               u.usage_class,
               sum(u.gpu_hours) AS gpu_hours,
               sum(u.effective_cost) AS effective_cost
        FROM fct_usage_hourly u
        WHERE {_USAGE_WHERE} {_USAGE_TENANT}
        GROUP BY ALL
        ORDER BY period_start, u.usage_class
        """,
        {**filters.params(), "bucket": bucket},
    )


def idle_cost_by_cause(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """cause, usage_class, gpu_hours, effective_cost: idle by reason, plus partial placement.

    GPUs held by partially placed gangs (usage class gang_wait) are not idle in the ledger but
    are waste of the same kind, so they appear as the cause ``gang_wait (partial placement)``.
    The team filter does not apply: idle capacity belongs to no team.
    """
    return _df(
        con,
        f"""
        SELECT CASE WHEN u.usage_class = 'idle' THEN coalesce(u.idle_reason, 'unknown')
                    ELSE 'gang_wait (partial placement)' END AS cause,
               u.usage_class,
               sum(u.gpu_hours) AS gpu_hours,
               sum(u.effective_cost) AS effective_cost
        FROM fct_usage_hourly u
        WHERE {_USAGE_WHERE} AND u.usage_class IN ('idle', 'gang_wait')
        GROUP BY ALL
        HAVING sum(u.gpu_hours) > 0
        ORDER BY effective_cost DESC, cause
        """,
        filters.params(),
    )


def costliest_workloads(
    con: duckdb.DuckDBPyConnection, filters: Filters, limit: int = 15
) -> pd.DataFrame:
    """Workloads by effective cost in the window (from the FOCUS records), costliest first."""
    gpu = focus_gpu_rows(con)
    # Two steps: the top workloads by cost from a lean aggregation, then their details from
    # their rows only (a dozen aggregates over every workload of a large run cost 3x more).
    return _df(
        con,
        f"""
        WITH top AS MATERIALIZED (
            SELECT r.x_Workload AS workload_id, sum(r.EffectiveCost) AS effective_cost
            FROM focus_cost_records r
            WHERE {_FOCUS_WHERE} {_FOCUS_TENANT} AND r.x_Workload IS NOT NULL
            GROUP BY r.x_Workload
            ORDER BY effective_cost DESC, workload_id
            LIMIT $limit
        ),
        cost AS (
            SELECT r.x_Workload AS workload_id,
                   sum(r.EffectiveCost) AS effective_cost,
                   sum(r.ListCost) AS list_cost,
                   sum(r.ConsumedQuantity) FILTER (WHERE {gpu}) AS gpu_hours,
                   sum(r.ConsumedQuantity) FILTER (WHERE {gpu} AND r.x_UsageClass = 'productive')
                       AS productive_gpu_hours,
                   sum(r.ConsumedQuantity) FILTER (WHERE {gpu} AND r.x_UsageClass = 'gang_wait')
                       AS gang_wait_gpu_hours,
                   sum(r.ConsumedQuantity) FILTER (
                       WHERE {gpu} AND r.x_UsageClass = 'lost_to_preemption') AS lost_gpu_hours
            FROM focus_cost_records r
            WHERE {_FOCUS_WHERE} {_FOCUS_TENANT}
              AND r.x_Workload IN (SELECT workload_id FROM top)
            GROUP BY r.x_Workload
        )
        SELECT c.workload_id, w.tenant, w.kind, w.final_state, w.pods, w.gpus_per_pod,
               w.partial_placement, w.preemptions,
               c.effective_cost, c.list_cost, coalesce(c.gpu_hours, 0) AS gpu_hours,
               coalesce(c.productive_gpu_hours, 0) AS productive_gpu_hours,
               coalesce(c.gang_wait_gpu_hours, 0) AS gang_wait_gpu_hours,
               coalesce(c.lost_gpu_hours, 0) AS lost_gpu_hours
        FROM cost c
        LEFT JOIN fct_workloads w ON w.run_id = $run_id AND w.workload_id = c.workload_id
        ORDER BY c.effective_cost DESC, c.workload_id
        LIMIT $limit
        """,
        {**filters.params(), "limit": int(limit)},
    )


def partial_placement_workloads(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """Workloads that held GPUs while their gang was incomplete inside the window (usage class
    gang_wait in the FOCUS records of its charge periods), most gang-wait GPU-hours first: the
    rows add up to the page's partial placement figure. gang_wait_gpu_hours and gang_wait_cost
    are the window's; wait_s and timeouts are the workload's."""
    gpu = focus_gpu_rows(con)
    return _df(
        con,
        f"""
        WITH held AS (
            SELECT r.x_Workload AS workload_id,
                   sum(r.ConsumedQuantity) FILTER (WHERE {gpu}) AS gang_wait_gpu_hours,
                   sum(r.EffectiveCost) AS gang_wait_cost
            FROM focus_cost_records r
            WHERE {_FOCUS_WHERE} {_FOCUS_TENANT} AND r.x_UsageClass = 'gang_wait'
              AND r.x_Workload IS NOT NULL
            GROUP BY r.x_Workload
        )
        SELECT h.workload_id, w.tenant, w.kind, w.pods, w.min_count, w.gpus_per_pod,
               w.final_state, w.wait_s, w.timeouts,
               coalesce(h.gang_wait_gpu_hours, 0) AS gang_wait_gpu_hours, h.gang_wait_cost
        FROM held h
        LEFT JOIN fct_workloads w ON w.run_id = $run_id AND w.workload_id = h.workload_id
        WHERE coalesce(h.gang_wait_gpu_hours, 0) > 0
        ORDER BY gang_wait_gpu_hours DESC, h.workload_id
        """,
        filters.params(),
    )


# --------------------------------------------------------------------------------------------
# Runs side by side
# --------------------------------------------------------------------------------------------


def runs_compared(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per run and usage class (idle split by cause): GPU-hours and effective cost.

    Runs of one trace under different profiles cover different windows (a run lasts until
    its last pod ends), so compare the used classes, not the idle that follows the drain.
    """
    gpu = focus_gpu_rows(con)
    return _df(
        con,
        f"""
        SELECT d.run_id, d.profile,
               CASE WHEN r.x_UsageClass = 'idle' THEN 'idle: ' || r.x_IdleReason
                    ELSE r.x_UsageClass END AS usage_class,
               coalesce(SUM(r.PricingQuantity) FILTER (WHERE {gpu}), 0) AS gpu_hours,
               SUM(r.EffectiveCost) AS effective_cost
        FROM focus_cost_records r
        JOIN dim_runs d ON d.run_id = r.x_RunId
        WHERE r.ChargeCategory = 'Usage'
        GROUP BY ALL
        ORDER BY d.run_id, usage_class
        """,
    )


def runs_waits(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per run: workloads, preemptions, partially placed gangs, mean and p95 wait (s)."""
    return _df(
        con,
        """
        SELECT run_id,
               COUNT(*) AS workloads,
               SUM(preemptions) AS preemptions,
               SUM(CASE WHEN partial_placement THEN 1 ELSE 0 END) AS partially_placed,
               AVG(wait_s) AS mean_wait_s,
               QUANTILE_CONT(wait_s, 0.95) AS p95_wait_s
        FROM fct_workloads
        GROUP BY run_id
        ORDER BY run_id
        """,
    )
