"""Where a workload's wait went, from its timeline: the answer `explain`, the Pending page and the
Workload page open with, before the timeline itself (folded: long runs of one reason become one
line with a count).

Pure functions over timeline rows (dicts with ``time_s``, ``event``, ``reason``, ``message``, as
``fct_workload_timeline`` and a run's ``events.parquet`` hold them). Each stretch of waiting runs
from a row to the workload's next row and is charged to what that row says: a pending row to
its reason's concern, a requeue, time-out or eviction to the backoff that follows it. Reasons
are typed columns of the event log; only the display of a message's quantities is rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# The concern of each pending reason (Kueue's and kube-scheduler's words, docs/contracts.md).
CONCERNS: dict[str, str] = {
    "WaitingForQuota": "quota",
    "ExceedsMaxQuota": "quota",
    "PendingEvaluation": "quota",
    "QuotaExceeded": "quota",
    "Misconfigured": "quota",
    "Unschedulable": "placement",
    "TopologyUnsatisfiable": "placement",
    "TopologyPlacementFailed": "placement",
    "WaitingForPreemptedWorkloads": "preemption",
    "GangNotSatisfiable": "gang barrier",
    "WaitingForGang": "gang barrier",
    "PodsReadyTimeout": "gang barrier",
}
ORDER = ("quota", "placement", "preemption", "gang barrier", "backoff", "before the first attempt",
         "other")
# Rows after which the workload waits out a backoff before its next attempt.
_BACKOFF_EVENTS = {"requeued", "timed_out", "preempted"}
# Rows after which it holds or runs on GPUs: not waiting.
_RUNNING_EVENTS = {"started", "finished", "resized", "rejected"}


@dataclass(frozen=True)
class WaitShare:
    concern: str
    seconds: float
    attempts: int
    reasons: tuple[str, ...]


def _concern(row: Mapping[str, Any]) -> str | None:
    event = row.get("event")
    if event == "pending":
        return CONCERNS.get(str(row.get("reason") or ""), "other")
    if event in _BACKOFF_EVENTS:
        return "backoff"
    if event == "submitted":
        return "before the first attempt"
    if event == "admitted":
        return "placement"  # admitted by Kueue, waiting for the scheduler to place it
    return None


def wait_shares(rows: Iterable[Mapping[str, Any]], end_s: float | None = None) -> list[WaitShare]:
    """Seconds waited per concern (in ``ORDER``), with the pending attempts and reasons of each.
    A workload still waiting at its last row waits until ``end_s`` (the run's end) when given."""
    ordered = list(rows)
    seconds: dict[str, float] = {}
    attempts: dict[str, int] = {}
    reasons: dict[str, set[str]] = {}
    for index, row in enumerate(ordered):
        concern = _concern(row)
        if concern is None or row.get("event") in _RUNNING_EVENTS:
            continue
        start = float(row["time_s"])
        following = next((float(r["time_s"]) for r in ordered[index + 1:]
                          if float(r["time_s"]) > start or r.get("event") in _RUNNING_EVENTS), None)
        stop = following if following is not None else (end_s if end_s is not None else start)
        seconds[concern] = seconds.get(concern, 0.0) + max(0.0, stop - start)
        if row.get("event") == "pending":
            attempts[concern] = attempts.get(concern, 0) + 1
            reasons.setdefault(concern, set()).add(str(row.get("reason") or ""))
    return [WaitShare(c, seconds[c], attempts.get(c, 0), tuple(sorted(reasons.get(c, set()))))
            for c in ORDER if seconds.get(c, 0.0) > 0 or attempts.get(c, 0) > 0]


def duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:,.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:,.0f} min"
    return f"{seconds / 3600:,.1f} h"


# Kueue's shortfall, "for RESOURCE in flavor F, Q more needed", Q a Kubernetes quantity
# ("87", "72500m"): GPUs and CPU cores are counted, memory keeps its quantity ("4544Gi").
_SHORTFALL = re.compile(r"for (?P<resource>\S+) in flavor (?P<flavor>[^,.;]+), (?P<amount>\d+)(?P<milli>m?) more needed")
_COUNTED = {"cpu": "CPUs"}


def human_message(message: str) -> str:
    """A message with every GPU and CPU shortfall in one form, a count with its unit: Kueue
    writes whole ones as numbers ("87 more needed") and fractional ones in milli-units ("72500m
    more needed", "111250m" cores); a reader wants "87 GPUs", "72.5 GPUs", "111.25 CPUs"."""
    def counted(match: re.Match[str]) -> str:
        resource = match.group("resource")
        unit = "GPUs" if "gpu" in resource else _COUNTED.get(resource)
        if unit is None:
            return match.group(0)
        value = int(match.group("amount")) / (1000 if match.group("milli") else 1)
        return (f"for {resource} in flavor {match.group('flavor')}, "
                f"{value:,.3f}".rstrip("0").rstrip(".") + f" {unit} more needed")
    return _SHORTFALL.sub(counted, message or "")


def summary_sentence(rows: Sequence[Mapping[str, Any]], end_s: float | None = None) -> str:
    """One line: the total wait and its split, biggest first, e.g. "Waited 122.3 h: quota
    110.2 h (1,302 attempts: WaitingForQuota), placement 4.0 h, backoff 8.1 h"."""
    shares = wait_shares(rows, end_s)
    total = sum(s.seconds for s in shares)
    if not shares or total <= 0:
        return "It never waited: it started at its first attempt."
    parts = []
    for share in sorted(shares, key=lambda s: -s.seconds):
        detail = ""
        if share.attempts:
            detail = f" ({share.attempts:,} attempt{'s' if share.attempts != 1 else ''}: {', '.join(share.reasons)})"
        parts.append(f"{share.concern} {duration(share.seconds)}{detail}")
    return f"Waited {duration(total)}: " + ", ".join(parts) + "."


@dataclass(frozen=True)
class Folded:
    """A run of consecutive pending rows with one reason, shown as one line."""

    first: Mapping[str, Any]
    last: Mapping[str, Any]
    count: int


def fold(rows: Sequence[Mapping[str, Any]], keep: int = 3) -> list[Mapping[str, Any] | Folded]:
    """The timeline with each run of more than ``keep`` consecutive pending rows of one reason
    folded into a ``Folded`` line (its first and last row and the count); other rows as they are."""
    out: list[Mapping[str, Any] | Folded] = []
    index = 0
    while index < len(rows):
        row = rows[index]
        end = index + 1
        if row.get("event") == "pending":
            while end < len(rows) and rows[end].get("event") == "pending" \
                    and rows[end].get("reason") == row.get("reason"):
                end += 1
        if end - index > keep:
            out.append(Folded(row, rows[end - 1], end - index))
        else:
            out.extend(rows[index:end])
        index = end
    return out
