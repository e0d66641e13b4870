"""The one module that reads the DuckDB marts (docs/contracts.md, "DuckDB marts").

Every function takes an open DuckDB connection and returns a pandas DataFrame (or plain
values). Nothing here imports Streamlit, so the functions are testable on their own; the
dashboard wraps them with caching in ``dashboards/cache.py``.

Rules kept throughout:
- the database is opened read-only with external (file/network) access switched off;
- user values reach SQL only as bound parameters (``$name``), never through string formatting;
- only mart tables are read.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from dashboards.errors import DashboardError

DB_ENV_VAR = "GPU_FINOPS_DB"

USAGE_CLASSES = ("productive", "gang_wait", "lost_to_preemption", "idle")
IDLE_TENANT = "__idle__"

# The same configuration for every read-only connection: DuckDB refuses a second connection to
# one file with a different configuration, so data.py and sql.py must agree on it.
READ_ONLY_CONFIG: dict[str, Any] = {
    "enable_external_access": False,  # no read_csv('/etc/passwd'), COPY TO, ATTACH, INSTALL
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,  # a query cannot SET its way back to external access
}


# --------------------------------------------------------------------------------------------
# Connection
# --------------------------------------------------------------------------------------------


def db_path_from_env(default: Path | None = None) -> Path | None:
    """The database path the dashboard reads: $GPU_FINOPS_DB, else ``default``."""
    value = os.environ.get(DB_ENV_VAR, "").strip()
    if value:
        return Path(value).expanduser()
    return default


def require_db(db: Path | str | None) -> Path:
    """Return ``db`` as a Path, or raise DashboardError when it is unset or missing."""
    if db is None or str(db).strip() == "":
        raise DashboardError(
            f"no database given: set {DB_ENV_VAR} or pass --db (build one with `gpu-finops build`)"
        )
    path = Path(db).expanduser()
    if not path.is_file():
        raise DashboardError(
            f"database not found: {path} (build one with `gpu-finops build --db {path}`)"
        )
    return path


def connect_read_only(db: Path | str) -> duckdb.DuckDBPyConnection:
    """Open ``db`` read-only, external access off. Raises DashboardError on failure."""
    path = require_db(db)
    try:
        return duckdb.connect(str(path), read_only=True, config=dict(READ_ONLY_CONFIG))
    except duckdb.Error as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DashboardError(f"cannot open database {path}: {first_line}") from exc


def db_fingerprint(db: Path) -> tuple[str, int]:
    """(resolved path, mtime in ns): a cache key that changes when the db is rebuilt."""
    resolved = Path(db).expanduser().resolve()
    return str(resolved), resolved.stat().st_mtime_ns


_PARAM_NAME = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def _bind(sql: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """The subset of ``params`` that ``sql`` names: DuckDB refuses unused named parameters."""
    wanted = set(_PARAM_NAME.findall(sql))
    return {k: v for k, v in (params or {}).items() if k in wanted}


def _execute(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
) -> duckdb.DuckDBPyConnection:
    return con.execute(sql, _bind(sql, params))


def _df(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
) -> pd.DataFrame:
    return _execute(con, sql, params).df()


# --------------------------------------------------------------------------------------------
# Filters
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Filters:
    """The sidebar selection. Empty tuples mean "all"; None dates mean "whole run".

    ``date_to`` is inclusive (a whole calendar day, UTC), as a person picks it.
    """

    run_id: str
    date_from: date | None = None
    date_to: date | None = None
    tenants: tuple[str, ...] = field(default_factory=tuple)
    gpu_models: tuple[str, ...] = field(default_factory=tuple)

    def params(self) -> dict[str, Any]:
        """Bound parameters shared by the filtered queries."""
        start = datetime.combine(self.date_from, time.min) if self.date_from else None
        end = datetime.combine(self.date_to + timedelta(days=1), time.min) if self.date_to else None
        return {
            "run_id": self.run_id,
            "ts_from": start,
            "ts_to": end,
            "tenants": list(self.tenants),
            "gpu_models": list(self.gpu_models),
        }


# SQL fragments over fct_usage_hourly (alias u). Only parameter names appear in them.
_USAGE_WHERE = """
    u.run_id = $run_id
    AND ($ts_from::TIMESTAMP IS NULL OR u.charge_period_start >= $ts_from::TIMESTAMP)
    AND ($ts_to::TIMESTAMP IS NULL OR u.charge_period_start < $ts_to::TIMESTAMP)
    AND (len($gpu_models::VARCHAR[]) = 0 OR list_contains($gpu_models::VARCHAR[], u.gpu_model))
