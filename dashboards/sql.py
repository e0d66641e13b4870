"""`gpu-finops sql`: one read-only statement over the marts, printed as a table, CSV or JSON;
saved named queries (``--query NAME``, files in ``dashboards/queries/``); and the same guard for
the dashboard's SQL page.

Two locks, so that neither alone has to be perfect:
1. the statement is parsed by DuckDB and refused unless it is a single read statement that
   names no file-reading function;
2. the connection is read-only with external access disabled and its configuration locked, so
   even a statement that slipped past (1) can neither write nor touch a file or the network.

And bounds, so that one statement cannot take the machine: a memory bound, a temp-space limit
and a statement timeout (`dashboards.data.SqlLimits`); a query that hits one stops with a
message naming the limit and the flag that raises it. The memory bound holds for the process,
not for DuckDB alone: DuckDB's ``memory_limit`` is half of it (its buffer manager, the chunks
of the streaming result), and the rows handed to Python are kept to the other half: each
fetched batch about 1/_BATCH_SHARE of the bound, the rows kept to be shown (the terminal
table, the SQL page's frame) at most 1/_KEPT_SHARE of it, because the page copies them about
six times (the frame, its formatted copy, the table's Arrow data and its message, the CSV
download, the chart's data). When that share is reached the fetch stops and says so; ``csv``
and ``json`` stream every row, a batch at a time. Every cell shown in a terminal table has its
control characters neutralised.
"""

from __future__ import annotations

import csv
import io
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

import duckdb
import pandas as pd

from dashboards import data
from dashboards.data import SqlLimits
from dashboards.errors import DashboardError
from dashboards.text import printable
from pipeline.connect import is_older_layout_error, is_query_interrupt, older_database_line

OUTPUT_FORMATS = ("table", "csv", "json")
_READ_TYPES = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}
# PRAGMAs that only describe the database. Others may change settings.
_READ_PRAGMAS = {
    "table_info", "show", "show_tables", "show_tables_expanded", "database_list",
    "database_size", "version", "platform", "storage_info", "show_databases", "functions",
    "metadata_info", "user_agent",
}
# Table functions that read files or URLs (DuckDB core and common extensions).
_FILE_FUNCTIONS = re.compile(
    r"\b(read_\w+|glob|parquet_\w+|sniff_csv|csv_scan\w*|json_scan\w*|iceberg_\w+|delta_scan|"
    r"st_read\w*|sqlite_\w+|postgres_\w+|mysql_\w+|httpfs\w*|load_\w+|query_table|query)\s*\(",
    re.IGNORECASE,
)
_MAX_TABLE_ROWS = 1000
_FETCH_ROWS = 10_000  # rows fetched from DuckDB at a time, at most
# The rows a statement returns are Python objects outside DuckDB's memory limit (half the
# bound), so the fetch keeps to the other half itself: one batch holds about 1/_BATCH_SHARE of
# the bound (its size in rows follows the width of the rows fetched so far), and the rows kept
# to be shown at most 1/_KEPT_SHARE: with the page's six or so copies of them, about a fifth.
_BATCH_SHARE = 64
_KEPT_SHARE = 32
_MAX_CELL_CHARS = 2_000  # a terminal table cell is cut here (csv and json keep every character)


def check_read_only(query: str) -> str:
    """Return the single read statement in ``query``; raise DashboardError otherwise."""
    text = query.strip()
    if not text:
        raise DashboardError("empty query: give one SELECT statement")
    try:
        statements = duckdb.extract_statements(text)
    except duckdb.Error as exc:
        raise DashboardError(f"cannot parse the query: {_first_line(exc)}") from exc
    if len(statements) != 1:
        raise DashboardError(
            f"{len(statements)} statements given: run exactly one read statement (SELECT, WITH, "
            "DESCRIBE, SHOW, EXPLAIN, PRAGMA table_info)"
        )
    statement = statements[0]
    kind = statement.type
    if kind == duckdb.StatementType.PRAGMA:
        name = re.match(r"\s*pragma\s+(\w+)", statement.query, re.IGNORECASE)
        if not name or name.group(1).lower() not in _READ_PRAGMAS:
            raise DashboardError(
                "refused: only describing PRAGMAs are allowed (table_info, show_tables, "
                "database_size, version, …)"
            )
    elif kind not in _READ_TYPES:
        raise DashboardError(
            f"refused: {kind.name} statements are not allowed; the database is read-only here "
            "(use SELECT, WITH, DESCRIBE, SHOW, EXPLAIN or PRAGMA table_info)"
        )
    if kind == duckdb.StatementType.EXPLAIN:
        # EXPLAIN [ANALYZE] runs or plans another statement: that one must be a read too.
        inner = re.sub(r"^\s*explain\s+(analyze\s+)?", "", statement.query, flags=re.IGNORECASE)
        check_read_only(inner)
    if _FILE_FUNCTIONS.search(_without_string_literals(statement.query)):
        raise DashboardError(
            "refused: file and network access (read_csv, read_parquet, glob, …) is disabled; "
            "query the mart tables"
        )
    return statement.query


