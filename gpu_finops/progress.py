"""Progress bars for long work (rich), throttled so they never slow the work down."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


def rejected_rows(count: int, run_dir: object) -> str:
    """"no rejected rows", or how many, naming the file that says why (for a command's summary)."""
    if count == 0:
        return "no rejected rows"
    return f"{count:,} rejected row{'' if count == 1 else 's'} (why: {run_dir}/rejected.csv)"


@contextmanager
def replay_progress(label: str, enabled: bool) -> Iterator[Callable[[float, int, float], None] | None]:
    """Yields a callback(simulated_s, pods_started, last_arrival_s) for the replay, or None.

    The bar appears on the first call, i.e. once the inputs have been read and checked, so
    an input error prints its one line without a half-drawn bar above it."""
    if not enabled:
        yield None
        return
    console = Console(file=sys.stderr)
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("day {task.fields[day]:.1f}"),
        TextColumn("{task.fields[pods]:,} pods started"),
        TextColumn("{task.fields[rate]:,.0f} pods/s"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    bar: Progress | None = None
    task = None
    calls = 0
    latest = (0.0, 0)  # the last (simulated now, pods started) seen: the bar ends on them

    def update(now: float, pods: int, last_arrival_s: float) -> None:
        nonlocal bar, task, calls, latest
        calls += 1
        latest = (now, pods)
        if bar is None:
            bar = Progress(*columns, console=console)
            bar.start()
            task = bar.add_task(label, total=max(last_arrival_s, 1.0), day=0.0, pods=0, rate=0.0)
        if calls % 200 == 0 and task is not None:
            elapsed = bar.tasks[0].elapsed or 0.0
            bar.update(task, completed=min(now, last_arrival_s), day=now / 86400, pods=pods,
                       rate=pods / elapsed if elapsed > 0 else 0.0)

    try:
        yield update
    finally:
        if bar is not None and task is not None:
            # The throttled updates skip most calls: a short run would end on "day 0.0 · 0 pods".
            now, pods = latest
            elapsed = bar.tasks[0].elapsed or 0.0
            bar.update(task, completed=bar.tasks[0].total, day=now / 86400, pods=pods,
                       rate=pods / elapsed if elapsed > 0 else 0.0)
            bar.stop()
