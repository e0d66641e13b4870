"""Kueue's flavor scan progress across attempts (FlavorFungibilityPreserveScanProgress).

A workload's last nomination records where each resource group's scan stopped
(`workloads.ScanProgress`, Kueue's LastAssignment); the next nomination starts after it.
These are the rules of when that progress is kept, from Kueue 0.20's scheduler.go and the
cache's clusterqueue.go:

1. Every admission cycle is one schedulingCycle (`next_cycle`).
2. A ClusterQueue's AllocatableResourceGeneration moves whenever a workload holding its
   quota is updated or removed in the cache: admission, eviction, PodsReady, release
   (`workloads_changed`).
3. Progress is outdated once the generation moved since it was recorded
   (`lastAssignmentOutdated`); with the gate, progress of this or the previous cycle is kept
   whatever the generation did (`outdated`).
4. A nomination records its progress (`record`); admission and issued preemptions drop it
   (the admitter clears it), and a skip ("no longer fits", overlapping targets) drops it only
   without the gate (`skipped`, `markSkipped`).
"""

from __future__ import annotations

from collections.abc import Iterable

from scheduler.admission.flavor_assignment import Assignment
from scheduler.admission.workloads import AdmissionWorkload, ScanProgress


class ScanProgressRules:
    """The cycle count, each ClusterQueue's generation and the gate (`preserve`)."""

    def __init__(self, cluster_queues: Iterable[str], preserve: bool) -> None:
        self.preserve = preserve
        self.cycle = 0
        self.generations: dict[str, int] = dict.fromkeys(cluster_queues, 0)

    def next_cycle(self) -> None:
        self.cycle += 1

    def workloads_changed(self, cluster_queue: str) -> None:
        """A workload holding quota in the ClusterQueue was updated or removed in Kueue's
        cache (clusterqueue.go deleteWorkload, which addOrUpdateWorkload calls for a
        workload it has: admission, eviction, PodsReady, release): its generation moves."""
        self.generations[cluster_queue] = self.generations.get(cluster_queue, 0) + 1

    def outdated(self, scan: ScanProgress, cluster_queue: str) -> bool:
        """scheduler.go lastAssignmentOutdated. With the gate the progress of this or the
        previous cycle is kept whatever the generation did (the workload's shape, part of
        its scheduling hash, never changes here)."""
        if self.preserve and self.cycle - scan.cycle <= 1:
            return False
        return self.generations[cluster_queue] > scan.generation

    def start_of(self, wl: AdmissionWorkload, cluster_queue: str) -> tuple[int, ...]:
        """Where the workload's next scan starts per resource group (outdated progress dropped)."""
        if wl.scan is not None and self.outdated(wl.scan, cluster_queue):
            wl.scan = None
        return wl.scan.start() if wl.scan is not None else ()

    def record(self, wl: AdmissionWorkload, assignment: Assignment, cluster_queue: str) -> None:
        """recordAssignment: the workload's LastAssignment is this nomination's LastState."""
        wl.scan = ScanProgress(tuple(sorted(assignment.tried.items())), self.generations[cluster_queue], self.cycle)

    def skipped(self, wl: AdmissionWorkload) -> None:
        """scheduler.go markSkipped: another entry of the cycle took the capacity or the
        targets; the progress is kept only with the gate."""
        if not self.preserve:
            wl.scan = None
