"""Why did a workload wait? Its event timeline from `fct_workload_timeline`."""

from __future__ import annotations

from pathlib import Path

import duckdb
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pipeline.connect import connect, older_database_problem
from pipeline.errors import PipelineError
from scheduler.eventlog.text import printable

_TIMELINE_SQL = """
    select run_id, workload_id, seq, ts, time_s, event, pod_index, node, gpus, reason, message
    from fct_workload_timeline
    where workload_id = $workload_id and run_id = $run_id
    order by seq
"""


def workload_timeline(db: Path, workload_id: str, run_id: str | None = None) -> list[dict]:
    """The workload's events in order, one dict per event (read-only, bound parameters)."""
    db = Path(db)
    if not db.is_file():
        raise PipelineError(f"{db}: database not found")
    try:
        con = connect(db, read_only=True)
    except duckdb.Error as exc:  # not a DuckDB file, or one in use
        raise PipelineError(f"{db}: cannot open the database: {str(exc).splitlines()[0]}") from None
    try:
        older = older_database_problem(con, db)
        if older:
            raise PipelineError(older)
        runs = [
            row[0]
            for row in con.execute(
                "select distinct run_id from fct_workload_timeline where workload_id = ? order by 1",
                [workload_id],
            ).fetchall()
        ]
        if run_id is None:
            if not runs:
                raise PipelineError(f"{db}: unknown workload {workload_id!r}")
            if len(runs) > 1:
                raise PipelineError(
                    f"{db}: workload {workload_id!r} is in several runs ({', '.join(runs)}); "
                    "name one with run_id"
                )
            run_id = runs[0]
        elif run_id not in runs:
            raise PipelineError(f"{db}: unknown workload {workload_id!r} in run {run_id!r}")
        cursor = con.execute(_TIMELINE_SQL, {"workload_id": workload_id, "run_id": run_id})
        columns = [d[0] for d in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    finally:
        con.close()


def _cell(value: object) -> Text:
    """User text as a plain cell: no rich markup, control characters neutralised."""
    return Text(printable(str(value)))


def render_timeline(rows: list[dict], console: Console) -> None:
    """A rich table: time, event, pods/node, reason, message."""
    title = f"{rows[0]['workload_id']} ({rows[0]['run_id']})" if rows else "no events"
    table = Table(title=_cell(title))
    for header in ("time", "event", "pods/node", "reason", "message"):
        table.add_column(header)
    for row in rows:
        placement = ""
        if row["pod_index"] is not None:
            placement = f"pod {row['pod_index']}"
            if row["node"]:
                gpus = f" ({row['gpus']:g} GPU)" if row["gpus"] is not None else ""
                placement += f" on {row['node']}{gpus}"
        table.add_row(
            row["ts"].strftime("%Y-%m-%d %H:%M:%S") if row["ts"] else f"{row['time_s']:g}s",
            _cell(row["event"]),
            _cell(placement),
            _cell(row["reason"] or ""),
            _cell(row["message"] or ""),
        )
    console.print(table)
