"""Step 3 of an admission cycle (`admitter`): nominate each head, that is, find its flavor
assignment (Kueue's flavorassigner) and, when it needs preemption, its targets (preemptor).

A head that is retried while nothing it reads changed, or shaped like one just tried, reuses
its nomination (`nomination_cache`); a fitting one is reused while the quota checks that
decided it pass (`fit_certificate`); what assignment reads before any quota is kept per
ClusterQueue and shape (`flavor_screen`). `replay --verify` recomputes every reused answer
(`check`).
"""

from __future__ import annotations

from scheduler.admission.fit_certificate import fit_certificate
from scheduler.admission.flavor_assignment import Assignment, Mode, assign_flavors
from scheduler.admission.flavor_screen import FlavorScreen
from scheduler.admission.nomination_cache import NominationCache, NominationCheck
from scheduler.admission.objects import QueueConfig
from scheduler.admission.policies import PreemptionPolicy
from scheduler.admission.preemption.common import Target
from scheduler.admission.preemption.preemptor import Preemptor
from scheduler.admission.queues import PendingQueue
from scheduler.admission.quota import FlavorResource, QuotaNode, QuotaTree
from scheduler.admission.scan_progress import ScanProgressRules
from scheduler.admission.versions import FlavorResourceVersions
from scheduler.admission.workloads import AdmissionWorkload
from scheduler.eventlog.schema import PendingReason


class Entry:
    """One head in one cycle: Kueue's scheduler entry. A plain slotted class, not a
    dataclass: the compiled build runs a dataclass's generated `__init__` as interpreted
    code, and every cycle makes one entry per head."""

    __slots__ = ("wl", "pending_queue", "node", "requeues_at_pop", "is_preemptor", "assignment", "targets",
                 "admitted", "reason", "message", "transient", "retry_now", "equivalent_fail", "start")

    def __init__(self, wl: AdmissionWorkload, pending_queue: PendingQueue, node: QuotaNode, requeues_at_pop: int,
                 is_preemptor: bool = False) -> None:
        self.wl = wl
        self.pending_queue = pending_queue
        self.node = node
        self.requeues_at_pop = requeues_at_pop
        self.is_preemptor = is_preemptor  # its queue's preemptor when popped (manager.go Head.IsPreemptor)
        self.assignment: Assignment  # set by `Nominator.nominate` before anything reads it
        self.targets: list[Target] = []
        self.admitted = False
        self.reason = PendingReason.WAITING_FOR_QUOTA
        self.message = ""
        self.transient = False  # back to the heap even in BestEffortFIFO
        self.retry_now = False  # another entry was admitted first: retried next cycle, no row
        self.equivalent_fail = False  # shapes like it fail alike (NoFit, no preemption candidates)
        self.start: tuple[int, ...] = ()  # where its flavor scan starts, per resource group (LastAssignment)

    # what the fair-sharing tournament reads (`fair_sharing_order.Contender`)
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


