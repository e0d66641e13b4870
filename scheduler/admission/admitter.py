"""One admission cycle, in the steps of Kueue's scheduler (pkg/scheduler/scheduler.go
schedule(); semantics reference §4.4).

  1. Heads: pop one workload per ClusterQueue that has any.
  2. Snapshot: the live quota tree; usage reserved only for this cycle is undone after step 5.
  3. Nominate: flavor assignment for each head, and preemption targets when it needs them.
  4. Order: classical (borrowing level, priority, age) or the fair-sharing tournament; with
     PrioritizePreemptorWorkloads a workload waiting for its preemptions goes first.
  5. Process in that order: admit what fits; issue preemptions if the entry still fits with
     its targets gone (processEntry's fits); say why the rest waits.
  6. Requeue the heads not admitted (StrictFIFO / BestEffortFIFO) and write their reasons.

The `Admitter` owns the decisions' state that outlives a cycle (the preemptor and its
oracle cache; step 3's caches are the `nominator.Nominator`'s) and reads the layer's quota tree, queues and holders. What a
cycle may *do* goes through `AdmissionPort`, which the layer (`kueue.KueueAdmission`)
implements: admit, evict, say why a workload waits, ask whether admission is blocked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from scheduler.admission.cycle_memo import CycleMemo
from scheduler.admission.cycle_victims import CycleVictims, UsageByQueue
from scheduler.admission.fair_shares import FairShares
from scheduler.admission.fair_sharing_order import tournament_order
from scheduler.admission.flavor_assignment import Assignment, Mode
from scheduler.admission.holders import Holders
from scheduler.admission.nominator import Entry, Nominator
from scheduler.admission.objects import QueueConfig
from scheduler.admission.policies import PreemptionPolicy
from scheduler.admission.preemption.common import (
    PreemptionReason,
)
from scheduler.admission.preemption.preemptor import Preemptor
from scheduler.admission.queues import PendingQueue
from scheduler.admission.quota import FlavorResource, QuotaNode, QuotaTree
from scheduler.admission.scan_progress import ScanProgressRules
from scheduler.admission.tas_preemption import TopologyFit, topology_nomination
from scheduler.admission.versions import FlavorResourceVersions
from scheduler.admission.wait_for_pods_ready import BLOCKED_MESSAGE
from scheduler.admission.workloads import AdmissionWorkload, State
from scheduler.eventlog.schema import PendingReason

NO_LONGER_FITS = "Workload no longer fits after processing another workload"
OVERLAPPING_TARGETS = "Workload has overlapping preemption targets with another workload"
_RECLAIM_ANY = PreemptionPolicy.ANY  # a module constant (see preemption.common)


class AdmissionPort(Protocol):
    """What an admission cycle may do to the workloads it decides on.

    Every call is a decision of the current cycle, made at the simulated instant of the
    cycle; each writes the event rows it implies. None of them may start another cycle
    synchronously (the layer schedules cycles on the clock).
    """

    def admit(self, wl: AdmissionWorkload, assignment: Assignment) -> None:
        """`wl` (a head of this cycle) fits: it leaves its queue and holds
        `assignment.usage` in its ClusterQueue for real (the tree's `commit`)."""

    def evict(self, victim: AdmissionWorkload, preemptor: AdmissionWorkload, reason: PreemptionReason) -> None:
        """Preempt the admitted `victim` for `preemptor`; its quota comes back once its pods
        are gone, which is never within this cycle."""

    def say_pending(self, wl: AdmissionWorkload, reason: PendingReason, message: str) -> None:
        """Why `wl`, still queued, was not admitted (a `pending` row with its place in the queue)."""

    def place_topology(self, wl: AdmissionWorkload, assignment: Assignment) -> str | None:
        """Kueue's TAS for a pod set whose flavor has a Topology: None when it has a domain
        (or needs none), else the pending message."""

    def admission_blocked(self) -> bool:
        """waitForPodsReady.blockAdmission: an admitted workload is not PodsReady yet, so
        nothing else may be admitted now."""


@dataclass(frozen=True, init=False)
class CycleResult:
    """What one admission cycle did, for the loop that runs the next (`KueueAdmission`)."""

    admitted: bool  # some head was admitted (Kueue's KeepGoing; otherwise SlowDown)
    progressed: bool  # another cycle can do more

    # Written out: mypyc compiles it; the __init__ the dataclasses module generates runs
    # interpreted, even in the compiled build (`test_compiled_inits.py`).
    def __init__(self, admitted: bool, progressed: bool) -> None:
        object.__setattr__(self, "admitted", admitted)
        object.__setattr__(self, "progressed", progressed)


_NO_CYCLE = CycleResult(False, False)


class CycleSnapshot:
    """Step 2: the live tree serves as the cycle's snapshot. Quota reserved for the cycle
    only (a preemptor waiting for its victims, a head holding what is free for itself) is
    added to it and removed again by `restore`. When nothing changed for real meanwhile
    (no admission, no eviction), the tree's version goes back too, so that nominations
    cached before the cycle stay valid for the next one."""

    def __init__(self, tree: QuotaTree, versions: FlavorResourceVersions) -> None:
        self.tree = tree
        self.version = tree.version
        self.commits = tree.commits
        self.versions = versions
        self.versions_before: dict[FlavorResource, int] = {}
        self.reserved: list[tuple[QuotaNode, dict[FlavorResource, int]]] = []

    def reserve(self, node: QuotaNode, usage: dict[FlavorResource, int]) -> None:
        for fr, before in self.versions.saved(usage).items():
            self.versions_before.setdefault(fr, before)
        self.tree.add(node, usage)
        self.tree.touch()
        self.versions.bump(usage)
        self.reserved.append((node, usage))

    def restore(self) -> None:
        for node, usage in self.reserved:
            self.tree.remove(node, usage)
        if self.tree.commits == self.commits:
            self.tree.version = self.version  # only this cycle's reservations changed it, now undone
            self.versions.restore(self.versions_before)
        else:
            self.tree.touch()


class Admitter:
    def __init__(self, config: QueueConfig, tree: QuotaTree, queues: Mapping[str, PendingQueue], holders: Holders,
                 port: AdmissionPort) -> None:
        self.config = config
        self.tree = tree
        self.queues = queues
        self.port = port
        self.fair_sharing = config.configuration.fair_sharing
        self.preemptors_first = config.configuration.prioritize_preemptor_workloads
        self.scan = ScanProgressRules(config.cluster_queues, config.configuration.preserve_scan_progress)
        self.shares = FairShares(tree)
        self.versions = FlavorResourceVersions(whole_tree_only=self.fair_sharing is not None)
        self.preemptor = Preemptor(tree, config.cluster_queues, holders, self.fair_sharing, self.shares, self.versions,
                                   {name: q.fair_usage for name, q in queues.items() if q.fair_usage is not None})
        self.nominator = Nominator(config, tree, self.preemptor, self.versions, self.scan)  # step 3
        self.topology: TopologyFit | None = None  # Kueue's TAS cache, when the queues file uses TAS
        # Step 5 reused from the last cycle when it would come out the same (not with TAS or
        # fair sharing's tournament: see cycle_memo).
        self.memo = CycleMemo(tree, config.cluster_queues, self.preemptors_first, port.admission_blocked)

    def run_cycle(self) -> CycleResult:
        """One cycle: whether it admitted something, and whether another cycle can do more
        (something was admitted, or a BestEffortFIFO head moved aside so that the next one
        gets its turn)."""
        # 1. Heads: one per ClusterQueue.
        entries = self._heads()
        if not entries:
            return _NO_CYCLE
        self.scan.next_cycle()
        # 2. Snapshot: the live tree; reservations made for this cycle only are undone below.
        snapshot = CycleSnapshot(self.tree, self.versions)
        try:
            # 3. Nominate.
            for entry in entries:
                self.nominator.nominate(entry)
            # 4 + 5. Order and process (the tournament picks each winner after the last admission).
            preempted = CycleVictims(self.tree)  # this cycle's victims
            if self.fair_sharing is None and self.topology is None:
                self.memo.process(list(self._ordered(entries)), lambda entry: self._process(entry, preempted, snapshot))
            else:
                for entry in self._ordered(entries):
                    self._process(entry, preempted, snapshot)
        finally:
            snapshot.restore()
            if self.topology is not None:
                self.topology.end_cycle()
        # 6. Requeue and explain.
        admitted = progressed = False
        for entry in entries:
            if entry.admitted:
                admitted = progressed = True
            elif entry.wl.state is State.QUEUED:
                progressed |= self._requeue(entry)
        return CycleResult(admitted, progressed)

    def _heads(self) -> list[Entry]:
        entries = []
        for name, pending_queue in self.queues.items():
            if not pending_queue.has_heads:
                continue
            wl = pending_queue.pop_head()
            if wl is not None:
                entries.append(Entry(wl, pending_queue, self.tree.queue(name), pending_queue.requeues,
                                     is_preemptor=pending_queue.preemptor is wl))
        return entries

    def _ordered(self, entries: list[Entry]) -> Iterable[Entry]:
        if self.fair_sharing is not None:
            return tournament_order(self.shares, entries, preemptors_first=self.preemptors_first)
        first = self.preemptors_first
        return sorted(entries, key=lambda e: (
            first and not e.is_preemptor, e.assignment.borrow, -e.wl.priority, e.wl.queue_timestamp_s, e.wl.seq))

    def _process(self, entry: Entry, preempted: CycleVictims, snapshot: CycleSnapshot, *,
                 topology_done: bool = False) -> None:
        assignment, node, wl = entry.assignment, entry.node, entry.wl
        if entry.reason is PendingReason.SUSPENDED:
            return
        if (not topology_done and assignment.mode is Mode.PREEMPT and self.topology is not None
                and self.topology.applies(wl, assignment)):
            # TAS: the empty topology decides whether preemption can help, and targets must
            # make the topology fit too (tas_preemption).
            entry.assignment, entry.targets = topology_nomination(self.topology, wl, node, assignment,
                                                                  self.preemptor.targets) or (assignment, entry.targets)
            assignment = entry.assignment
        if assignment.mode is Mode.NO_FIT:
            entry.reason = assignment.no_fit_reason or PendingReason.WAITING_FOR_QUOTA
            entry.message, entry.equivalent_fail = assignment.message(), True
            return
        if assignment.mode is Mode.PREEMPT and not entry.targets:
            # Hold what is free now, unless reclaiming is unconditional: otherwise a lower
            # priority workload of another queue could take the quota this one waits for.
            # A preemptor waiting for its victims holds it anyway under
            # PrioritizePreemptorWorkloads (reserveCapacityForUnreclaimablePreempt).
            reclaims_always = self.config.cluster_queues[node.name].preemption.reclaim_within_cohort is _RECLAIM_ANY
            if not reclaims_always or (self.preemptors_first and entry.is_preemptor):
                snapshot.reserve(node, _quota_to_reserve(node, assignment))
                if self.topology is not None:
                    self.topology.reserve(wl, assignment, ())
            entry.message, entry.equivalent_fail = assignment.message(), True
            return
        if assignment.mode is Mode.PREEMPT:
            victims = {t.workload.name: t.workload for t in entry.targets}
            if preempted.overlaps(victims):
                entry.message, entry.transient = OVERLAPPING_TARGETS, True
                self.scan.skipped(wl)
                return
            of_victims = preempted.sums_of(victims.values())
            if not self._fits_without(wl, preempted, node, assignment.usage, victims.values(), of_victims):
                # Earlier entries of this cycle took what the victims would have left.
                entry.message, entry.transient = NO_LONGER_FITS, True
                self.scan.skipped(wl)
                return
            preempted.add(victims, of_victims)
            snapshot.reserve(node, assignment.usage)
            if self.topology is not None:
                self.topology.reserve(wl, assignment, entry.targets)
            for target in entry.targets:
                if target.workload.state is State.ADMITTED:
                    self.port.evict(target.workload, wl, target.reason)
            wl.scan = None  # markPreemptionOutcome: the next cycle reconsiders every flavor
            entry.reason = PendingReason.WAITING_FOR_PREEMPTED
            entry.message = f"{assignment.message()}. Pending the preemption of {len(entry.targets)} workload(s)"
            entry.transient = True
            # cluster_queue.go requeueIfNotPresent: the queue's preemptor until admitted;
            # sticky at the head under BestEffortFIFO only (PendingQueue.pop_head).
            entry.pending_queue.preemptor = wl
            return
        if any(v > max(0, node.available(fr)) for fr, v in assignment.usage.items()):
            entry.message, entry.transient, entry.retry_now = NO_LONGER_FITS, True, True
            self.scan.skipped(wl)
            return
        topology_failure = self.port.place_topology(wl, assignment)
        if topology_failure is not None:  # TAS: no domain holds the pod set now
            recomputed = None if self.topology is None else topology_nomination(
                self.topology, wl, node, assignment, self.preemptor.targets)
            if recomputed is None:
                entry.reason, entry.message = PendingReason.TOPOLOGY_PLACEMENT_FAILED, topology_failure
                return
            entry.assignment, entry.targets = recomputed  # Preempt (or NoFit): TASRecompute in its turn
            self._process(entry, preempted, snapshot, topology_done=True)
            return
        if self.port.admission_blocked():
            entry.reason, entry.message, entry.transient = PendingReason.WAITING_FOR_PODS_READY, BLOCKED_MESSAGE, True
            return
        self.port.admit(wl, assignment)
        wl.scan = None  # admitted: a later requeue (eviction) scans from the first flavor
        entry.admitted = True

    def _fits_without(self, wl: AdmissionWorkload, preempted: CycleVictims, node: QuotaNode,
                      usage: dict[FlavorResource, int], targets: Iterable[AdmissionWorkload],
                      of_targets: UsageByQueue) -> bool:
        """Kueue's fits (scheduler.go): does `usage` fit in `node` with this cycle's victims
        and `targets` (summed per queue in `of_targets`) gone, the cycle's earlier admissions
        and reservations counted?"""
        fits = preempted.fits_without(node, usage, of_targets)
        check = self.nominator.check
        if check is not None:
            check.same_fit(wl.name, fits, preempted.fits_removing_each(node, usage, targets))
        return fits

    def _requeue(self, entry: Entry) -> bool:
        """Back into its queue; True when it went aside (the next head gets a turn)."""
        wl, pending_queue = entry.wl, entry.pending_queue
        # cluster_queue.go requeueIfNotPresent: with flavors still to try (PendingFlavors) it
        # goes back to the heap, and Kueue's next cycle, right away, resumes its scan; each
        # such retry starts further on, so the chain of cycles ends at the last flavor.
        resumes = wl.scan is not None and wl.scan.pending_flavors
        parked = pending_queue.requeue(wl, transient=entry.transient or resumes, requeues_at_pop=entry.requeues_at_pop)
        if entry.retry_now:
            # The next cycle (another entry was admitted, so there is one) says the real reason.
            return parked or resumes
        self.port.say_pending(wl, entry.reason, entry.message)
        if parked and entry.equivalent_fail:
            for other in pending_queue.park_equivalents(wl, entry.reason.value):
                self.port.say_pending(other, entry.reason, entry.message)
        return (parked and pending_queue.has_heads) or resumes


def _quota_to_reserve(node: QuotaNode, assignment: Assignment) -> dict[FlavorResource, int]:
    """Kueue's quotaResourcesToReserve (scheduler.go) for a head that needs preemption but
    found no candidates: what it could claim in its own ClusterQueue. Borrowing: its request,
    capped at nominal + borrowingLimit less what the queue uses (uncapped without a limit);
    not borrowing: its request capped at the queue's unused nominal quota."""
    reserved = {}
    for fr, value in assignment.usage.items():
        used, nominal = node.usage.get(fr, 0), node.nominal.get(fr, 0)
        if assignment.borrow > 0:
            limit = node.borrowing_limit.get(fr)
            reserved[fr] = value if limit is None else max(0, min(value, nominal + limit - used))
        else:
            reserved[fr] = max(0, min(value, nominal - used))
    return reserved
