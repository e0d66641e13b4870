"""Scenarios: two runs side by side (one trace replayed under two profiles, say).

The sidebar's team, GPU model and date filters apply to both runs: replays of one trace share
their start, so the same days mean the same arrivals.
"""

from __future__ import annotations

from dataclasses import replace

import duckdb
import pandas as pd

from dashboards.data.core import (
    _USAGE_TENANT,
    _USAGE_WHERE,
    _WORKLOAD_FILTER,
    IDLE_TENANT,
    Filters,
    _df,
    _execute,
)
from dashboards.data.overview import headline_metrics

# (metric key, label, unit); "lower is better" for every one but allocation.
SCENARIO_METRICS = (
    ("total_cost", "Total cost", "usd"),
    ("idle_cost", "Idle cost", "usd"),
    ("allocation_rate", "Allocation rate", "pct"),
    ("idle_gpu_hours", "Idle GPU-hours", "hours"),
    ("partial_placement_gpu_hours", "Partial placement (gang_wait) GPU-hours", "hours"),
    ("lost_to_preemption_gpu_hours", "Lost to preemption GPU-hours", "hours"),
    ("mean_wait_h", "Mean wait", "h"),
    ("p95_wait_h", "p95 wait", "h"),
    ("preemptions", "Preemptions", "count"),
    ("finished", "Finished workloads", "count"),
)


def wait_stats(con: duckdb.DuckDBPyConnection, filters: Filters) -> dict[str, float]:
    """Workloads submitted in the window: count, finished, preemptions, mean and p95 wait (h)."""
    row = _execute(
        con,
        f"""
        SELECT count(*),
               count(*) FILTER (WHERE w.final_state = 'finished'),
               coalesce(sum(w.preemptions), 0),
               avg(w.wait_s) / 3600.0,
               quantile_cont(w.wait_s, 0.95) / 3600.0
        FROM fct_workloads w
        WHERE w.run_id = $run_id AND w.final_state <> 'rejected' AND {_WORKLOAD_FILTER}
          AND ($ts_from::TIMESTAMP IS NULL OR w.submit_ts >= $ts_from::TIMESTAMP)
        """,
        filters.params(),
    ).fetchone()
    assert row is not None
    return {"workloads": float(row[0]), "finished": float(row[1]), "preemptions": float(row[2]),
            "mean_wait_h": float(row[3] or 0.0), "p95_wait_h": float(row[4] or 0.0)}


def scenario_compare(
    con: duckdb.DuckDBPyConnection, filters: Filters, other_run: str
) -> pd.DataFrame:
    """One row per metric: metric, unit, baseline (the sidebar's run), scenario (``other_run``),
    change (scenario − baseline)."""
    rows = []
    values = {}
    for run_id in (filters.run_id, other_run):
        scoped = replace(filters, run_id=run_id)
        values[run_id] = {**headline_metrics(con, scoped), **wait_stats(con, scoped)}
    for key, label, unit in SCENARIO_METRICS:
        base, other = values[filters.run_id][key], values[other_run][key]
        rows.append({"metric": label, "unit": unit, "baseline": base, "scenario": other,
                     "change": other - base})
    return pd.DataFrame(rows)


def scenario_by_team(
    con: duckdb.DuckDBPyConnection, filters: Filters, other_run: str
) -> pd.DataFrame:
    """Per run and team: effective cost and GPU-hours by usage class, mean and p95 wait (h).
    Columns: run_id, tenant, effective_cost, gpu_hours, productive_gpu_hours,
    gang_wait_gpu_hours, lost_gpu_hours, workloads, mean_wait_h, p95_wait_h."""
    frames = []
    for run_id in (filters.run_id, other_run):
        frames.append(_df(
            con,
            f"""
            WITH cost AS (
                SELECT u.tenant, sum(u.effective_cost) AS effective_cost,
                       sum(u.gpu_hours) AS gpu_hours,
                       sum(u.gpu_hours) FILTER (WHERE u.usage_class = 'productive')
                           AS productive_gpu_hours,
                       sum(u.gpu_hours) FILTER (WHERE u.usage_class = 'gang_wait')
                           AS gang_wait_gpu_hours,
                       sum(u.gpu_hours) FILTER (WHERE u.usage_class = 'lost_to_preemption')
                           AS lost_gpu_hours
                FROM fct_usage_hourly u
                WHERE {_USAGE_WHERE} {_USAGE_TENANT}
                  AND u.usage_class <> 'idle' AND u.tenant IS DISTINCT FROM $idle
                GROUP BY u.tenant
            ),
            waits AS (
                SELECT w.tenant, count(*) AS workloads, avg(w.wait_s) / 3600.0 AS mean_wait_h,
                       quantile_cont(w.wait_s, 0.95) / 3600.0 AS p95_wait_h
                FROM fct_workloads w
                WHERE w.run_id = $run_id AND w.final_state <> 'rejected' AND {_WORKLOAD_FILTER}
                  AND ($ts_from::TIMESTAMP IS NULL OR w.submit_ts >= $ts_from::TIMESTAMP)
                GROUP BY w.tenant
            )
            SELECT $run_id AS run_id, tenant,
                   coalesce(c.effective_cost, 0) AS effective_cost,
                   coalesce(c.gpu_hours, 0) AS gpu_hours,
                   coalesce(c.productive_gpu_hours, 0) AS productive_gpu_hours,
                   coalesce(c.gang_wait_gpu_hours, 0) AS gang_wait_gpu_hours,
                   coalesce(c.lost_gpu_hours, 0) AS lost_gpu_hours,
                   coalesce(w.workloads, 0) AS workloads, w.mean_wait_h, w.p95_wait_h
            FROM cost c FULL JOIN waits w USING (tenant)
            ORDER BY tenant
            """,
            {**replace(filters, run_id=run_id).params(), "idle": IDLE_TENANT},
        ))
    return pd.concat(frames, ignore_index=True)


def scenario_usage(
    con: duckdb.DuckDBPyConnection, filters: Filters, other_run: str
) -> pd.DataFrame:
    """Per run: GPU-hours and effective cost by usage class (idle split by cause), for the
    runs-side-by-side chart. Columns: run_id, usage_class, gpu_hours, effective_cost."""
    frames = []
    for run_id in (filters.run_id, other_run):
        frames.append(_df(
            con,
            f"""
            SELECT u.run_id,
                   CASE WHEN u.usage_class = 'idle' THEN 'idle: ' || coalesce(u.idle_reason, 'unknown')
                        ELSE u.usage_class END AS usage_class,
                   sum(u.gpu_hours) AS gpu_hours, sum(u.effective_cost) AS effective_cost
            FROM fct_usage_hourly u
            WHERE {_USAGE_WHERE} {_USAGE_TENANT}
            GROUP BY ALL
            ORDER BY usage_class
            """,
            replace(filters, run_id=run_id).params(),
        ))
    return pd.concat(frames, ignore_index=True)