class Nominator:
    """Nominations for the heads of a cycle, with the caches that outlive it."""

    def __init__(self, config: QueueConfig, tree: QuotaTree, preemptor: Preemptor, versions: FlavorResourceVersions,
                 scan: ScanProgressRules) -> None:
        self.config = config
        self.tree = tree
        self.preemptor = preemptor
        self.scan = scan
        self.fair_sharing = config.configuration.fair_sharing is not None
        self.partial_admission = config.configuration.partial_admission
        # Nominations (assignment, targets): a head that is retried while nothing it reads
        # changed, or shaped like one just tried, reuses them (see nomination_cache).
        self.nominations: NominationCache[tuple[Assignment, list[Target]]] = NominationCache(
            config.cluster_queues, config.flavors, versions)
        self.check: NominationCheck | None = None  # `replay --verify`: reused nominations recomputed
        self.screens = FlavorScreen(config.flavors, config.topologies)  # what assignment reads before quota
        # The preemptor's timestamp matters only for LowerOrNewerEqualPriority.
        self.timestamp_matters = any(
            cq.preemption.within_cluster_queue is PreemptionPolicy.LOWER_OR_NEWER_EQUAL_PRIORITY
            for cq in config.cluster_queues.values()
        )

    def nominate(self, entry: Entry) -> None:
        """Step 3 for one head: its assignment and targets (`entry.assignment`, `entry.targets`),
        or why it is not nominated at all (an inactive ClusterQueue)."""
        inactive = self.tree.inactive.get(entry.node.name)
        if inactive is not None:
            entry.assignment = Assignment(mode=Mode.NO_FIT)
            entry.reason, entry.message = PendingReason.SUSPENDED, inactive
            entry.wl.scan = None  # not nominated: nothing to resume (and no chain of cycles)
            return
        wl = entry.wl
        entry.start = self.scan.start_of(wl, entry.node.name)
        node = entry.node
        key = (node.name, wl.shape, wl.queue_timestamp_s if self.timestamp_matters else None, entry.start)
        found = self.nominations.get(key, node, wl.requests, wl.models, wl.shape)
        if found is None:
            nomination = self._nomination(entry)
            assignment, spec = nomination[0], self.config.cluster_queues[node.name]
            fit = None if assignment.mode is not Mode.FIT else fit_certificate(
                assignment, bool(nomination[1]), self.screens.of(wl, spec), entry.start, spec.flavor_fungibility,
                node.keys)
            self.nominations.put(key, node, wl.requests, wl.models, wl.shape, nomination, fit)
        else:
            nomination = found.value
            if self.check is not None:
                if found.fit is not None:
                    self.check.same_fit_reused(wl.name, nomination, self._nomination(entry))
                else:
                    self.check.same(wl.name, nomination, self._nomination(entry))
        entry.assignment, entry.targets = nomination
        self.scan.record(wl, entry.assignment, entry.node.name)

    def _nomination(self, entry: Entry) -> tuple[Assignment, list[Target]]:
        """Flavor assignment, and preemption targets when it needs them (computed afresh);
        a job that neither fits nor can preempt whole is tried at smaller counts."""
        wl, node, start = entry.wl, entry.node, entry.start
        nominated = self._try(wl, node, start)
        if nominated[0].mode is not Mode.FIT and not nominated[1] and self.partial_admission and wl.min_count < wl.pods:
            nominated = self._partial(wl, node, start) or nominated
        return nominated

    def _try(self, wl: AdmissionWorkload, node: QuotaNode, start: tuple[int, ...] = ()) -> tuple[Assignment, list[Target]]:
        """Flavor assignment (each group's scan from `start`), and the preemption targets when
        it needs them."""
        spec = self.config.cluster_queues[node.name]
        fair_sharing = self.fair_sharing
        assignment = assign_flavors(wl, node, spec, self.config.flavors, self.preemptor.simulate,
                                    fair_sharing=fair_sharing, topologies=self.config.topologies, start=start,
                                    screen=self.screens.of(wl, spec))
        if self.check is not None:  # the oracle asked about every resource, as Kueue does
            self.check.same_assignment(wl.name, assignment, assign_flavors(
                wl, node, spec, self.config.flavors, self.preemptor.simulate, fair_sharing=fair_sharing,
                topologies=self.config.topologies, plain=True, start=start))
        targets = []
        if assignment.mode is Mode.PREEMPT:
            targets = self.preemptor.targets(wl, node, assignment.usage, assignment.frs_needing_preemption)
        return assignment, targets

    def _partial(self, wl: AdmissionWorkload, node: QuotaNode,
                 start: tuple[int, ...] = ()) -> tuple[Assignment, list[Target]] | None:
        """Partial admission (scheduler.go getInitialAssignments, podset_reducer.go Search):
        the largest pod count down to minCount that fits or can preempt, by binary search
        over the reduction (as Go's sort.Search: the first reduction that works). Fitting
        is monotone in the count, so minCount is tried first: when it cannot be admitted,
        no count can, and the search (log2 of the reduction more tries) is skipped."""
        delta = wl.pods - wl.min_count
        smallest = self._try(wl.with_pods(wl.min_count), node, start)
        if smallest[0].mode is not Mode.FIT and not smallest[1]:
            return None
        low, high = 1, delta  # no reduction (the full count) failed; `delta` (minCount) works
        found: tuple[int, tuple[Assignment, list[Target]]] | None = (delta, smallest)
        while low < high:
            middle = (low + high) // 2
            assignment, targets = self._try(wl.with_pods(wl.pods - middle), node, start)
            if assignment.mode is Mode.FIT or targets:
                found, high = (middle, (assignment, targets)), middle
            else:
                low = middle + 1
        if found is None or found[0] != low:
            return None
        assignment, targets = found[1]
        assignment.pods = wl.pods - found[0]
        return assignment, targets
