"""`explain RUN_DIR WORKLOAD_ID`: a workload's story from the event log alone."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from rich.console import Console
from rich.table import Table
from rich.text import Text

from scheduler.errors import InputError
from scheduler.eventlog.schema import RUN_FILES
from scheduler.eventlog.text import printable


def workload_events(run_dir: Path, workload_id: str) -> list[dict[str, object]]:
    path = run_dir / RUN_FILES["events"]
    if not path.is_file():
        raise InputError(run_dir.name, f"not a run directory: no {RUN_FILES['events']}")
    table = pq.read_table(path, filters=[("workload_id", "=", workload_id)])
    if table.num_rows == 0:
        raise InputError(path.name, f"no events for workload {workload_id!r}", field="workload_id")
    return table.sort_by("seq").to_pylist()


def _clock(seconds: float) -> str:
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"d{days} {hours:02d}:{minutes:02d}:{secs:02d}"


def explain_run_dir(run_dir: Path, workload_id: str, console: Console) -> None:
    rows = workload_events(run_dir, workload_id)
    table = Table(title=Text(printable(f"{workload_id}: reasons over time ({run_dir.name})")), show_lines=False)
    for column in ("time", "event", "pods", "reason", "message"):
        table.add_column(column, overflow="fold")
    # Consecutive pod rows of one event at one time collapse into one line: "8 pods on 2 nodes".
    index = 0
    while index < len(rows):
        row = rows[index]
        group = [row]
        while (
            index + len(group) < len(rows)
            and rows[index + len(group)]["event"] == row["event"]
            and rows[index + len(group)]["time_s"] == row["time_s"]
            and row["pod_index"] is not None
        ):
            group.append(rows[index + len(group)])
        index += len(group)
        pods = ""
        if row["pod_index"] is not None:
            nodes = sorted({str(r["node"]) for r in group})
            shown = ", ".join(nodes[:3]) + (f" +{len(nodes) - 3}" if len(nodes) > 3 else "")
            pods = f"{len(group)} pod(s) on {shown}"
        # Plain text cells: a workload id or message is neither rich markup nor escape sequences.
        cells = (str(row["event"]), pods, row["reason"] or "", row["message"] or "")
        table.add_row(_clock(float(str(row["time_s"]))), *(Text(printable(str(cell))) for cell in cells))
    console.print(table)