"""
# Idle capacity belongs to no team: a team filter keeps that team's rows and drops idle rows.
_USAGE_TENANT = """
    AND (len($tenants::VARCHAR[]) = 0 OR list_contains($tenants::VARCHAR[], u.tenant))
"""


# A workload matches the GPU model filter when one of its "A|B" alternatives is selected, or
# when it accepts any model. It is in the window when it was submitted before the window ends
# and had not ended before it starts.
_WORKLOAD_FILTER = """
    (len($tenants::VARCHAR[]) = 0 OR list_contains($tenants::VARCHAR[], w.tenant))
    AND (len($gpu_models::VARCHAR[]) = 0 OR coalesce(w.gpu_model, '') = ''
         OR len(list_intersect(string_split(w.gpu_model, '|'), $gpu_models::VARCHAR[])) > 0)
    AND ($ts_to::TIMESTAMP IS NULL OR w.submit_ts < $ts_to::TIMESTAMP)
    AND ($ts_from::TIMESTAMP IS NULL OR w.end_ts IS NULL OR w.end_ts >= $ts_from::TIMESTAMP)
"""


# --------------------------------------------------------------------------------------------
# Pickers
# --------------------------------------------------------------------------------------------


def list_runs(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """All runs, newest first: run_id, profile, seed, start_ts, end_ts, nodes, gpus, workloads."""
    return _df(
        con,
        """
        SELECT run_id, profile, seed, start_ts, end_ts, horizon_s, nodes, gpus, workloads, pods
        FROM dim_runs
        ORDER BY start_ts DESC, run_id
        """,
    )


def run_date_range(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[date, date] | None:
    """First and last calendar day (UTC) the run covers; None for an unknown run."""
    row = _execute(
        con,
        """
        SELECT start_ts::DATE,
               -- end_ts is exclusive: a run ending at midnight does not cover that day
               (end_ts - INTERVAL 1 MICROSECOND)::DATE
        FROM dim_runs WHERE run_id = $run_id
        """,
        {"run_id": run_id},
    ).fetchone()
    if row is None or row[0] is None:
        return None
    first, last = row
    return first, max(first, last)


def list_tenants(con: duckdb.DuckDBPyConnection, run_id: str) -> list[str]:
    """Teams that have workloads in the run (the idle pseudo-tenant excluded)."""
    rows = _execute(
        con,
        """
        SELECT DISTINCT tenant FROM fct_workloads
        WHERE run_id = $run_id AND tenant IS NOT NULL AND tenant <> $idle
        ORDER BY tenant
        """,
        {"run_id": run_id, "idle": IDLE_TENANT},
    ).fetchall()
    return [r[0] for r in rows]


def list_gpu_models(con: duckdb.DuckDBPyConnection, run_id: str) -> list[str]:
    """GPU models of the run's nodes."""
    rows = _execute(
        con,
        "SELECT DISTINCT gpu_model FROM dim_nodes WHERE run_id = $run_id AND gpu_model IS NOT NULL "
        "ORDER BY gpu_model",
        {"run_id": run_id},
    ).fetchall()
    return [r[0] for r in rows]


