"""`explain RUN_DIR WORKLOAD_ID`: a workload's story from the event log alone."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pyarrow.parquet as pq
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pipeline.wait_summary import Folded, fold, human_message, summary_sentence
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
    """The answer first (where the wait went), then the timeline: consecutive pod rows of one
    event at one time as one line ("8 pods on 2 nodes"), long runs of one pending reason folded
    into one line with their count."""
    rows = workload_events(run_dir, workload_id)
    console.print(Text(printable(f"{workload_id} ({run_dir.name})")), style="bold")
    console.print(Text(printable(summary_sentence(rows))))
    table = Table(title=Text("timeline"), show_lines=False)
    for column in ("time", "event", "pods", "reason", "message"):
        table.add_column(column, overflow="fold")
    items = fold(rows)
    index = 0
    while index < len(items):
        item = items[index]
        if isinstance(item, Folded):
            cells = (f"pending ×{item.count:,}", "", str(item.first["reason"] or ""),
                     f"last: {human_message(str(item.last['message'] or ''))}")
            clock = f"{_clock(float(str(item.first['time_s'])))} … {_clock(float(str(item.last['time_s'])))}"
            table.add_row(clock, *(Text(printable(cell)) for cell in cells))
            index += 1
            continue
        # Consecutive pod rows of one event at one time collapse into one line: "8 pods on 2 nodes".
        group = [item]
        while index + len(group) < len(items):
            following = items[index + len(group)]
            if isinstance(following, Folded) or following["event"] != item["event"] \
                    or following["time_s"] != item["time_s"] or item["pod_index"] is None:
                break
            group.append(following)
        index += len(group)
        table.add_row(*_row_cells(item, group))
    console.print(table)


def _row_cells(row: Mapping[str, object], group: list[Mapping[str, object]]) -> list[Text | str]:
    pods = ""
    if row["pod_index"] is not None:
        nodes = sorted({str(r["node"]) for r in group})
        shown = ", ".join(nodes[:3]) + (f" +{len(nodes) - 3}" if len(nodes) > 3 else "")
        pods = f"{len(group)} pod(s) on {shown}"
    # Plain text cells: a workload id or message is neither rich markup nor escape sequences.
    cells = (str(row["event"]), pods, str(row["reason"] or ""), human_message(str(row["message"] or "")))
    return [_clock(float(str(row["time_s"]))), *(Text(printable(cell)) for cell in cells)]
