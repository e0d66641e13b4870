"""Why did a workload wait? Its event timeline from `fct_workload_timeline`."""

from __future__ import annotations

from pathlib import Path

import duckdb
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pipeline.connect import connect, older_database_problem
from pipeline.errors import PipelineError
from pipeline.wait_summary import Folded, fold, human_message, summary_sentence
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
                    "name one with --run-id"
                )
            run_id = runs[0]
        elif run_id not in runs:
            known = [row[0] for row in con.execute("select run_id from dim_runs order by 1").fetchall()]
            if run_id not in known:
                raise PipelineError(f"{db}: --run-id {run_id!r} is not a run of the database "
                                    f"(runs: {', '.join(known) or 'none'})")
            where = f"; it is in {', '.join(runs)}" if runs else ""
            raise PipelineError(f"{db}: unknown workload {workload_id!r} in run {run_id!r}{where}")
        cursor = con.execute(_TIMELINE_SQL, {"workload_id": workload_id, "run_id": run_id})
        columns = [d[0] for d in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    finally:
        con.close()


def _cell(value: object) -> Text:
    """User text as a plain cell: no rich markup, control characters neutralised."""
    return Text(printable(str(value)))


def _placement(row: dict) -> str:
    if row["pod_index"] is None:
        return ""
    placement = f"pod {row['pod_index']}"
    if row["node"]:
        gpus = f" ({row['gpus']:g} GPU)" if row["gpus"] is not None else ""
        placement += f" on {row['node']}{gpus}"
    return placement


def _when(row: dict) -> str:
    return row["ts"].strftime("%Y-%m-%d %H:%M:%S") if row["ts"] else f"{row['time_s']:g}s"


def render_timeline(rows: list[dict], console: Console) -> None:
    """The answer first (where the wait went, hours per concern), then a rich table of the
    timeline: time, event, pods/node, reason, message, with long runs of one pending reason
    folded into one line with their count."""
    title = f"{rows[0]['workload_id']} ({rows[0]['run_id']})" if rows else "no events"
    console.print(_cell(title), style="bold")
    console.print(_cell(summary_sentence(rows)))
    table = Table(title=_cell("timeline"))
    for header in ("time", "event", "pods/node", "reason", "message"):
        table.add_column(header)
    for item in fold(rows):
        if isinstance(item, Folded):
            first, last = item.first, item.last
            table.add_row(
                f"{_when(dict(first))} … {_when(dict(last))}", _cell(f"pending ×{item.count:,}"), _cell(""),
                _cell(first["reason"] or ""), _cell(f"last: {human_message(str(last['message'] or ''))}"),
            )
            continue
        row = dict(item)
        table.add_row(_when(row), _cell(row["event"]), _cell(_placement(row)), _cell(row["reason"] or ""),
                      _cell(human_message(str(row["message"] or ""))))
    console.print(table)