def search_workloads(
    con: duckdb.DuckDBPyConnection, run_id: str, text: str = "", limit: int = 200
) -> pd.DataFrame:
    """Workloads whose id contains ``text`` (case-insensitive), longest waits first."""
    # Escape LIKE wildcards so "%" or "_" typed by a person match literally.
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return _df(
        con,
        """
        SELECT workload_id, tenant, kind, final_state, wait_s, pods, min_count, gpus_per_pod,
               partial_placement
        FROM fct_workloads
        WHERE run_id = $run_id AND workload_id ILIKE $pattern ESCAPE '\\'
        ORDER BY wait_s DESC NULLS LAST, workload_id
        LIMIT $limit
        """,
        {"run_id": run_id, "pattern": f"%{escaped}%", "limit": int(limit)},
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
    if bucket not in ("hour", "day"):
        raise DashboardError(f"unknown time bucket {bucket!r}: use 'hour' or 'day'")
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
    return _df(
        con,
        """
        WITH cost AS (
            SELECT r.x_Workload AS workload_id,
                   sum(r.EffectiveCost) AS effective_cost,
                   sum(r.ListCost) AS list_cost,
                   sum(r.ConsumedQuantity) AS gpu_hours,
                   sum(r.ConsumedQuantity) FILTER (WHERE r.x_UsageClass = 'productive')
                       AS productive_gpu_hours,
                   sum(r.ConsumedQuantity) FILTER (WHERE r.x_UsageClass = 'gang_wait')
                       AS gang_wait_gpu_hours,
                   sum(r.ConsumedQuantity) FILTER (WHERE r.x_UsageClass = 'lost_to_preemption')
                       AS lost_gpu_hours
            FROM focus_cost_records r
            WHERE r.x_RunId = $run_id AND r.x_Workload IS NOT NULL
              AND ($ts_from::TIMESTAMP IS NULL OR r.ChargePeriodStart >= $ts_from::TIMESTAMP)
              AND ($ts_to::TIMESTAMP IS NULL OR r.ChargePeriodStart < $ts_to::TIMESTAMP)
              AND (len($tenants::VARCHAR[]) = 0 OR list_contains($tenants::VARCHAR[], r.x_Tenant))
              AND (len($gpu_models::VARCHAR[]) = 0
                   OR list_contains($gpu_models::VARCHAR[], r.x_GpuModel))
            GROUP BY r.x_Workload
        )
        SELECT c.workload_id, w.tenant, w.kind, w.final_state, w.pods, w.gpus_per_pod,
               w.partial_placement, w.preemptions,
               c.effective_cost, c.list_cost, c.gpu_hours,
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
    """Workloads that held GPUs while their gang was incomplete, most gang-wait hours first."""
    return _df(
        con,
        f"""
        SELECT w.workload_id, w.tenant, w.kind, w.pods, w.min_count, w.gpus_per_pod,
               w.final_state, w.wait_s, w.timeouts, w.gpu_hours_gang_wait, w.effective_cost
        FROM fct_workloads w
        WHERE w.run_id = $run_id AND w.partial_placement
          AND {_WORKLOAD_FILTER}
        ORDER BY w.gpu_hours_gang_wait DESC NULLS LAST, w.workload_id
        """,
        filters.params(),
    )



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


def pick_time_bucket(filters: Filters, run_range: tuple[date, date] | None) -> str:
    """Hourly points for up to three days, daily beyond: keeps the area chart readable."""
    first = filters.date_from or (run_range[0] if run_range else None)
    last = filters.date_to or (run_range[1] if run_range else None)
    if first is None or last is None:
        return "hour"
    return "hour" if (last - first).days < 3 else "day"


# --------------------------------------------------------------------------------------------
# Runs side by side
# --------------------------------------------------------------------------------------------


def runs_compared(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per run and usage class (idle split by cause): GPU-hours and effective cost.

    Runs of one trace under different profiles cover different windows (a run lasts until
    its last pod ends), so compare the used classes, not the idle that follows the drain.
    """
    return _df(
        con,
        """
        SELECT r.run_id, r.profile,
               CASE WHEN f.x_UsageClass = 'idle' THEN 'idle: ' || f.x_IdleReason
                    ELSE f.x_UsageClass END AS usage_class,
               SUM(f.ConsumedQuantity) AS gpu_hours,
               SUM(f.EffectiveCost) AS effective_cost
        FROM focus_cost_records f
        JOIN dim_runs r ON r.run_id = f.x_RunId
        GROUP BY ALL
        ORDER BY r.run_id, usage_class
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