@dataclass(frozen=True)
class SavedQuery:
    """A named query shipped in dashboards/queries/NAME.sql.

    The file starts with ``-- title: …`` and ``-- question: …`` comment lines, then the SQL.
    """

    name: str
    title: str
    question: str
    sql: str


_QUERY_NAME = re.compile(r"^[a-z0-9][a-z0-9_]*$")


def saved_queries() -> list[SavedQuery]:
    """Every saved query, sorted by name."""
    folder = resources.files("dashboards") / "queries"
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql") and _QUERY_NAME.match(entry.name[:-4]):
            found.append(_parse_saved(entry.name[:-4], entry.read_text(encoding="utf-8")))
    return sorted(found, key=lambda q: q.name)


def _parse_saved(name: str, text: str) -> SavedQuery:
    header: dict[str, str] = {}
    for line in text.splitlines():
        match = re.match(r"^--\s*(title|question):\s*(.*)$", line.strip())
        if not match:
            break
        header[match.group(1)] = match.group(2).strip()
    return SavedQuery(name, header.get("title", name.replace("_", " ")),
                      header.get("question", ""), text.strip())


def saved_query(name: str) -> SavedQuery:
    """The saved query called ``name``; DashboardError naming the known ones otherwise."""
    known = {q.name: q for q in saved_queries()}
    if name not in known:
        raise DashboardError(
            f"no saved query {name!r}; known: {', '.join(sorted(known)) or '(none)'}"
        )
    return known[name]


def query_frame(
    db: Path,
    query: str,
    max_rows: int = 10_000,
    connect: Callable[[], duckdb.DuckDBPyConnection] | None = None,
) -> tuple[pd.DataFrame, bool]:
    """Run one read-only statement and return (at most ``max_rows`` rows, whether cut).

    ``connect``: where the connection comes from (it is closed after the query); by default
    ``db`` is opened read-only. The dashboard passes a cursor of its cached connection:
    DuckDB shares one instance per file path within a process, so a connection of its own,
    open while the database is rebuilt, would keep the old file's instance alive and the
    dashboard would reopen onto old data. A connection closed under the query because the
    file was just rebuilt is retried once, on the new file.
    """
    statement = check_read_only(query)
    limits = SqlLimits.from_env()
    connect = connect or (lambda: data.connect_read_only(db, limits))
    for attempt in (1, 2):
        try:
            con = connect()
        except duckdb.ConnectionException as exc:
            if attempt == 2:
                raise DashboardError(f"cannot open the database: {_first_line(exc)}") from exc
            continue
        try:
            with _bounded(con, limits):
                cursor = con.execute(statement)
                columns = [d[0] for d in cursor.description or []]
                rows, fetched = _kept(_batches(cursor, limits), max_rows, limits)
            break
        except duckdb.ConnectionException as exc:
            if attempt == 2:
                raise DashboardError(f"query failed: {_first_line(exc)}") from exc
        except duckdb.Error as exc:
            raise DashboardError(f"query failed: {_first_line(exc)}") from exc
        finally:
            con.close()
    # Duplicate column names (SELECT a.x, b.x) would collide in a DataFrame: number them.
    seen: dict[str, int] = {}
    unique = []
    for column in columns:
        seen[column] = seen.get(column, 0) + 1
        unique.append(column if seen[column] == 1 else f"{column}_{seen[column]}")
    frame = pd.DataFrame.from_records(rows, columns=unique)
    for column in frame.columns:  # DATE values arrive as Python dates: make them datetimes
        values = frame[column].dropna()
        if frame[column].dtype == object and not values.empty and all(
                isinstance(v, date) for v in values):
            frame[column] = pd.to_datetime(frame[column])
    return frame, fetched > len(rows)


