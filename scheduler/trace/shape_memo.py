"""Trace rows that differ only in their own columns parse alike: parse the shape once.

A trace repeats a few shapes (GPUs, pods, model, team, queue, priority, topology, …) over
many rows that differ in their id, submission time, duration, GPU utilization and labels. Validating and
converting the shape's dozen columns on every row was most of the reader's per-row work.
`ShapeMemo` keys a row by the raw text of every other column and, for a shape it has seen
parse cleanly, the reader parses only the row's own columns (`generic._parse_own`); the rest
comes from the first row of that shape.

Exact: a clean shape raises nothing, so a row of it fails, if at all, on its own columns, and
`_parse_own` checks them in `_parse_row`'s order; a row whose shape failed is parsed whole
every time, so its error is the one `_parse_row` gives. Only text and empty cells are keys (a CSV's;
a Parquet file's typed values, where 0.0 equals -0.0 and 1 equals True, are parsed whole).
`tests/scheduler/test_trace_shape_memo.py` compares the two on random rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# Per row, never part of a shape (a measured utilization is as particular as a duration).
OWN_COLUMNS = frozenset({"workload_id", "submit_time", "duration_s", "gpu_utilization", "labels"})
MAX_SHAPES = 65_536  # past this, new shapes are parsed whole (a trace of unique rows keeps no memo)


class ShapeMemo:
    """One file's shapes: `columns` is its header (every record has these keys, in this order).
    Per row: `seen(record)` gives the first clean parse of its shape, or None, and then the
    caller parses the row whole and hands the result to `remember`."""

    def __init__(self, columns: Sequence[str]) -> None:
        self.shape_columns = [column for column in columns if column not in OWN_COLUMNS]
        self.parsed: dict[tuple[Any, ...], Any] = {}
        self._key: tuple[Any, ...] | None = None  # the last row's key (None: not one to memoize)

    def seen(self, record: dict[str, Any]) -> Any:
        key = tuple([record.get(column) for column in self.shape_columns])
        for value in key:
            if value is not None and type(value) is not str:
                self._key = None
                return None
        self._key = key
        return self.parsed.get(key)

    def remember(self, parsed: Any) -> None:
        """The last row `seen` parsed whole and cleanly: the first of its shape."""
        if self._key is not None and len(self.parsed) < MAX_SHAPES:
            self.parsed[self._key] = parsed
