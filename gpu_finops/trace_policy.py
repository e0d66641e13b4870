"""Preemption policies as trace overrides: what a sweep scenario or `advise preemption` replays.

A preemption policy is a property of the workloads, and the generic trace says it per row:
`preemption_policy` (the PriorityClass's `preemptionPolicy`), `disruption_mode` (the PodGroup's),
`on_pod_loss` (its controller's) and `checkpoint_interval_s`. A `TracePolicy` sets them for
every row of a priority class or a workload kind; `apply_trace_policy` writes the trace with
them set, which `replay --trace` reads like any other (docs/preemption.md).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler.errors import InputError
from scheduler.model.workload import DisruptionMode, OnPodLoss
from scheduler.trace.generic import DEFAULT_KIND, MAX_SECONDS
from scheduler.trace.io import atomic_write_text, csv_text

KindValues = tuple[tuple[str, str], ...]  # (kind, value), sorted by kind


@dataclass(frozen=True)
class TracePolicy:
    """Overrides per priority class and per workload kind; empty fields change nothing."""

    never_preempt: tuple[int, ...] = ()  # priorities whose class says preemptionPolicy: Never
    disruption_mode: KindValues = ()  # kind -> single | all
    on_pod_loss: KindValues = ()  # kind -> restart_group | keep_running | replace_pod
    checkpoint_interval_s: tuple[tuple[str, float], ...] = ()  # kind -> seconds

    @property
    def empty(self) -> bool:
        return not (self.never_preempt or self.disruption_mode or self.on_pod_loss or self.checkpoint_interval_s)

    def label(self) -> str:
        """A short name for file names and tables: ``never-1000_training-all_training-ckpt1800s``."""
        parts = [f"never-{'-'.join(str(p) for p in self.never_preempt)}"] if self.never_preempt else []
        parts += [f"{kind}-{mode}" for kind, mode in self.disruption_mode]
        parts += [f"{kind}-{policy}" for kind, policy in self.on_pod_loss]
        parts += [f"{kind}-ckpt{seconds:g}s" for kind, seconds in self.checkpoint_interval_s]
        return "_".join(parts) or "as-traced"

    def merged(self, other: TracePolicy) -> TracePolicy:
        """This policy with `other`'s settings added (other's value wins for a kind in both)."""
        def join(mine: tuple[tuple[str, Any], ...], theirs: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
            return tuple(sorted((dict(mine) | dict(theirs)).items()))

        return TracePolicy(tuple(sorted(set(self.never_preempt) | set(other.never_preempt))),
                           join(self.disruption_mode, other.disruption_mode), join(self.on_pod_loss, other.on_pod_loss),
                           join(self.checkpoint_interval_s, other.checkpoint_interval_s))


def kind_values(value: Any, column: str, fail: Any) -> tuple[tuple[str, Any], ...]:
    """A ``{kind = value}`` table of a sweep file checked for `column`; ``fail(message)`` makes the
    error naming where it came from."""
    if not isinstance(value, Mapping) or not value:
        raise fail(f"a table of workload kind = value (e.g. {{training = ...}}) or \"trace\", got {value!r}")
    checked: list[tuple[str, Any]] = []
    for kind, setting in value.items():
        if column == "checkpoint_interval_s":
            if (isinstance(setting, bool) or not isinstance(setting, int | float) or not math.isfinite(setting)
                    or not 0 < setting <= MAX_SECONDS):
                raise fail(f"{kind}: seconds > 0 (at most ten years), got {setting!r}")
            checked.append((str(kind), float(setting)))
            continue
        allowed = [str(v.value) for v in (DisruptionMode if column == "disruption_mode" else OnPodLoss)]
        if setting not in allowed:
            raise fail(f"{kind}: one of {', '.join(allowed)}, got {setting!r}")
        checked.append((str(kind), setting))
    return tuple(sorted(checked))


def priorities(value: Any, fail: Any) -> tuple[int, ...]:
    """A list of priority values (each a 32-bit integer)."""
    if not isinstance(value, list) or any(isinstance(p, bool) or not isinstance(p, int) or abs(p) > 2**31 - 1
                                          for p in value):
        raise fail(f"a list of priority values (e.g. [1000]; [] for none), got {value!r}")
    return tuple(sorted(set(value)))


def apply_trace_policy(source: Path, destination: Path, policy: TracePolicy) -> int:
    """Copy a generic CSV trace with `policy`'s columns set on the rows it names (written whole,
    then renamed into place); returns how many rows changed (`trace_policy_text`)."""
    text, changed = trace_policy_text(source, policy)
    atomic_write_text(Path(destination), text)
    return changed


def trace_policy_text(source: Path, policy: TracePolicy) -> tuple[str, int]:
    """A generic CSV trace's text with `policy`'s columns set on the rows it names, and how many
    rows changed. Missing columns are added (empty elsewhere: their defaults); every other cell
    stays as it is, and a row whose priority does not parse is copied unchanged (the replay
    rejects it with its reason)."""
    source = Path(source)
    try:
        with source.open(newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise InputError(source, f"not a readable CSV trace: {error}") from None
    if not rows or "workload_id" not in rows[0]:
        raise InputError(source, "a preemption policy is applied to a generic CSV trace (a workload_id column)",
                         row=1, field="workload_id")
    header = list(rows[0])
    for column in ("preemption_policy", "disruption_mode", "on_pod_loss", "checkpoint_interval_s"):
        if column not in header:
            header.append(column)
    at = {column: header.index(column) for column in header}
    by_kind = {"disruption_mode": dict(policy.disruption_mode), "on_pod_loss": dict(policy.on_pod_loss),
               "checkpoint_interval_s": {k: _number(v) for k, v in policy.checkpoint_interval_s}}
    never = set(policy.never_preempt)
    body: list[list[str]] = []
    changed = 0
    for row in rows[1:]:
        if len(row) != len(rows[0]):
            body.append(row)  # copied as it is: the replay rejects it with its reason
            continue
        row = row + [""] * (len(header) - len(row))
        before = list(row)
        kind = (row[at["kind"]].strip() if "kind" in at else "") or DEFAULT_KIND
        priority_text = row[at["priority"]].strip() if "priority" in at else ""
        try:
            priority = int(float(priority_text)) if priority_text else 0
        except ValueError:
            priority = None
        if priority is not None and priority in never:
            row[at["preemption_policy"]] = "never"
        for column, values in by_kind.items():
            if kind in values:
                row[at[column]] = values[kind]
        changed += row != before
        body.append(row)
    return csv_text(header, body), changed


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
