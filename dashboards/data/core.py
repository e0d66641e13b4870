"""The shared part of the one data layer that reads the DuckDB marts (docs/contracts.md,
"DuckDB marts"): the read-only connection, the sidebar filters, the pickers.

``dashboards.data`` re-exports every public function of its modules (one per group of pages),
so pages and reports call ``data.<name>`` and never open the database themselves. Every function
takes an open DuckDB connection and returns a pandas DataFrame (or plain
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
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from dashboards.errors import DashboardError
from pipeline.connect import connect, missing_marts, older_database_problem
from pipeline.registry import USAGE_CLASS_NAMES

DB_ENV_VAR = "GPU_FINOPS_DB"

USAGE_CLASSES = USAGE_CLASS_NAMES  # the one registry (pipeline/registry.py)
IDLE_TENANT = "__idle__"
PHASES = ("steady", "warmup", "drain")
"""Run phases (x_Phase): the dashboard and the reports show the steady window by default."""
DEFAULT_PHASE = "steady"

# The same configuration for every read-only connection: DuckDB refuses a second connection to
# one file with a different configuration, so data.py and sql.py must agree on it (the limits
# of `SqlLimits` are added to it, the same for the whole process: they come from its settings).
READ_ONLY_CONFIG: dict[str, Any] = {
    "enable_external_access": False,  # no read_csv('/etc/passwd'), COPY TO, ATTACH, INSTALL
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,  # a query cannot SET its way back to external access, or its limits up
}
DUCKDB_SHARE = 2  # DuckDB's memory_limit is half the memory bound (`SqlLimits`): the other half is the result's
SQL_MEMORY_ENV, SQL_TEMP_ENV, SQL_TIMEOUT_ENV = (
    "GPU_FINOPS_SQL_MEMORY_LIMIT", "GPU_FINOPS_SQL_TEMP_LIMIT", "GPU_FINOPS_SQL_TIMEOUT"
)
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KIB|MIB|GIB|TIB)\s*$", re.IGNORECASE)


def parse_size(text: str, what: str = "size") -> str:
    """``text`` as a DuckDB size setting (``512MB``, ``2GB``, ``1.5GiB``); DashboardError
    naming ``what`` otherwise."""
    match = _SIZE.match(str(text))
    if not match or float(match.group(1)) <= 0:
        raise DashboardError(f"{what}: expected a size such as 512MB, 2GB or 1.5GiB, got {str(text)[:40]!r}")
    return f"{match.group(1)}{match.group(2).upper().replace('IB', 'iB')}"


def parse_seconds(text: str | float, what: str = "timeout") -> float:
    """``text`` as a positive number of seconds (``30``, ``2.5``, ``90s``, ``5m``)."""
    value = str(text).strip().lower()
    scale = 60.0 if value.endswith("m") else 1.0
    try:
        seconds = float(value.rstrip("sm")) * scale
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 86_400:
        raise DashboardError(f"{what}: expected seconds between 0 and 86400 (e.g. 30, 90s, 5m), got {str(text)[:40]!r}")
    return seconds


@dataclass(frozen=True)
class SqlLimits:
    """Bounds on every query a read-only connection runs, user SQL included: a memory bound,
    the disk DuckDB may spill to (``max_temp_directory_size``), and a statement timeout
    (enforced by interrupting the query). Set with ``sql --memory-limit/--temp-limit/
    --timeout``, ``dashboard --sql-memory-limit/…``, or the environment variables above.

    The memory bound is the query's in the process, not DuckDB's alone: DuckDB's
    ``memory_limit`` covers its buffer manager (operators, the chunks a streaming result holds),
    not the rows handed to Python nor the copies a page makes of them, so DuckDB gets
    1/`DUCKDB_SHARE` of the bound and the rest is left to the result the caller keeps
    (`dashboards.sql` keeps its rows to a share of it)."""

    memory: str = "2GB"
    temp: str = "4GB"
    timeout_s: float = 60.0

    @classmethod
    def from_env(cls) -> SqlLimits:
        default = cls()
        return cls(
            parse_size(os.environ.get(SQL_MEMORY_ENV) or default.memory, SQL_MEMORY_ENV),
            parse_size(os.environ.get(SQL_TEMP_ENV) or default.temp, SQL_TEMP_ENV),
            parse_seconds(os.environ.get(SQL_TIMEOUT_ENV) or default.timeout_s, SQL_TIMEOUT_ENV),
        )

    def memory_bytes(self) -> int:
        """The memory limit in bytes (KB, MB, GB are powers of 1000; KiB, MiB, GiB of 1024)."""
        match = _SIZE.match(self.memory)
        if not match:
            raise DashboardError(f"memory limit: expected a size such as 512MB, got {self.memory!r}")
        unit = match.group(2).upper()
        scale = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
                 "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}[unit]
        return int(float(match.group(1)) * scale)

    def duckdb_bytes(self) -> int:
        """DuckDB's own ``memory_limit``: its share of the bound."""
        return self.memory_bytes() // DUCKDB_SHARE

    def environment(self) -> dict[str, str]:
        """The variables that give a child process (the Streamlit server) these limits."""
        return {SQL_MEMORY_ENV: self.memory, SQL_TEMP_ENV: self.temp, SQL_TIMEOUT_ENV: str(self.timeout_s)}

    def config(self) -> dict[str, Any]:
        return {**READ_ONLY_CONFIG, "memory_limit": f"{self.duckdb_bytes()}B", "max_temp_directory_size": self.temp}


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


