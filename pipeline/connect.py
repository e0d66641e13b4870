"""Opening a DuckDB file from the pipeline and the commands: never with extension downloads.

DuckDB installs and loads "known" extensions on first use by default: a build pointed at a
SQLite file would try to download the SQLite scanner, and a query naming an extension's
function would fetch it. Every connection the project opens switches that off (the
dashboard's read-only connections too: `dashboards.data.READ_ONLY_CONFIG`).
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import duckdb

from pipeline.ctrl_c import watching
from pipeline.errors import PipelineError

MARTS_VERSION = "4"
"""The layout of the marts `build` writes; raised when a table or column a reader needs changes.
`build` records it in table `BUILD_TABLE`; every reader compares (`older_database_problem`)."""
BUILD_TABLE = "gpu_finops_build"

NO_EXTENSION_DOWNLOADS: dict[str, bool] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


_EXTENSION_NEEDED = re.compile(r'Extension "([A-Za-z0-9_]+)" is an existing extension')


def _not_duckdb(db: Path | str) -> str:
    try:
        with open(db, "rb") as handle:
            if handle.read(16) == b"SQLite format 3\x00":
                return "it is a SQLite database, not a DuckDB one"
    except OSError:
        pass
    return "not a DuckDB database"


def connect(db: Path | str = ":memory:", *, read_only: bool = False,
            config: dict[str, Any] | None = None) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect`` with extension auto-install and auto-load off: the one way the
    project opens DuckDB (``tests/reliability/test_duckdb_connections.py`` finds any other).
    ``config``: further settings (the dashboard's read-only ones, its limits). Under
    `pipeline.ctrl_c.interrupt_queries_on_ctrl_c` the connection's queries stop at a Ctrl-C.

    DuckDB shares one instance per file within a process and refuses a second connection with
    another configuration: when this process (a notebook, a test) already has the file open
    with DuckDB's defaults, the connection joins that instance and switches the downloads off
    there instead."""
    try:
        con = duckdb.connect(str(db), read_only=read_only, config={**(config or {}), **NO_EXTENSION_DOWNLOADS})
    except duckdb.IOException as exc:
        needed = _EXTENSION_NEEDED.search(str(exc))
        if needed is None:
            raise
        raise PipelineError(f"{db}: {_not_duckdb(db)}: DuckDB would need its {needed.group(1)} extension to "
                            "read it, and gpu-finops never installs or loads DuckDB extensions") from None
    except duckdb.ConnectionException as exc:
        if config or "different configuration" not in str(exc):
            raise
        con = duckdb.connect(str(db), read_only=read_only)
        for setting in NO_EXTENSION_DOWNLOADS:
            with contextlib.suppress(duckdb.Error):  # a locked configuration has them off already
                con.execute(f"SET {setting} = false")
    watch = watching()
    if watch is not None:
        watch.connections.add(con)
    return con


# --------------------------------------------------------------------------------------------
# Ctrl-C during a query
# --------------------------------------------------------------------------------------------

QUERY_INTERRUPTED = "Query interrupted"
"""What DuckDB's Python client raises (a plain RuntimeError) when it sees a pending Ctrl-C."""


def is_query_interrupt(error: BaseException | None) -> bool:
    """``error`` (or an exception it was raised from) is a query DuckDB stopped for an
    interrupt: its ``RuntimeError("Query interrupted")`` or its ``InterruptException``. A
    statement timeout interrupts too, but its reader turns that into its own one line first."""
    seen = 0
    while error is not None and seen < 20:
        if isinstance(error, duckdb.InterruptException) or (
                type(error) is RuntimeError and str(error).strip() == QUERY_INTERRUPTED):
            return True
        error, seen = error.__cause__, seen + 1
    return False


def older_database_line(db: Path | str) -> str:
    """The one line a reader says about a database an older gpu-finops built."""
    return (f"{db}: built by an older version of gpu-finops: rebuild with "
            f"`gpu-finops build RUN_DIR... --prices PRICES --db {db}` (build migrates it, keeping its runs)")


def older_database_problem(con: duckdb.DuckDBPyConnection, db: Path | str) -> str | None:
    """`older_database_line` when ``db`` records a marts layout other than `MARTS_VERSION`;
    None when it records this one, or none at all (a database of the marts' tables made
    elsewhere: its readers then turn a missing table or column into the same line)."""
    try:
        found = con.execute(
            "select count(*) from information_schema.tables where table_name = ?", [BUILD_TABLE]).fetchone()
        if not found or not found[0]:
            return None
        row = con.execute(f"select max(marts_version) from {BUILD_TABLE}").fetchone()
    except duckdb.Error:
        return older_database_line(db)
    return None if row and row[0] == MARTS_VERSION else older_database_line(db)


def missing_marts(con: duckdb.DuckDBPyConnection, among: tuple[str, ...] | None = None) -> list[str]:
    """The mart tables of this version's layout (or of ``among``, the ones a reader needs)
    that the database lacks: all of them for a DuckDB file made elsewhere. A reader that needs
    them (the dashboard's pages) says `older_database_line` for a database that records no
    layout and misses one."""
    from pipeline.runner import MODELS  # the dbt-style models: which tables are marts

    present = {row[0] for row in con.execute("select table_name from information_schema.tables").fetchall()}
    marts = [model.name for model in MODELS if model.layer == "marts"]
    return sorted(name for name in (among or marts) if name not in present)


def is_older_layout_error(error: BaseException) -> bool:
    """A query that names a table or column the database lacks: it was built by an older
    version (DuckDB's catalog error, or its binder error for a column it cannot find; a binder
    error of a column's type is not one)."""
    if isinstance(error, duckdb.CatalogException):
        return True
    text = str(error)
    return isinstance(error, duckdb.BinderException) and any(
        words in text for words in ("Referenced column", "not found", "does not have a column named"))


def plan_as_written(con: duckdb.DuckDBPyConnection) -> None:
    """Every ``asof join`` runs as DuckDB's ASOF join (sort and merge), whatever the planner
    estimates. Below ``asof_loop_join_threshold`` estimated rows on its left (64 by default)
    DuckDB runs it as a nested loop join plus an arg_max per left row instead, and after a
    dozen CTE joins its estimate can be 29 rows where there are 92,568: int_idle_by_cause
    then compared 100 M row pairs on the demo's run (40 of a trial's 41 CPU s, against 1.0 s
    as an ASOF join). The same rows either way (the join's definition, not its plan)."""
    con.execute("SET asof_loop_join_threshold = 0")
