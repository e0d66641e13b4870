"""Scenarios: any number of runs ranked against a baseline (a sweep's scenarios, say), and two
runs side by side (one trace replayed under two profiles).

The side-by-side functions take the sidebar's team, GPU model and date filters for both runs:
replays of one trace share their start, so the same days mean the same arrivals. The ranking
compares whole runs, or the hours every compared run covers.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

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
    table_columns,
    usage_resource,
)
from dashboards.data.overview import headline_metrics
from dashboards.errors import DashboardError

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


# --------------------------------------------------------------------------------------------
# Any number of runs: a ranked table against a baseline
# --------------------------------------------------------------------------------------------

# (column, label, unit, higher is better): what the ranked table shows and may be ranked by.
RANKING_METRICS = (
    ("total_cost", "Total cost", "usd", False),
    ("waste_cost", "Waste cost (idle, partial placement, preemption)", "usd", False),
    ("cost_per_productive_gpu_hour", "Cost per productive GPU-hour", "usd", False),
    ("cost_per_finished_workload", "Cost per finished workload", "usd", False),
    ("productive_gpu_hours", "Productive GPU-hours", "hours", True),
    ("idle_cost", "Idle cost", "usd", False),
    ("idle_gpu_hours", "Idle GPU-hours", "hours", False),
    ("idle_fragmentation_gpu_hours", "Idle: fragmentation", "hours", False),
    ("idle_quota_gpu_hours", "Idle: quota", "hours", False),
    ("idle_gang_barrier_gpu_hours", "Idle: gang barrier", "hours", False),
    ("idle_no_demand_gpu_hours", "Idle: no demand", "hours", False),
    ("partial_placement_gpu_hours", "Partial placement GPU-hours", "hours", False),
    ("partial_placement_cost", "Partial placement cost", "usd", False),
    ("lost_gpu_hours", "Lost to preemption GPU-hours", "hours", False),
    ("preemption_waste_cost", "Preemption waste cost", "usd", False),
    ("preemptions", "Preemptions", "count", False),
    ("mean_wait_h", "Mean wait", "h", False),
    ("p95_wait_h", "p95 wait", "h", False),
    ("finished", "Finished workloads", "count", True),
)
SCENARIO_TABLE = "sweep_scenarios"  # written by `gpu-finops sweep` next to the marts
SCENARIO_AXES = ("scenario", "queues", "scoring", "preemption")
IDLE_CAUSES = ("fragmentation", "quota", "gang_barrier", "no_demand")
WINDOWS = ("whole", "common")


def scenario_runs(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every run with what its scenario changed: run_id, profile, seed, start_ts, end_ts, and
    scenario, queues, scoring, preemption from a sweep's table (None for runs built otherwise)."""
    axes = ", ".join(f"s.{axis}" for axis in SCENARIO_AXES) if table_columns(con, SCENARIO_TABLE) \
        else ", ".join(f"NULL::VARCHAR AS {axis}" for axis in SCENARIO_AXES)
    join = f"LEFT JOIN {SCENARIO_TABLE} s USING (run_id)" if table_columns(con, SCENARIO_TABLE) else ""
    return _df(con, f"""
        SELECT d.run_id, d.profile, d.seed, d.start_ts, d.end_ts, {axes}
        FROM dim_runs d {join}
        ORDER BY d.run_id
        """)


def common_window(con: duckdb.DuckDBPyConnection, run_ids: list[str] | tuple[str, ...]) -> tuple[Any, Any]:
    """[latest start, earliest end) of ``run_ids``: the hours every one of them covers."""
    row = _execute(con, "SELECT max(start_ts), min(end_ts) FROM dim_runs WHERE list_contains($runs, run_id)",
                   {"runs": list(run_ids)}).fetchone()
    assert row is not None
    return row[0], row[1]


