"""Streamlit caching around dashboards.data, and the state shared by the pages.

data.py stays free of Streamlit; this thin layer adds:
- one read-only connection per (db path, mtime): a rebuilt database gets a fresh connection;
- cached query results keyed by the same fingerprint and the query's arguments.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import altair as alt
import duckdb
import streamlit as st

from dashboards import data
from dashboards.errors import DashboardError
from pipeline.connect import is_older_layout_error, older_database_line

P = ParamSpec("P")
R = TypeVar("R")

FILTERS_KEY = "gpu_finops.filters"
DB_KEY = "gpu_finops.db"


@dataclass(frozen=True)
class DbRef:
    """Where the marts are, and which version of the file we read (its mtime)."""

    path: str
    mtime_ns: int

    @classmethod
    def of(cls, db: Path) -> DbRef:
        return cls(*data.db_fingerprint(db))


# The newest connection per path. DuckDB keeps one database instance per open path and would
# hand the old instance (old data) to a new connect() while any connection to it is open, so the
# previous connection must be closed before a rebuilt file is reopened.
_open_by_path: dict[str, duckdb.DuckDBPyConnection] = {}
_open_lock = threading.Lock()


@st.cache_resource(max_entries=4, show_spinner=False)
def _connection(path: str, mtime_ns: int) -> duckdb.DuckDBPyConnection:
    # mtime_ns is part of the key only: a rebuilt file has a new mtime and gets reopened.
    with _open_lock:
        stale = _open_by_path.pop(path, None)
        if stale is not None:
            stale.close()
        connection = data.connect_read_only(Path(path))
        _open_by_path[path] = connection
        return connection


def close_connections() -> None:
    """Close every cached connection (for a process that ran the app in-process, as tests do,
    and then opens the same file with another configuration, which DuckDB refuses while one
    is open)."""
    with _open_lock:
        for connection in _open_by_path.values():
            connection.close()
        _open_by_path.clear()
    _connection.clear()


def _cursor(path: str, mtime_ns: int) -> duckdb.DuckDBPyConnection:
    """A cursor of the shared connection. DuckDB refuses a second call on one connection while
    another thread's call runs (ResourceInUseException), cursor() included: one at a time."""
    connection = _connection(path, mtime_ns)
    with _open_lock:
        return connection.cursor()


@st.cache_data(ttl=600, max_entries=256, show_spinner=False)
def _cached_query(name: str, path: str, mtime_ns: int, args: tuple, kwargs: tuple) -> Any:
    # A cursor per call: the cached connection is shared by sessions running in threads.
    cursor = _cursor(path, mtime_ns)
    try:
        return getattr(data, name)(cursor, *args, **dict(kwargs))
    finally:
        cursor.close()


def cursor(db: DbRef) -> duckdb.DuckDBPyConnection:
    """A cursor on the cached connection of ``db`` (the caller closes it). Every connection
    of the dashboard process must come from here: one opened elsewhere while the file is
    rebuilt would keep the old file's DuckDB instance alive, and the reopened connection
    would get that instance, and the old data, back."""
    current = DbRef.of(Path(db.path))  # the file as it is now, even if ``db`` is older
    return _cursor(current.path, current.mtime_ns)


def query(
    db: DbRef,
    function: Callable[Concatenate[duckdb.DuckDBPyConnection, P], R],
    *args: P.args,
    **kwargs: P.kwargs,
) -> R:
    """Run ``function(connection, *args, **kwargs)``, a query of ``dashboards.data``, with caching.

    Pages pass the function itself (``cache.query(db, data.spend_by_team, filters)``), so type
    checking and go-to-definition follow the call; the cache is keyed by its name."""
    name = getattr(function, "__name__", "")
    if name not in data.QUERIES or getattr(data, name, None) is not function:
        raise ValueError(f"not a dashboard query: {name or function!r}")
    arguments = (tuple(args), tuple(sorted(kwargs.items())))
    try:
        try:
            return _cached_query(name, db.path, db.mtime_ns, *arguments)
        except duckdb.ConnectionException:
            # The file was rebuilt and its old connection closed under this query: once more,
            # on the new file.
            fresh = DbRef.of(Path(db.path))
            return _cached_query(name, fresh.path, fresh.mtime_ns, *arguments)
    except duckdb.Error as error:
        if is_older_layout_error(error):  # a table or column an older build did not write: one line
            raise DashboardError(older_database_line(db.path)) from None
        raise


def current() -> tuple[DbRef, data.Filters]:
    """The database and filters chosen in the entry page's sidebar."""
    return st.session_state[DB_KEY], st.session_state[FILTERS_KEY]


def _streamlit_version() -> tuple[int, ...]:
    return tuple(int(part) for part in st.__version__.split(".")[:2] if part.isdigit())


# Newer Streamlit sizes elements with width="stretch" and warns on use_container_width;
# older releases (pyproject allows >= 1.40) know only use_container_width.
STRETCH: dict[str, Any] = (
    {"width": "stretch"} if _streamlit_version() >= (1, 50) else {"use_container_width": True}
)


def chart(altair_chart: Any) -> None:
    """Show an Altair chart across the column it is in, at the height its builder chose.

    Streamlit's default sizing ("fit") squeezes the title, legend and axes into that height,
    which flattens a chart with a legend on top to a strip; "fit-x" fits only the width.
    """
    # SVG rather than canvas: text stays crisp at any zoom, and every label has a box the
    # layout checks can measure (tests/browser.py).
    altair_chart = altair_chart.properties(usermeta={"embedOptions": {"renderer": "svg"}})
    # Legends and axes label in full (Vega cuts labels at 160 and 180 px with an ellipsis);
    # quantitative axes keep their last tick label inside the drawing.
    altair_chart = altair_chart.configure_legend(labelLimit=0).configure_axisQuantitative(labelFlush=True)
    if _composed(altair_chart):
        # Vega-Lite fits only single and layered views to a width; a composed chart fitted to
        # its column is drawn zero pixels wide. It keeps the panel widths its builder gave.
        st.altair_chart(altair_chart)
        return
    sized = altair_chart.properties(autosize={"type": "fit-x", "contains": "padding"})
    st.altair_chart(sized, **STRETCH)


def _composed(chart: Any) -> bool:
    """A chart of several views: faceted (as a FacetChart, or by a row or column channel) or
    concatenated."""
    if isinstance(chart, alt.FacetChart | alt.ConcatChart | alt.HConcatChart | alt.VConcatChart):
        return True
    encoding = getattr(chart, "encoding", alt.Undefined)
    return encoding is not alt.Undefined and any(
        getattr(encoding, channel, alt.Undefined) is not alt.Undefined for channel in ("row", "column", "facet"))


def table(df: Any, **kwargs: Any) -> None:
    """Show a table across the column it is in, without the pandas index."""
    st.dataframe(df, hide_index=True, **STRETCH, **kwargs)


def csv_download(df: Any, file_name: str, key: str) -> None:
    """A CSV download button for a table, spreadsheet-formula cells neutralised."""
    from dashboards.labels import csv_frame
    from dashboards.report import neutralise_csv_frame  # shared with the batch report

    st.download_button(
        "Download CSV",
        neutralise_csv_frame(csv_frame(df)).to_csv(index=False).encode("utf-8"),
        file_name=file_name,
        mime="text/csv",
        key=key,
    )