def connect_read_only(db: Path | str, limits: SqlLimits | None = None) -> duckdb.DuckDBPyConnection:
    """Open ``db`` read-only, external access off, under ``limits`` (default: the process's,
    `SqlLimits.from_env`). Raises DashboardError on failure."""
    path = require_db(db)
    config = (limits or SqlLimits.from_env()).config()
    try:
        con = connect(path, read_only=True, config=config)
    except duckdb.Error as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DashboardError(f"cannot open database {path}: {first_line}") from exc
    older = older_database_problem(con, path)  # a layout an older build wrote: one line, not a traceback
    if older:
        con.close()
        raise DashboardError(older)
    return con


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

    ``date_to`` is inclusive (a whole calendar day, UTC), as a person picks it. ``phase`` is a
    run phase (steady, warmup, drain; None = the whole run) and ``phase_window`` its
    [start, end) from ``dim_runs`` (see ``with_phase``): the queries see the dates and the phase
    intersected, which are exactly the charge periods whose x_Phase is the phase.
    """

    run_id: str
    date_from: date | None = None
    date_to: date | None = None
    tenants: tuple[str, ...] = field(default_factory=tuple)
    gpu_models: tuple[str, ...] = field(default_factory=tuple)
    phase: str | None = None
    phase_window: tuple[datetime, datetime] | None = None

    def params(self) -> dict[str, Any]:
        """Bound parameters shared by the filtered queries."""
        start = datetime.combine(self.date_from, time.min) if self.date_from else None
        end = datetime.combine(self.date_to + timedelta(days=1), time.min) if self.date_to else None
        if self.phase_window is not None:
            phase_start, phase_end = self.phase_window
            start = phase_start if start is None else max(start, phase_start)
            end = phase_end if end is None else min(end, phase_end)
        return {
            "run_id": self.run_id,
            "ts_from": start,
            "ts_to": end,
            "tenants": list(self.tenants),
            "gpu_models": list(self.gpu_models),
        }


def window_label(filters: Filters, phases: dict[str, tuple[datetime, datetime]] | None = None) -> str:
    """The window a figure covers, in the same words on every surface: "steady phase,
    2026-11-02 16:00 to 2026-11-09 00:00 UTC" or "whole run, …"; ``phases`` (``run_phases``)
    gives the whole run's ends where no date or phase bounds it."""
    params = filters.params()
    start, end = params["ts_from"], params["ts_to"]
    if phases:  # cut to the run: dates past its ends cover no hour of it
        first, last = min(w[0] for w in phases.values()), max(w[1] for w in phases.values())
        start = first if start is None else max(start, first)
        end = last if end is None else min(end, last)
    name = f"{filters.phase} phase" if filters.phase else "whole run"
    if start is None or end is None:
        return name
    return f"{name}, {start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC"


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


# The same filters over focus_cost_records (alias r): usage rows only (a commitment's Purchase
# rows carry no usage), the GPU model filter on the node.
_FOCUS_WHERE = """
    r.x_RunId = $run_id AND r.ChargeCategory = 'Usage'
    AND ($ts_from::TIMESTAMP IS NULL OR r.ChargePeriodStart >= $ts_from::TIMESTAMP)
    AND ($ts_to::TIMESTAMP IS NULL OR r.ChargePeriodStart < $ts_to::TIMESTAMP)
    AND (len($gpu_models::VARCHAR[]) = 0 OR list_contains($gpu_models::VARCHAR[], r.x_GpuModel))
"""
_FOCUS_TENANT = """
    AND (len($tenants::VARCHAR[]) = 0 OR list_contains($tenants::VARCHAR[], r.x_Tenant))
"""

TIME_BUCKETS = ("hour", "day", "week")