def effective_window(con: duckdb.DuckDBPyConnection, run_ids: tuple[str, ...], window: str) -> str:
    """``window``, except that runs with no hour in common (replays of different traces or
    calendars) are compared whole: an empty common window would tie every run at zero."""
    if window != "common":
        return window
    start, end = common_window(con, list(dict.fromkeys(run_ids)))
    return "common" if start is not None and end is not None and start < end else "whole"


DEFAULT_RANK_BY = "cost_per_productive_gpu_hour"
"""Outcome per cost: on a fixed cluster total cost is capacity x duration, so ranking by it
rewards the run that ended first; what a GPU-hour of useful work costs does not."""
DEFAULT_WINDOW = "common"
BASELINE_PROFILE = "kube-default"


def default_baseline(con: duckdb.DuckDBPyConnection, run_ids: tuple[str, ...]) -> str:
    """The run the others are ranked against when none is named: the sweep file's ``[sweep]
    baseline`` scenario; else the first run of the default scheduler (``kube-default``, what a
    cluster runs before any of this), without Kueue if there is one; else the first run."""
    runs = list(dict.fromkeys(run_ids))
    if not runs:
        raise DashboardError("no run to rank")
    if "is_baseline" in table_columns(con, SCENARIO_TABLE):
        named = [r for (r,) in _execute(con, f"SELECT run_id FROM {SCENARIO_TABLE} WHERE is_baseline "
                                             "AND list_contains($runs, run_id) ORDER BY run_id",
                                        {"runs": runs}).fetchall()]
        if named:
            return str(named[0])
    described = scenario_runs(con)
    described = described[described["run_id"].isin(runs)]
    plain = described[described["profile"] == BASELINE_PROFILE]
    if not plain.empty:
        without_kueue = plain[plain["queues"].fillna("") == "none"]
        return str((without_kueue if not without_kueue.empty else plain)["run_id"].iloc[0])
    return runs[0]


def why_the_winner_wins(ranking: pd.DataFrame, rank_by: str) -> str:
    """One sentence: why the first run of ``ranking`` ranks first, in the terms it wins on
    (the ranked metric, and beside it waste, p95 wait and finished work against the runner-up)."""
    metrics = {m[0]: m for m in RANKING_METRICS}
    if ranking.empty or rank_by not in metrics:
        return ""
    label, unit, higher = metrics[rank_by][1], metrics[rank_by][2], metrics[rank_by][3]
    best = ranking.iloc[0]
    name = str(best.get("scenario") or best["run_id"]) if isinstance(best.get("scenario"), str) else str(best["run_id"])
    def shown(value: float, unit: str) -> str:
        if pd.isna(value):
            return "–"
        return {"usd": f"${value:,.2f}", "hours": f"{value:,.0f} GPU-h", "h": f"{value:,.1f} h",
                "pct": f"{value:.1%}"}.get(unit, f"{value:,.0f}")
    if len(ranking) == 1:
        return f"{name} is the only run compared."
    second = ranking.iloc[1]
    if best[rank_by] == second[rank_by]:
        return (f"{name} ties with the runner-up on {(label[:1].lower() + label[1:])} ({shown(best[rank_by], unit)}): the "
                "order between them is by run id.")
    facts = [f"waste ${best['waste_cost']:,.0f} against ${second['waste_cost']:,.0f}",
             f"p95 wait {shown(best['p95_wait_h'], 'h')} against {shown(second['p95_wait_h'], 'h')}",
             f"{int(best['finished']):,} finished workloads against {int(second['finished']):,}"]
    return (f"{name} wins on {(label[:1].lower() + label[1:])}: {shown(best[rank_by], unit)} against "
            f"{shown(second[rank_by], unit)} for the runner-up ({'higher' if higher else 'lower'} is "
            f"better); beside it, {', '.join(facts)}.")


