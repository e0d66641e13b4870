"""An import's calendar: the cluster's own years, whatever a stray timestamp says.

A replay counts every time from the import's start (the hour of its first submission), and a
trace row must submit within ten years of it (`scheduler.trace.generic.MAX_SECONDS`). One pod
created in 1970 (a clock reset, a restored object) would move the start there and push every
other workload past that bound: the replay would quarantine all of them. So:

- times outside `kube.EARLIEST`..`kube.LATEST` (year 1, year 9999) make their pod a rejected
  row while it is read (``OutsideCalendar``, `gpu_finops.importers.pods`);
- of the rest, the **stated range** is `HALF_SPAN` (five years) either side of the median
  creation time of the import's pods: the bulk of the pods, however many stray ones there
  are below half. A pod with a creation, start or finish time beyond it is an outlier: a
  rejected row with its time and the range (``OutsideCalendar``), and the import says so in
  one line. Ten years in all, so every kept pod fits the trace's bound;
- the dump's time (the latest time found, when ``--observed-at`` is not given) is taken from
  the times within the range, so a node condition stamped 2199 does not stretch running pods.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from gpu_finops.importers.kube import iso
from gpu_finops.importers.records import PodRecord, Rejected

HALF_SPAN = timedelta(days=5 * 365)
"""How far from the median creation time a pod's times may lie (the stated range)."""


@dataclass(frozen=True)
class Calendar:
    """The range an import keeps: `HALF_SPAN` either side of its pods' median creation time."""

    first: datetime
    last: datetime

    @classmethod
    def of(cls, records: Iterable[PodRecord]) -> Calendar | None:
        created = sorted(r.created for r in records)
        if not created:
            return None
        median = created[(len(created) - 1) // 2]
        return cls(median - HALF_SPAN, median + HALF_SPAN)

    def holds(self, moment: datetime) -> bool:
        return self.first <= moment <= self.last

    def outside(self, record: PodRecord) -> tuple[str, datetime] | None:
        """The first of the pod's times beyond the range, with its field, or None."""
        for field, moment in (("metadata.creationTimestamp", record.created), ("status.startTime", record.started),
                              ("finishedAt", record.finished)):
            if moment is not None and not self.holds(moment):
                return field, moment
        return None

    @property
    def described(self) -> str:
        return f"{iso(self.first)[:10]} to {iso(self.last)[:10]}"


def keep_to_calendar(records: list[PodRecord], times: Iterable[datetime]
                     ) -> tuple[list[PodRecord], list[Rejected], list[datetime], str | None]:
    """(pods within the range, the outliers as rejected rows, the times within the range, a
    one-line warning when there were outliers)."""
    calendar = Calendar.of(records)
    if calendar is None:
        return records, [], list(times), None
    kept: list[PodRecord] = []
    rejected: list[Rejected] = []
    for record in records:
        beyond = calendar.outside(record)
        if beyond is None:
            kept.append(record)
            continue
        field, moment = beyond
        rejected.append(Rejected(record.source, record.row, "Pod", record.namespace, record.name, field,
                                 f"OutsideCalendar: {iso(moment)} is beyond the import's range, {calendar.described} "
                                 "(five years either side of its pods' median creation time)"))
    warning = None
    if rejected:
        warning = (f"{len(rejected):,} pod{'s' if len(rejected) != 1 else ''} with times beyond {calendar.described} "
                   "(five years either side of the median creation time) left out as outliers (OutsideCalendar "
                   f"in rejected.csv); the import keeps the cluster's own calendar for the other {len(kept):,}")
    return kept, rejected, [t for t in times if calendar.holds(t)], warning