def check_bucket(bucket: str) -> str:
    """``bucket`` if it is a known time bucket; it reaches SQL only as a bound parameter anyway."""
    if bucket not in TIME_BUCKETS:
        raise DashboardError(f"unknown time bucket {bucket!r}: use {', '.join(TIME_BUCKETS)}")
    return bucket


def table_columns(con: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    """Column names of ``table`` in the main schema; empty when the table does not exist.

    Marts added by later pipeline versions (fct_queue_usage, x_Borrowed) are optional: a
    database built before them shows an empty state instead of an error.
    """
    rows = _execute(
        con,
        "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' "
        "AND table_name = $table",
        {"table": table},
    ).fetchall()
    return {r[0] for r in rows}


def focus_gpu_rows(con: duckdb.DuckDBPyConnection) -> str:
    """A condition on focus_cost_records (alias r) that keeps GPU rows: GPU-hours are summed
    over them, while costs add up every priced resource (GPU, CPU, memory). Databases built
    before CPU and memory were priced have GPU rows only (and no x_Resource column)."""
    return "r.x_Resource = 'gpu'" if "x_Resource" in table_columns(con, "focus_cost_records") \
        else "TRUE"


def usage_resource(con: duckdb.DuckDBPyConnection) -> str:
    """fct_usage_hourly's resource column (alias u), or 'gpu' where it predates the column."""
    return "u.resource" if "resource" in table_columns(con, "fct_usage_hourly") else "'gpu'"


# --------------------------------------------------------------------------------------------
# Pickers
# --------------------------------------------------------------------------------------------


EVERY_PAGE_MARTS = ("dim_runs", "dim_nodes", "fct_workloads", "focus_cost_records")
"""The marts the sidebar (every page) reads: without them the database is not one of ours, or
an older build's. A page reading a mart an older build did not write says so itself
(`dashboards.cache.query`), unless it has its own fallback (the Queues page)."""


def marts_missing(con: duckdb.DuckDBPyConnection) -> tuple[str, ...]:
    """Marts every page reads that the database lacks: a DuckDB file made elsewhere, or one
    an older version built (one without the recorded layout `connect_read_only` checks)."""
    return tuple(missing_marts(con, EVERY_PAGE_MARTS))


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


def run_phases(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, tuple[datetime, datetime]]:
    """Each phase of the run and its [start, end) (empty phases left out); empty for a database
    built before phases were marked."""
    if "drain_start_ts" not in table_columns(con, "dim_runs"):
        return {}
    row = _execute(
        con,
        "SELECT start_ts, steady_start_ts, drain_start_ts, end_ts FROM dim_runs WHERE run_id = $run_id",
        {"run_id": run_id},
    ).fetchone()
    if row is None or row[0] is None:
        return {}
    start, steady, drain, end = row
    windows = {"warmup": (start, steady), "steady": (steady, drain), "drain": (drain, end)}
    return {name: window for name, window in windows.items() if window[0] < window[1]}


def phase_window(
    windows: dict[str, tuple[datetime, datetime]], phase: str
) -> tuple[datetime, datetime]:
    """The [start, end) of ``phase`` among a run's ``windows`` (``run_phases``); a phase the run
    does not have (no warm-up without submissions) is an empty window, which selects nothing."""
    if phase not in PHASES:
        raise DashboardError(f"unknown run phase {phase!r}: use {', '.join(PHASES)}")
    if phase in windows:
        return windows[phase]
    first = min((window[0] for window in windows.values()), default=datetime(1970, 1, 1))
    return first, first


def with_phase(con: duckdb.DuckDBPyConnection, filters: Filters, phase: str | None) -> Filters:
    """``filters`` narrowed to a run phase (None: the whole run)."""
    if phase is None:
        return replace(filters, phase=None, phase_window=None)
    windows = run_phases(con, filters.run_id)
    if not windows:
        raise DashboardError("this database has no run phases: rebuild it with `gpu-finops build`")
    return replace(filters, phase=phase, phase_window=phase_window(windows, phase))


def pick_time_bucket(filters: Filters, run_range: tuple[date, date] | None) -> str:
    """Hourly points for up to three days, daily beyond: keeps the area chart readable."""
    first = filters.date_from or (run_range[0] if run_range else None)
    last = filters.date_to or (run_range[1] if run_range else None)
    if filters.phase_window is not None:
        phase_start, phase_end = filters.phase_window
        first = max(first, phase_start.date()) if first else phase_start.date()
        last = min(last, phase_end.date()) if last else phase_end.date()
    if first is None or last is None:
        return "hour"
    return "hour" if (last - first).days < 3 else "day"
