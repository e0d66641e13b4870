"""The trace's optional ``labels`` column: a workload's pod labels and annotations as one JSON
object of text values (docs/traces.md, "Labels").

Contract of `parse_labels(cell)`:

- An empty cell (or none) is no labels: ``()``.
- Otherwise the cell is a JSON object whose keys are Kubernetes qualified names (an optional
  DNS-subdomain prefix and ``/``, then a name of at most 63 characters of letters, digits,
  ``-``, ``_`` and ``.``, starting and ending with a letter or digit: the syntax both labels and
  annotations keys follow) and whose values are non-empty, printable text of at most
  `MAX_VALUE_CHARS` characters. At most `MAX_LABELS` keys, a key at most once.
- Anything else raises `RowProblem` on the ``labels`` column with one sentence saying what
  is wrong: the row is quarantined, never half read.
- The result is the pairs sorted by key: one canonical form, whatever the cell's spacing or
  key order, so two traces that say the same thing give the same run.

Why one JSON column and not a column per key: the keys are the cluster's own (``team``,
``cost-center``, ``app.kubernetes.io/part-of``), unknown to the schema and different from one
cluster to the next; a column per key would make every cluster's trace a different schema. The
workload's facts (tenant, queue, kind, ...) stay typed columns; labels are the open-ended
part. ``workloads.parquet`` keeps them as a typed ``map<string, string>``.
"""

from __future__ import annotations

import json
import re
import reprlib
from typing import Any

from scheduler.trace.io import RowProblem, control_character_problem

COLUMN = "labels"
MAX_LABELS = 64
MAX_VALUE_CHARS = 1024
MAX_CELL_CHARS = 65_536
"""A cell longer than this is refused before it is parsed (a hostile cell must stay cheap)."""
RESERVED_VALUES = ("__idle__", "__unallocated__")
"""The allocation names of the platform's idle line and of workloads without the label."""

_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")

Labels = tuple[tuple[str, str], ...]


def key_problem(key: str) -> str | None:
    """Why ``key`` is not a Kubernetes label or annotation key, else None."""
    prefix, slash, name = key.rpartition("/")
    if not _NAME.match(name):
        return ("must be a Kubernetes label key: a name of at most 63 letters, digits, '-', '_' or '.', "
                "starting and ending with a letter or digit, after an optional 'prefix/'")
    if slash and not (len(prefix) <= 253 and all(_DNS_LABEL.match(part) for part in prefix.split("."))):
        return "has a prefix that is not a DNS subdomain (lower-case letters, digits, '-' and '.', at most 253)"
    return None


def parse_labels(cell: Any, column: str = COLUMN) -> Labels:
    """The cell's labels, sorted by key; see the module docstring for the rules."""
    if cell is None or (isinstance(cell, float) and cell != cell):
        return ()
    if isinstance(cell, bytes):
        try:
            cell = cell.decode("utf-8")
        except UnicodeDecodeError:
            raise RowProblem(column, "not UTF-8 text") from None
    if not isinstance(cell, str):
        raise RowProblem(column, f"must be a JSON object written as text, got a {type(cell).__name__}")
    text = cell.strip()
    if not text:
        return ()
    if len(text) > MAX_CELL_CHARS:
        raise RowProblem(column, f"is {len(text):,} characters long, at most {MAX_CELL_CHARS:,}")
    try:
        value = json.loads(text, object_pairs_hook=_pairs)
    except _DuplicateKey as duplicate:
        raise RowProblem(column, f"key {_shown(duplicate.key)} appears twice") from None
    except json.JSONDecodeError as exc:
        raise RowProblem(column, f"not JSON: {exc.msg} at character {exc.pos + 1}") from None
    except RecursionError:
        raise RowProblem(column, "not a flat JSON object (nested too deep)") from None
    if not isinstance(value, _Object):  # _pairs turns every JSON object into an _Object
        raise RowProblem(column, f'must be a JSON object of text values ({{"team": "llm"}}), got {_kind(value)}')
    if len(value) > MAX_LABELS:
        raise RowProblem(column, f"has {len(value)} keys, at most {MAX_LABELS}")
    for key, item in value:
        problem = key_problem(key)
        if problem is not None:
            raise RowProblem(column, f"key {_shown(key)} {problem}")
        if not isinstance(item, str):
            raise RowProblem(column, f"value of {_shown(key)} must be text, got {_kind(item)}")
        if not item:
            raise RowProblem(column, f"value of {_shown(key)} is empty: leave the key out instead")
        if len(item) > MAX_VALUE_CHARS:
            raise RowProblem(column, f"value of {_shown(key)} is {len(item):,} characters long, at most {MAX_VALUE_CHARS:,}")
        unprintable = control_character_problem(item)
        if unprintable is not None:
            raise RowProblem(column, f"value of {_shown(key)} {unprintable}")
        if item in RESERVED_VALUES:
            raise RowProblem(column, f"value of {_shown(key)} is {item!r}, a name the cost records reserve")
    return tuple(sorted(value))


def labels_json(labels: Labels | dict[str, str]) -> str:
    """The canonical cell: keys sorted, no spaces, non-ASCII kept as it is ('' for none)."""
    pairs = sorted(labels.items()) if isinstance(labels, dict) else sorted(labels)
    if not pairs:
        return ""
    return json.dumps(dict(pairs), ensure_ascii=False, separators=(",", ":"))


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _Object(list):  # type: ignore[type-arg]
    """A JSON object's (key, value) pairs in their order (a list can still be told apart)."""


def _pairs(pairs: list[tuple[str, Any]]) -> _Object:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen.add(key)
    return _Object(pairs)


def _kind(value: Any) -> str:
    if isinstance(value, _Object):
        return "an object"
    return {bool: "true/false", int: "a number", float: "a number", list: "a list", type(None): "null",
            str: "text"}.get(type(value), type(value).__name__)


def _shown(value: object) -> str:
    return reprlib.repr(value)
