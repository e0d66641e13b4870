"""Opening a DuckDB file from the pipeline and the commands: never with extension downloads.

DuckDB installs and loads "known" extensions on first use by default: a build pointed at a
SQLite file would try to download the SQLite scanner, and a query naming an extension's
function would fetch it. Every connection the project opens switches that off (the
dashboard's read-only connections too: `dashboards.data.READ_ONLY_CONFIG`).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import duckdb

NO_EXTENSION_DOWNLOADS: dict[str, bool] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


def connect(db: Path | str, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect`` with extension auto-install and auto-load off.

    DuckDB shares one instance per file within a process and refuses a second connection with
    another configuration: when this process (a notebook, a test) already has the file open
    with DuckDB's defaults, the connection joins that instance and switches the downloads off
    there instead."""
    try:
        return duckdb.connect(str(db), read_only=read_only, config=dict(NO_EXTENSION_DOWNLOADS))
    except duckdb.ConnectionException as exc:
        if "different configuration" not in str(exc):
            raise
    con = duckdb.connect(str(db), read_only=read_only)
    for setting in NO_EXTENSION_DOWNLOADS:
        with contextlib.suppress(duckdb.Error):  # a locked configuration has them off already
            con.execute(f"SET {setting} = false")
    return con
