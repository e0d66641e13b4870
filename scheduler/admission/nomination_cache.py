"""Nominations kept per flavor-resource: a head is nominated again only when something it
read has changed.

A nomination (flavor assignment, and preemption targets when it needs them) reads, for the
flavors it may be given, the usage of those flavor-resources along the cohort tree, and the
workloads holding them (their order, which are being evicted). Without fair sharing it reads
nothing else that changes during a replay: quotas, limits, the tree's shape and the
workload's own requests, models, priority (and queue-order timestamp where the policy looks
at it, which is part of the cache key) are fixed. So an answer stays exact for as long as
none of the flavor-resources it read has changed: usage added or removed for real (an
admission, a release), for one cycle (a reservation), or a holder marked as evicted.

Each of those changes bumps the versions of the flavor-resources it touched
(`FlavorResourceVersions.bump`); a cached nomination carries the versions of what it read
and is reused while they are unchanged. A release of H100s thus leaves the nominations of
every A100- and L40S-only shape standing, where one tree-wide version made every head of
every queue be nominated again.

Fair sharing compares dominant-resource shares over every flavor-resource of the cohort, so
there every change invalidates every nomination (one version for the whole tree).

A fitting nomination decided by its chosen flavors' quota checks alone is kept with those
checks instead (`fit_certificate.FitCertificate`): reused while they pass, whatever the
versions say, since any admission or release in a cohort without lending limits moves every
queue's available quota and bumps the versions a fit reads.

A workload whose last scan stopped before a group's last flavor resumes after it (Kueue's
LastAssignment): its nomination reads from there on, so the starting flavors are part of the
key (`Nominator.nominate`); the common start, every group from its first flavor, is ().
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Generic, TypeVar

from scheduler.admission.fit_certificate import FIT_REUSE_CHECK, FitCertificate
from scheduler.admission.flavor_assignment import Assignment
from scheduler.admission.flavor_screen import flavor_accepts
from scheduler.admission.objects import ClusterQueue, ResourceFlavor
from scheduler.admission.preemption.common import Target
from scheduler.admission.quota import FlavorResource, QuotaNode
from scheduler.admission.versions import FlavorResourceVersions
from scheduler.admission.workloads import WorkloadShape
from scheduler.verify import Verifier

_MOST_ENTRIES = 100_000  # with the queue-order timestamp in the key, one entry per waiting workload

Value = TypeVar("Value")


class _Cached(Generic[Value]):
    # A plain class: mypyc compiles no generic dataclass with slots.
    __slots__ = ("stamp", "value", "fit")

    def __init__(self, stamp: tuple[int, ...], value: Value, fit: FitCertificate | None) -> None:
        self.stamp = stamp  # unused when `fit` decides
        self.value = value
        self.fit = fit


class NominationCache(Generic[Value]):
    """Nominations by (ClusterQueue, shape[, queue-order timestamp], starting flavors), each valid while the
    flavor-resources it could read keep their versions (a certified fit: while its quota checks pass)."""

    def __init__(self, specs: Mapping[str, ClusterQueue], flavors: Mapping[str, ResourceFlavor],
                 versions: FlavorResourceVersions) -> None:
        self.specs = specs
        self.flavors = flavors
        self.versions = versions
        self._entries: dict[tuple[object, ...], _Cached[Value]] = {}
        self._reads: dict[tuple[str, WorkloadShape], tuple[FlavorResource, ...]] = {}
        self.hits = 0  # reused while the versions stand
        self.fit_hits = 0  # certified fits reused while their quota checks pass
        self.misses = 0

    def reads(self, queue: QuotaNode, requests: Mapping[str, int], models: tuple[str, ...],
              shape: WorkloadShape) -> tuple[FlavorResource, ...]:
        """Every flavor-resource a nomination of this shape in this queue may read: each
        requested resource under each flavor of its resource group that the GPU-model
        affinity accepts (flavors it rejects are skipped without reading any quota)."""
        cluster_queue, keys = queue.name, queue.keys
        key = (cluster_queue, shape)
        found = self._reads.get(key)
        if found is None:
            frs: list[FlavorResource] = []
            for group in self.specs[cluster_queue].resource_groups:
                requested = [r for r in group.covered_resources if r in requests]
                if not requested:
                    continue
                for flavor_quotas in group.flavors:
                    if flavor_accepts(self.flavors[flavor_quotas.flavor], models):
                        frs.extend([keys.of(flavor_quotas.flavor, r) for r in requested])
            found = self._reads[key] = tuple(frs)
        return found

    def get(self, key: tuple[object, ...], queue: QuotaNode, requests: Mapping[str, int], models: tuple[str, ...],
            shape: WorkloadShape) -> _Cached[Value] | None:
        """The cached nomination if it still stands: a certified fit while its quota checks
        pass in `queue`, any other while none of the flavor-resources it `reads` changed (a
        certified fit never looks them up)."""
        cached = self._entries.get(key)
        if cached is not None:
            fit = cached.fit
            if fit is not None:
                if fit.holds(queue):
                    self.fit_hits += 1
                    return cached
            elif cached.stamp == self.versions.stamp(self.reads(queue, requests, models, shape)):
                self.hits += 1
                return cached
        self.misses += 1
        return None

    def put(self, key: tuple[object, ...], queue: QuotaNode, requests: Mapping[str, int], models: tuple[str, ...],
            shape: WorkloadShape, value: Value, fit: FitCertificate | None) -> None:
        """Keep `value`, just computed: with its certificate, or with the versions of what it
        reads (taken now: nominating bumps no version)."""
        if len(self._entries) >= _MOST_ENTRIES and key not in self._entries:
            self._entries.clear()  # keys of shapes no longer waiting; dropping answers only costs time
        stamp = () if fit is not None else self.versions.stamp(self.reads(queue, requests, models, shape))
        self._entries[key] = _Cached(stamp, value, fit)


class NominationCheck:
    """`replay --verify`: a reused nomination equals the one computed afresh at that moment
    (flavors, usage, modes, borrowing, reasons, and the same targets for the same reasons)."""

    def __init__(self, verifier: Verifier, clock: Callable[[], float]) -> None:
        self.verifier = verifier
        self.clock = clock

    def same(self, workload: str, cached: tuple[Assignment, list[Target]], fresh: tuple[Assignment, list[Target]],
             what: str = "nomination reused from the per-flavor-resource cache") -> None:
        self.verifier.same(self.clock(), what, _described(cached), _described(fresh), workload)

    def same_fit_reused(self, workload: str, cached: tuple[Assignment, list[Target]],
                        fresh: tuple[Assignment, list[Target]]) -> None:
        self.same(workload, cached, fresh, FIT_REUSE_CHECK)

    def same_fit(self, workload: str, fast: bool, plain: bool) -> None:
        self.verifier.same(self.clock(), "quota fit from the cycle's victims summed per queue", fast, plain, workload)

    def same_assignment(self, workload: str, fast: Assignment, plain: Assignment) -> None:
        self.verifier.same(self.clock(), "flavor assignment without the oracle on doomed flavors",
                           _described((fast, [])), _described((plain, [])), workload)


def _described(nomination: tuple[Assignment, list[Target]]) -> tuple[object, ...]:
    assignment, targets = nomination
    return (assignment.mode, assignment.flavors, assignment.usage, assignment.modes, assignment.borrow,
            sorted(assignment.reasons), assignment.no_fit_reason, assignment.message(), assignment.pods, assignment.tried,
            [(t.workload.name, t.reason) for t in targets])
