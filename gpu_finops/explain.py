"""`explain RUN_DIR WORKLOAD_ID`: a workload's story from the event log alone."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
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


def _run_identity(run_dir: Path) -> tuple[str, Callable[[float], str]]:
    """The run's id and a clock for its seconds, as `explain --db` shows them: the run id of
    run.json (not the folder's name) and UTC dates from its start (`d4 14:39:38` where a run
    has no start)."""
    try:
        run = json.loads((run_dir / RUN_FILES["run"]).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        run = {}
    start = None
    if isinstance(run, dict) and isinstance(run.get("start"), str):
        try:
            start = datetime.fromisoformat(run["start"].replace("Z", "+00:00"))
        except ValueError:
            start = None
    run_id = str(run.get("run_id") or run_dir.name) if isinstance(run, dict) else run_dir.name

    def clock(seconds: float) -> str:
        if start is not None:
            return (start + timedelta(seconds=int(seconds))).strftime("%Y-%m-%d %H:%M:%S")
        days, rest = divmod(int(seconds), 86400)
        hours, rest = divmod(rest, 3600)
        minutes, secs = divmod(rest, 60)
        return f"d{days} {hours:02d}:{minutes:02d}:{secs:02d}"

    return run_id, clock


def explain_run_dir(run_dir: Path, workload_id: str, console: Console) -> None:
    """The answer first (where the wait went), then the timeline: consecutive pod rows of one
    event at one time as one line ("8 pods on 2 nodes"), long runs of one pending reason folded
    into one line with their count."""
    rows = workload_events(run_dir, workload_id)
    run_id, _clock = _run_identity(run_dir)
    console.print(Text(printable(f"{workload_id} ({run_id})")), style="bold")
    console.print(Text(printable(summary_sentence(rows))))
    table = Table(title=Text("timeline"), show_lines=False)
    for column in ("time", "event", "pods/node", "reason", "message"):
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
        table.add_row(_clock(float(str(item["time_s"]))), *_row_cells(item, group))
    console.print(table)


def _row_cells(row: Mapping[str, object], group: list[Mapping[str, object]]) -> list[Text]:
    pods = ""
    if row["pod_index"] is not None:
        nodes = sorted({str(r["node"]) for r in group})
        shown = ", ".join(nodes[:3]) + (f" +{len(nodes) - 3}" if len(nodes) > 3 else "")
        pods = f"{len(group)} pod(s) on {shown}"
    # Plain text cells: a workload id or message is neither rich markup nor escape sequences.
    cells = (str(row["event"]), pods, str(row["reason"] or ""), human_message(str(row["message"] or "")))
    return [Text(printable(cell)) for cell in cells]