def scenario_ranking(
    con: duckdb.DuckDBPyConnection, run_ids: tuple[str, ...], baseline: str | None = None,
    rank_by: str = DEFAULT_RANK_BY, window: str = DEFAULT_WINDOW,
) -> pd.DataFrame:
    """One row per run of ``run_ids``, best first by ``rank_by``: cost, idle GPU-hours by cause,
    partial placement, preemption waste, waits, with ``rank``, ``is_baseline`` and, for cost,
    ``total_cost_vs_baseline`` (USD) and ``total_cost_vs_baseline_pct``.

    ``window``: ``whole`` runs (each lasts until its last pod ends, so a run that drains later
    holds more idle hours) or ``common`` (the default), the hours every selected run covers:
    finished workloads are those finished inside it, waits those of the workloads submitted in
    it. ``baseline`` defaults to ``default_baseline``."""
    metrics = {m[0]: m for m in RANKING_METRICS}
    if rank_by not in metrics:
        raise DashboardError(f"cannot rank by {rank_by!r}: use one of {', '.join(metrics)}")
    if window not in WINDOWS:
        raise DashboardError(f"unknown window {window!r}: use whole or common")
    runs = list(dict.fromkeys(run_ids))
    known = set(scenario_runs(con)["run_id"])
    missing = [r for r in runs if r not in known]
    if missing or not runs:
        raise DashboardError(f"run(s) not in the database: {', '.join(missing) or '(none given)'}; "
                             f"it has: {', '.join(sorted(known)) or 'no run'}")
    baseline = baseline or default_baseline(con, tuple(runs))
    if baseline not in runs:
        raise DashboardError(f"baseline {baseline!r} is not among the compared runs")
    window = effective_window(con, tuple(runs), window)
    start, end = common_window(con, runs) if window == "common" else (None, None)
    gpu = usage_resource(con)
    causes = ",\n".join(
        f"coalesce(sum(u.gpu_hours) FILTER (WHERE {gpu} = 'gpu' AND u.usage_class = 'idle' "
        f"AND u.idle_reason = '{cause}'), 0) AS idle_{cause}_gpu_hours" for cause in IDLE_CAUSES)
    frame = _df(con, f"""
        WITH usage AS (
            SELECT u.run_id,
                   coalesce(sum(u.effective_cost), 0) AS total_cost,
                   coalesce(sum(u.effective_cost) FILTER (WHERE u.usage_class = 'idle'), 0) AS idle_cost,
                   coalesce(sum(u.effective_cost) FILTER (WHERE u.usage_class IN
                                                          ('idle', 'gang_wait', 'lost_to_preemption')), 0) AS waste_cost,
                   coalesce(sum(u.gpu_hours) FILTER (WHERE {gpu} = 'gpu' AND u.usage_class = 'productive'), 0)
                       AS productive_gpu_hours,
                   coalesce(sum(u.gpu_hours) FILTER (WHERE {gpu} = 'gpu' AND u.usage_class = 'idle'), 0)
                       AS idle_gpu_hours,
                   {causes},
                   coalesce(sum(u.gpu_hours) FILTER (WHERE {gpu} = 'gpu' AND u.usage_class = 'gang_wait'), 0)
                       AS partial_placement_gpu_hours,
                   coalesce(sum(u.effective_cost) FILTER (WHERE u.usage_class = 'gang_wait'), 0)
                       AS partial_placement_cost,
                   coalesce(sum(u.gpu_hours) FILTER (WHERE {gpu} = 'gpu'
                                                     AND u.usage_class = 'lost_to_preemption'), 0) AS lost_gpu_hours,
                   coalesce(sum(u.effective_cost) FILTER (WHERE u.usage_class = 'lost_to_preemption'), 0)
                       AS preemption_waste_cost
            FROM fct_usage_hourly u
            WHERE list_contains($runs, u.run_id)
              AND ($ts_from::TIMESTAMP IS NULL OR u.charge_period_start >= $ts_from::TIMESTAMP)
              AND ($ts_to::TIMESTAMP IS NULL OR u.charge_period_start < $ts_to::TIMESTAMP)
            GROUP BY u.run_id
        ),
        waits AS (
            SELECT w.run_id, count(*) AS workloads,
                   count(*) FILTER (WHERE w.final_state = 'finished' AND
                                    ($ts_to::TIMESTAMP IS NULL OR w.end_ts <= $ts_to::TIMESTAMP)) AS finished,
                   coalesce(sum(w.preemptions), 0) AS preemptions,
                   avg(w.wait_s) / 3600.0 AS mean_wait_h,
                   quantile_cont(w.wait_s, 0.95) / 3600.0 AS p95_wait_h
            FROM fct_workloads w
            WHERE list_contains($runs, w.run_id) AND w.final_state <> 'rejected'
              AND ($ts_to::TIMESTAMP IS NULL OR w.submit_ts < $ts_to::TIMESTAMP)
            GROUP BY w.run_id
        )
        SELECT u.*, u.total_cost / nullif(u.productive_gpu_hours, 0) AS cost_per_productive_gpu_hour,
               u.total_cost / nullif(w.finished, 0) AS cost_per_finished_workload,
               coalesce(w.workloads, 0) AS workloads, coalesce(w.finished, 0) AS finished,
               coalesce(w.preemptions, 0) AS preemptions, w.mean_wait_h, w.p95_wait_h
        FROM usage u LEFT JOIN waits w USING (run_id)
        """, {"runs": runs, "ts_from": start, "ts_to": end})
    described = scenario_runs(con)
    frame = described[described["run_id"].isin(runs)].merge(frame, on="run_id", how="left")
    for column in frame.columns:
        if metrics.get(column, ("", "", ""))[2] in ("usd", "hours", "count"):
            # No usage row is zero usage; and a sum's float dust must not order equal costs.
            frame[column] = frame[column].fillna(0).round(6)
    higher_better = metrics[rank_by][3]
    frame = frame.sort_values([rank_by, "run_id"], ascending=[not higher_better, True], na_position="last")
    frame.insert(0, "rank", range(1, len(frame) + 1))
    frame["is_baseline"] = frame["run_id"] == baseline
    base_cost = float(frame.loc[frame["is_baseline"], "total_cost"].iloc[0])
    frame["total_cost_vs_baseline"] = (frame["total_cost"] - base_cost).round(6)
    frame["total_cost_vs_baseline_pct"] = (frame["total_cost_vs_baseline"] / base_cost) if base_cost else float("nan")
    return frame.reset_index(drop=True)