def kept_words(max_rows: int, limits: SqlLimits | None = None) -> str:
    """Why a result was cut, in words: 'the page keeps at most 5,000 rows and 1/32 of the 1GB
    memory bound (DuckDB has half of it)'."""
    limits = limits or SqlLimits.from_env()
    return (f"the page keeps at most {max_rows:,} rows and 1/{_KEPT_SHARE} of the {limits.memory} memory bound "
            "(DuckDB has half of it; raise it with dashboard --sql-memory-limit)")


def _batches(cursor: duckdb.DuckDBPyConnection, limits: SqlLimits) -> Iterator[list[tuple]]:
    """The statement's rows in batches of about 1/_BATCH_SHARE of the memory bound each: the
    next batch's row count follows the width of the rows seen (a few wide rows, or many
    narrow ones)."""
    per_batch = max(1, limits.memory_bytes() // _BATCH_SHARE)
    size = 64
    while rows := cursor.fetchmany(size):
        yield rows
        size = max(1, min(_FETCH_ROWS, per_batch // max(1, _bytes_per_row(rows))))


def _kept(batches: Iterator[list[tuple]], max_rows: int, limits: SqlLimits) -> tuple[list[tuple], int]:
    """The first rows of ``batches``, at most ``max_rows`` and 1/_KEPT_SHARE of the memory
    bound, and how many rows were fetched (more than kept: some were left out; the batches
    after are not fetched)."""
    budget = limits.memory_bytes() // _KEPT_SHARE
    kept: list[tuple] = []
    held = fetched = 0
    for rows in batches:
        fetched += len(rows)
        width = _bytes_per_row(rows)
        taken = min(len(rows), max_rows - len(kept), max(0, budget - held) // max(1, width))
        kept.extend(rows[:taken])
        held += taken * width
        if taken < len(rows):
            break
    return kept, fetched


def _bytes_per_row(rows: list[tuple]) -> int:
    """About how many bytes a row of ``rows`` takes as Python objects (from a sample of them)."""
    sample = rows[:: max(1, len(rows) // 32)]
    return sum(_value_bytes(row) for row in sample) // max(1, len(sample))


def _value_bytes(value: object, depth: int = 0) -> int:
    if isinstance(value, str | bytes):
        return 50 + len(value)
    if isinstance(value, list | tuple) and depth < 4:
        return 56 + sum(_value_bytes(item, depth + 1) for item in value)
    if isinstance(value, dict) and depth < 4:
        return 64 + sum(_value_bytes(k, depth + 1) + _value_bytes(v, depth + 1) for k, v in value.items())
    return 32


def run_sql(db: Path, query: str | None = None, fmt: str = "table", *,
            name: str | None = None, limits: SqlLimits | None = None,
            out: TextIO | None = None) -> str:
    """Run one read-only statement (or the saved query ``name``) on ``db`` under ``limits``
    (default: `SqlLimits.from_env`) and return it formatted as table, csv or json; with
    ``out``, write it there as the rows arrive instead (and return an empty string)."""
    if fmt not in OUTPUT_FORMATS:
        raise DashboardError(f"unknown format {fmt!r}: use {', '.join(OUTPUT_FORMATS)}")
    if (query is None) == (name is None):
        raise DashboardError("give either a query or --query NAME (a saved query), not both")
    statement = check_read_only(saved_query(name).sql if name is not None else query or "")
    limits = limits or SqlLimits.from_env()
    target = out if out is not None else io.StringIO()
    con = data.connect_read_only(db, limits)
    try:
        with _bounded(con, limits):
            cursor = con.execute(statement)
            columns = [d[0] for d in cursor.description or []]
            batches = _batches(cursor, limits)
            if fmt == "csv":
                _write_csv(columns, batches, target)
            elif fmt == "json":
                _write_json(columns, batches, target)
            else:
                _write_table(columns, batches, target, limits)
    except duckdb.Error as exc:
        if name is not None and is_older_layout_error(exc):  # a saved query names what an older build lacks
            raise DashboardError(older_database_line(db)) from None
        raise DashboardError(f"query failed: {_first_line(exc)}") from exc
    finally:
        con.close()
    return "" if out is not None else target.getvalue()  # type: ignore[attr-defined]  # the StringIO above


class _bounded:
    """Run a statement under ``limits``: interrupt it at the timeout, and turn the limit a
    query hit into a message that names it and the flag that raises it."""

    def __init__(self, con: duckdb.DuckDBPyConnection, limits: SqlLimits) -> None:
        self.limits = limits
        self.con = con
        self.timed_out = threading.Event()
        self.timer = threading.Timer(limits.timeout_s, self._time_out)
        self.timer.daemon = True

    def _time_out(self) -> None:
        self.timed_out.set()
        self.con.interrupt()

    def __enter__(self) -> None:
        self.timer.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        self.timer.cancel()
        limits = self.limits
        if is_query_interrupt(error) and not self.timed_out.is_set():
            raise KeyboardInterrupt from None  # a Ctrl-C (pipeline.connect.interrupt_queries_on_ctrl_c)
        if isinstance(error, duckdb.InterruptException):
            raise DashboardError(
                f"query stopped after {limits.timeout_s:g} s, the statement timeout (raise it with "
                "--timeout, or GPU_FINOPS_SQL_TIMEOUT)"
            ) from None
        if isinstance(error, duckdb.OutOfMemoryException):
            if "temp_directory" in str(error):
                raise DashboardError(
                    f"query stopped: it needed more than the temp-space limit of {limits.temp} on disk "
                    "(raise it with --temp-limit, or GPU_FINOPS_SQL_TEMP_LIMIT)"
                ) from None
            raise DashboardError(
                f"query stopped: it needed more than the memory limit of {limits.memory} (raise it "
                "with --memory-limit, or GPU_FINOPS_SQL_MEMORY_LIMIT)"
            ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _without_string_literals(sql: str) -> str:
    """The query with '...' literals blanked, so a value like 'read_csv(' is not refused."""
    return re.sub(r"'(?:[^']|'')*'", "''", sql)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def _write_csv(columns: list[str], batches: Iterator[list[tuple]], out: TextIO) -> None:
    from dashboards.report import neutralise_csv_value  # same rule as report CSVs

    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([neutralise_csv_value(c) for c in columns])
    for batch in batches:
        writer.writerows([neutralise_csv_value(v) if v is not None else "" for v in row] for row in batch)


def _write_json(columns: list[str], batches: Iterator[list[tuple]], out: TextIO) -> None:
    """The rows as one JSON array, as ``json.dumps(rows, indent=2)`` writes it, row by row."""
    first = True
    for batch in batches:
        for row in batch:
            item = json.dumps(dict(zip(columns, row, strict=True)), default=_json_default, indent=2,
                              ensure_ascii=False)
            out.write(("[\n" if first else ",\n") + "\n".join("  " + line for line in item.splitlines()))
            first = False
    out.write("[]" if first else "\n]")
    out.write("\n")


def _write_table(columns: list[str], batches: Iterator[list[tuple]], out: TextIO, limits: SqlLimits) -> None:
    """A terminal table of the first `_MAX_TABLE_ROWS` rows (fewer when they would take more
    than 1/_KEPT_SHARE of the memory bound), cells cut at `_MAX_CELL_CHARS`: cells are plain
    text (no rich markup) with control characters neutralised; the rows beyond are counted,
    not kept."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    rows, total = _kept(batches, _MAX_TABLE_ROWS, limits)
    total += sum(len(more) for more in batches)
    table = Table(show_lines=False, header_style="bold")
    for column in columns:
        table.add_column(Text(printable(column)), overflow="fold")
    for row in rows:
        table.add_row(*(Text("" if v is None else _cell(printable(str(v)))) for v in row))
    console = Console(file=out, width=160, force_terminal=False, color_system=None)
    console.print(table)
    if total > len(rows):
        console.print(f"({total} rows; first {len(rows)} shown, at most {_MAX_TABLE_ROWS:,} rows and 1/{_KEPT_SHARE} "
                      f"of the {limits.memory} memory bound are kept: use --format csv)")
    else:
        console.print(f"({total} row{'s' if total != 1 else ''})")


def _cell(text: str) -> str:
    if len(text) <= _MAX_CELL_CHARS:
        return text
    return f"{text[:_MAX_CELL_CHARS]}… ({len(text):,} characters)"
