"""One admission cycle, in the steps of Kueue's scheduler (pkg/scheduler/scheduler.go
schedule(); semantics reference §4.4).

  1. Heads: pop one workload per ClusterQueue that has any.
  2. Snapshot: the live quota tree; usage reserved only for this cycle is undone in step 6.
  3. Nominate: flavor assignment for each head, and preemption targets when it needs them.
  4. Order: classical (borrowing level, priority, age) or the fair-sharing tournament.
  5. Process in that order: admit what fits; issue preemptions; say why the rest waits.
  6. Requeue the heads not admitted (StrictFIFO / BestEffortFIFO) and write their reasons.

`run_cycle` returns True when another cycle at the same instant can do more: something was
admitted, or a BestEffortFIFO head moved aside so that the next one gets its turn.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scheduler.admission.fair_sharing import tournament_order
from scheduler.admission.flavor_assignment import Assignment, Mode, assign_flavors
from scheduler.admission.preemption import Target
from scheduler.admission.queues import PendingQueue
from scheduler.admission.quota import FlavorResource, QuotaNode
from scheduler.admission.wait_for_pods_ready import BLOCKED_MESSAGE
from scheduler.admission.workloads import AdmissionWorkload, State
from scheduler.eventlog.schema import PendingReason

if TYPE_CHECKING:
    from scheduler.admission.kueue import KueueAdmission

NO_LONGER_FITS = "Workload no longer fits after processing another workload"
OVERLAPPING_TARGETS = "Workload has overlapping preemption targets with another workload"


@dataclass(eq=False)
class Entry:
    wl: AdmissionWorkload
    pending_queue: PendingQueue
    node: QuotaNode
    requeues_at_pop: int
    assignment: Assignment = field(default_factory=Assignment)
    targets: list[Target] = field(default_factory=list)
    admitted: bool = False
    reason: PendingReason = PendingReason.WAITING_FOR_QUOTA
    message: str = ""
    transient: bool = False  # back to the heap even in BestEffortFIFO
    retry_now: bool = False  # another entry was admitted first: retried next cycle, no row
    equivalent_fail: bool = False  # shapes like it fail alike (NoFit, no preemption candidates)

    # what the fair-sharing tournament reads
    @property
    def queue(self) -> QuotaNode:
        return self.node

    @property
    def usage(self) -> dict[FlavorResource, int]:
        return self.assignment.usage

    @property
    def priority(self) -> int:
        return self.wl.priority

    @property
    def timestamp(self) -> float:
        return self.wl.queue_timestamp_s


def run_cycle(layer: KueueAdmission) -> bool:
    # 1. Heads: one per ClusterQueue.
    entries = _pop_heads(layer)
    if not entries:
        return False
    # 2. Snapshot: the live tree; reservations made for this cycle only are undone below.
    reserved: list[tuple[QuotaNode, dict[FlavorResource, int]]] = []
    version, commits = layer.tree.version, layer.commits
    try:
        # 3. Nominate.
        for entry in entries:
            _nominate(layer, entry)
        # 4 + 5. Order and process.
        preempted: set[str] = set()
        for entry in _ordered(layer, entries):
            _process(layer, entry, preempted, reserved)
    finally:
        for node, usage in reserved:
            layer.tree.remove(node, usage)
        if layer.commits == commits:
            layer.tree.version = version  # only this cycle's reservations changed it, now undone
        else:
            layer.tree.touch()
    # 6. Requeue and explain.
    progressed = False
    for entry in entries:
        if entry.admitted:
            progressed = True
        elif entry.wl.state is State.QUEUED:
            progressed |= _requeue(layer, entry)
    return progressed


def _pop_heads(layer: KueueAdmission) -> list[Entry]:
    entries = []
    for name, pending_queue in layer.queues.items():
        if not pending_queue.has_heads:
            continue
        wl = pending_queue.pop_head()
        if wl is not None:
            entries.append(Entry(wl, pending_queue, layer.tree.queue(name), pending_queue.requeues))
    return entries


def _nominate(layer: KueueAdmission, entry: Entry) -> None:
    inactive = layer.tree.inactive.get(entry.node.name)
    if inactive is not None:
        entry.assignment = Assignment(mode=Mode.NO_FIT)
        entry.reason, entry.message = PendingReason.SUSPENDED, inactive
        return
    wl, tree = entry.wl, layer.tree
    if layer.nominations_version != tree.version:
        layer.nominations.clear()
        layer.nominations_version = tree.version
    key = (entry.node.name, wl.shape, wl.queue_timestamp_s if layer.timestamp_matters else None)
    cached = layer.nominations.get(key)
    if cached is None:
        spec = layer.config.cluster_queues[entry.node.name]
        assignment = assign_flavors(
            wl, entry.node, spec, layer.config.flavors, layer.preemptor.simulate, fair_sharing=layer.fair_sharing is not None,
        )
        targets = []
        if assignment.mode is Mode.PREEMPT:
            targets = layer.preemptor.targets(wl, entry.node, assignment.usage, assignment.frs_needing_preemption)
        cached = layer.nominations[key] = (assignment, targets)
    entry.assignment, entry.targets = cached


def _ordered(layer: KueueAdmission, entries: list[Entry]) -> Iterable[Entry]:
    if layer.fair_sharing is not None:
        return tournament_order(layer.shares, entries)  # type: ignore[return-value]  # yields the entries it is given
    return sorted(entries, key=lambda e: (e.assignment.borrow, -e.wl.priority, e.wl.queue_timestamp_s, e.wl.seq))


def _process(layer: KueueAdmission, entry: Entry, preempted: set[str], reserved: list[tuple[QuotaNode, dict[FlavorResource, int]]]) -> None:
    assignment, node, wl = entry.assignment, entry.node, entry.wl
    if entry.reason is PendingReason.SUSPENDED:
        return
    if assignment.mode is Mode.NO_FIT:
        entry.reason = assignment.no_fit_reason or PendingReason.WAITING_FOR_QUOTA
        entry.message, entry.equivalent_fail = assignment.message(), True
        return
    if assignment.mode is Mode.PREEMPT and not entry.targets:
        # Hold what is free now, unless reclaiming is unconditional: otherwise a lower
        # priority workload of another queue could take the quota this one waits for.
        if layer.config.cluster_queues[node.name].preemption.reclaim_within_cohort != "Any":
            _reserve(layer, node, {fr: min(v, max(0, node.available(fr))) for fr, v in assignment.usage.items()}, reserved)
        entry.message, entry.equivalent_fail = assignment.message(), True
        return
    if assignment.mode is Mode.PREEMPT:
        names = {t.workload.name for t in entry.targets}
        if names & preempted:
            entry.message, entry.transient = OVERLAPPING_TARGETS, True
            return
        preempted |= names
        _reserve(layer, node, assignment.usage, reserved)
        for target in entry.targets:
            if target.workload.state is State.ADMITTED:
                layer.evict(target.workload, wl, target.reason)
        entry.reason = PendingReason.WAITING_FOR_PREEMPTED
        entry.message = f"{assignment.message()}. Pending the preemption of {len(entry.targets)} workload(s)"
        entry.transient = True
        entry.pending_queue.sticky = wl  # keeps its turn until the victims are gone
        return
    if any(v > max(0, node.available(fr)) for fr, v in assignment.usage.items()):
        entry.message, entry.transient, entry.retry_now = NO_LONGER_FITS, True, True
        return
    if layer.pods_ready_tracker.blocking:
        entry.reason, entry.message, entry.transient = PendingReason.WAITING_FOR_PODS_READY, BLOCKED_MESSAGE, True
        return
    layer.admit(wl, assignment)
    entry.admitted = True


def _reserve(layer: KueueAdmission, node: QuotaNode, usage: dict[FlavorResource, int], reserved: list[tuple[QuotaNode, dict[FlavorResource, int]]]) -> None:
    layer.tree.add(node, usage)
    layer.tree.touch()
    reserved.append((node, usage))


def _requeue(layer: KueueAdmission, entry: Entry) -> bool:
    """Back into its queue; True when it went aside (the next head gets a turn)."""
    wl, pending_queue = entry.wl, entry.pending_queue
    parked = pending_queue.requeue(wl, transient=entry.transient, requeues_at_pop=entry.requeues_at_pop)
    if entry.retry_now:
        # The next cycle (another entry was admitted, so there is one) says the real reason.
        return parked
    layer.say_pending(wl, entry.reason, entry.message)
    if parked and entry.equivalent_fail:
        for other in pending_queue.park_equivalents(wl, entry.reason.value):
            layer.say_pending(other, entry.reason, entry.message)
    return parked and pending_queue.has_heads
