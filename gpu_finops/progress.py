"""Progress bars for long work (rich), throttled so they never slow the work down."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


@contextmanager
def replay_progress(label: str, horizon_s: float, enabled: bool) -> Iterator[Callable[[float, int], None] | None]:
    """Yields a callback(simulated_time_s, pods_started) for the replay, or None."""
    if not enabled:
        yield None
        return
    console = Console(file=sys.stderr)
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("day {task.fields[day]:.1f}"),
        TextColumn("{task.fields[pods]:,} pods started"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(label, total=max(horizon_s, 1.0), day=0.0, pods=0)
        calls = 0

        def update(now: float, pods: int) -> None:
            nonlocal calls
            calls += 1
            if calls % 200 == 0:
                bar.update(task, completed=min(now, horizon_s), day=now / 86400, pods=pods)

        yield update
        bar.update(task, completed=horizon_s)