def scenario_cost_breakdown(
    con: duckdb.DuckDBPyConnection, run_ids: tuple[str, ...], window: str = DEFAULT_WINDOW
) -> pd.DataFrame:
    """Per run and usage class (idle split by cause): GPU-hours and effective cost, for the
    ranking chart. Columns: run_id, usage_class, gpu_hours, effective_cost."""
    runs = list(dict.fromkeys(run_ids))
    window = effective_window(con, tuple(runs), window)
    start, end = common_window(con, runs) if window == "common" else (None, None)
    gpu = usage_resource(con)
    return _df(con, f"""
        SELECT u.run_id,
               CASE WHEN u.usage_class = 'idle' THEN 'idle: ' || coalesce(u.idle_reason, 'unknown')
                    ELSE u.usage_class END AS usage_class,
               coalesce(sum(u.gpu_hours) FILTER (WHERE {gpu} = 'gpu'), 0) AS gpu_hours,
               sum(u.effective_cost) AS effective_cost
        FROM fct_usage_hourly u
        WHERE list_contains($runs, u.run_id)
          AND ($ts_from::TIMESTAMP IS NULL OR u.charge_period_start >= $ts_from::TIMESTAMP)
          AND ($ts_to::TIMESTAMP IS NULL OR u.charge_period_start < $ts_to::TIMESTAMP)
        GROUP BY ALL
        ORDER BY u.run_id, usage_class
        """, {"runs": runs, "ts_from": start, "ts_to": end})
