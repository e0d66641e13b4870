"""Classical preemption (fair sharing off): candidates, their classes, and the runs.

Sources: kueue pkg/scheduler/preemption/preemption.go (classicalPreemptions),
classical/candidate_generator.go, classical/hierarchical_preemption.go (semantics reference
§4.6).

  1. Candidates: the preemptor's ClusterQueue (withinClusterQueue policy) and, with
     reclaimWithinCohort, queues of the cohort tree that are above their quota on a needed
     flavor-resource. Each is classified: WithinCQ, HierarchicalReclaim (the preemptor's
     subtree owns the quota), ReclaimWithoutBorrowing, ReclaimWhileBorrowing
     (borrowWithinCohort, priority below maxPriorityThreshold).
  2. Order inside a class: already evicted first, lower priority, most recently admitted,
     then id; classes: hierarchical, priority, same queue (evicted ones of each first). In a
     ClusterQueue under admission fair sharing its own candidates go by their LocalQueue's
     usage first, highest first (common/ordering.go CandidatesOrdering step 2).
  3. Runs with allowBorrowing true and/or false (order by configuration); each run removes
     valid candidates until the preemptor fits, then adds them back newest-removed-first
     while it still fits (`search.VictimSearch`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping
from enum import Enum, IntEnum
from typing import TYPE_CHECKING

from scheduler.admission.holders import Holders, order_key
from scheduler.admission.objects import ClusterQueue, ClusterQueuePreemption
from scheduler.admission.policies import BorrowWithinCohortPolicy, PreemptionPolicy
from scheduler.admission.preemption.bounds import cannot_fit
from scheduler.admission.preemption.common import (
    PreemptionReason,
    Target,
    policy_towards,
    priority_bound,
    priority_too_high,
)
from scheduler.admission.preemption.search import TopologyFits, VictimSearch
from scheduler.admission.quota import (
    FlavorResource,
    QuotaNode,
    QuotaTree,
    Usage,
    usage_after_removing,
)
from scheduler.admission.workloads import AdmissionWorkload
from scheduler.verify import ClockedVerifier

if TYPE_CHECKING:
    from scheduler.admission.admission_fair_sharing import QueueUsage

_Source = tuple[QuotaNode, "QuotaNode | None", bool]  # (queue holding candidates, LCA, hierarchical advantage)
CandidateKey = Callable[["_Candidate"], tuple[object, ...]]
# Compared per candidate: module constants (see preemption.common).
_NEVER = PreemptionPolicy.NEVER
_NO_BORROWING = BorrowWithinCohortPolicy.NEVER


class _Validity(Enum):
    VALID = "valid"
    SKIP = "skip"  # this candidate only
    QUEUE_DONE = "queue done"  # its queue (or subtree) is back within quota: none of it is valid


class Variant(IntEnum):
    """Kueue's candidate classes (classical/candidate_generator.go)."""

    NEVER = 0
    WITHIN_CQ = 1
    HIERARCHICAL_RECLAIM = 2
    RECLAIM_WITHOUT_BORROWING = 3
    RECLAIM_WHILE_BORROWING = 4

    @property
    def reason(self) -> PreemptionReason:
        if self is Variant.WITHIN_CQ:
            return PreemptionReason.IN_CLUSTER_QUEUE
        if self is Variant.RECLAIM_WHILE_BORROWING:
            return PreemptionReason.IN_COHORT_RECLAIM_WHILE_BORROWING
        return PreemptionReason.IN_COHORT_RECLAMATION


class _Candidate:
    """One candidate of one run (slotted, not a dataclass: one is made per candidate looked at)."""

    __slots__ = ("workload", "lca", "variant")

    def __init__(self, workload: AdmissionWorkload, lca: QuotaNode | None, variant: Variant) -> None:
        self.workload = workload
        self.lca = lca
        self.variant = variant


class ClassicalPreemption:
    """Targets against the live quota tree (restored before returning). `holders` indexes
    the workloads holding quota in each ClusterQueue (admitted, or evicted and terminating)."""

    def __init__(self, tree: QuotaTree, specs: Mapping[str, ClusterQueue], holders: Holders,
                 fair_orderings: Mapping[str, QueueUsage] | None = None) -> None:
        self.tree = tree
        self.specs = specs
        self.holders = holders
        self.fair_orderings = fair_orderings or {}  # admission fair sharing, per ClusterQueue
        self.check: ClockedVerifier | None = None  # `replay --verify`: every bound's "no" simulated too

    def targets(self, wl: AdmissionWorkload, queue: QuotaNode, usage: Usage, frs_need: frozenset[FlavorResource],
                topology_fits: TopologyFits | None = None) -> list[Target]:
        found = self._targets(wl, queue, usage, frs_need, topology_fits, on_overlay=True)
        if self.check is not None:
            plain = self._targets(wl, queue, usage, frs_need, topology_fits, on_overlay=False)
            self.check.same("victim search on an overlay of the usage", _named(found), _named(plain), wl.name)
            every = self._targets(wl, queue, usage, frs_need, topology_fits, on_overlay=True, every_source=True)
            self.check.same("victim search reading only the candidates a run can take", _named(found), _named(every),
                            wl.name)
        return found

    def _targets(self, wl: AdmissionWorkload, queue: QuotaNode, usage: Usage, frs_need: frozenset[FlavorResource],
                 topology_fits: TopologyFits | None, on_overlay: bool, every_source: bool = False) -> list[Target]:
        """The runs' search; `every_source` (the `--verify` twin) streams every source's
        candidates in every run and lets `_valid` skip them one by one, as Kueue's iterator does."""
        spec = self.specs[queue.name]
        same: list[_Source] = [(queue, None, False)] if spec.preemption.within_cluster_queue is not _NEVER else []
        hierarchy, by_priority = self._cohort_sources(queue, usage, frs_need)
        if not self._could_fit(wl, queue, usage, [*same, *hierarchy, *by_priority]):
            return []
        same_key = _same_queue_key(self.fair_orderings.get(queue.name))
        evicted = self._evicted_candidates(wl, queue, frs_need, (hierarchy, by_priority, same), same_key)

        def ordered(done: set[str], run: bool | None) -> Iterator[_Candidate]:
            yield from evicted
            for sources in (hierarchy, by_priority):
                yield from self._stream(wl, queue, sources, frs_need, done, run)
            stream = self._stream(wl, queue, same, frs_need, done, run)
            yield from stream if same_key is None else sorted(stream, key=same_key)

        def exists(sources: list[_Source]) -> bool:
            return next(self._stream(wl, queue, sources, frs_need, set(), None), None) is not None

        has_hierarchy = any(c.variant is Variant.HIERARCHICAL_RECLAIM for c in evicted) or exists(hierarchy)
        has_other = has_hierarchy or any(c.workload.cluster_queue != queue.name for c in evicted) or exists(by_priority)
        forbidden = spec.preemption.borrow_within_cohort is _NO_BORROWING
        runs: tuple[bool, ...]
        if not has_other or (forbidden and not _under_nominal(queue, frs_need)):
            runs = (True,)
        elif forbidden and not has_hierarchy:
            runs = (False, True)
        else:
            runs = (True, False)
        for allow_borrowing in runs:
            search = VictimSearch(self.tree, queue, usage, allow_borrowing, check=self.check, topology_fits=topology_fits,
                                  on_overlay=on_overlay, frs_need=frs_need)
            # Queues back within their quota give up no more victims in this run (removals
            # only lower usage): their remaining candidates are not even looked at.
            done: set[str] = set()
            try:
                for candidate in ordered(done, None if every_source else allow_borrowing):
                    validity = self._valid(candidate, queue, allow_borrowing, frs_need, search)
                    if validity is _Validity.QUEUE_DONE:
                        done.add(candidate.workload.cluster_queue or "")
                    elif validity is _Validity.VALID and search.take(Target(candidate.workload, candidate.variant.reason)):
                        return search.result
            finally:
                search.restore()
        return []

    def _could_fit(self, wl: AdmissionWorkload, queue: QuotaNode, usage: Usage, sources: list[_Source]) -> bool:
        """A necessary condition, cheap: could the preemptor fit if every workload that could
        ever be a victim were gone? Removing usage never lowers what a queue can admit, and a
        search only removes some of those workloads, so when even all of them together leave
        no room, the one-by-one search Kueue runs would find none either (same answer).

        Checked once per kind of run: with borrowing allowed, queues whose candidates could
        only be reclaimed without borrowing give nothing (they are skipped in that run);
        without borrowing, every candidate counts but the preemptor must end within its
        nominal quota. (What a queue above nominal gives is not capped at what it borrows:
        its last victim may take it below nominal, freeing quota the preemptor can use.)"""
        no_borrowing_reclaim = self.specs[queue.name].preemption.borrow_within_cohort is _NO_BORROWING
        with_borrowing = [source for source, _, advantage in sources
                          if source is queue or advantage or not no_borrowing_reclaim]
        held: dict[QuotaNode, dict[FlavorResource, int]] = {}  # per source, for both checks
        if self._fits_without(wl, queue, usage, with_borrowing, True, held):
            return True
        return self._fits_without(wl, queue, usage, [source for source, _, _ in sources], False, held)

    def _fits_without(self, wl: AdmissionWorkload, queue: QuotaNode, usage: Usage, sources: list[QuotaNode],
                      allow_borrowing: bool, held: dict[QuotaNode, dict[FlavorResource, int]]) -> bool:
        """Does `usage` fit `queue` once the sources' holders below the priority bound are gone?
        `held`: what each source's holders below their bound hold, summed once for both of
        `_could_fit`'s checks (nothing changes the holders between them)."""
        preemption = self.specs[queue.name].preemption
        freeable: list[tuple[QuotaNode, dict[FlavorResource, int]]] = []
        for source in dict.fromkeys(sources):  # a queue is one source, even if listed twice
            amounts = held.get(source)
            if amounts is None:
                bound = priority_bound(policy_towards(preemption, source is queue), wl)
                amounts = held[source] = {fr: self.holders.held_below(source.name, fr, bound) for fr in usage}
            freeable.append((source, amounts))
        if cannot_fit(queue, usage, freeable, allow_borrowing):
            if self.check is not None:
                self.check.same("preemption ruled out by quota bounds", False,
                                self._fits_once_removed(queue, usage, freeable, allow_borrowing), wl.name)
            return False
        fits = _fits_once_gone(queue, usage, freeable, allow_borrowing)
        if self.check is not None:
            self.check.same("quota fit once every candidate is gone, on an overlay of the usage", fits,
                            self._fits_once_removed(queue, usage, freeable, allow_borrowing), wl.name)
        return fits

    def _fits_once_removed(self, queue: QuotaNode, usage: Usage, freeable: list[tuple[QuotaNode, dict[FlavorResource, int]]],
                           allow_borrowing: bool) -> bool:
        """The simulation (`replay --verify`'s plain answer): remove what is freeable, ask the
        queue, put it back."""
        for source, amounts in freeable:
            self.tree.remove(source, amounts)
        try:
            return all((allow_borrowing or not queue.borrowing_with(fr, value)) and value <= max(0, queue.available(fr))
                       for fr, value in usage.items())
        finally:
            for source, amounts in reversed(freeable):
                self.tree.add(source, amounts)

    def _stream(self, wl: AdmissionWorkload, queue: QuotaNode, sources: list[_Source],
                frs_need: frozenset[FlavorResource], done: set[str], run: bool | None) -> Iterator[_Candidate]:
        """The (not evicted) candidates of some queues, merged in candidate order; with `run`
        (the run's allowBorrowing), only those the run does not skip (`run_reads`)."""
        preemption = self.specs[queue.name].preemption
        streams = []
        for holder, lca, advantage in sources:
            bound = priority_bound(policy_towards(preemption, holder is queue), wl)
            if run is not None:
                reads, bound = run_reads(preemption, wl, holder is queue, advantage, run, bound)
                if not reads:
                    continue
            streams.append(self._candidates_of(wl, queue, holder, lca, advantage, frs_need, done, bound))
        if not streams:
            return iter(())
        if len(streams) == 1:
            return streams[0]
        return heapq.merge(*streams, key=lambda c: order_key(c.workload))

    def _evicted_candidates(self, wl: AdmissionWorkload, queue: QuotaNode, frs_need: frozenset[FlavorResource],
                            groups: tuple[list[_Source], ...], same_key: CandidateKey | None) -> list[_Candidate]:
        """Victims already being evicted come first, class by class (their quota is coming back).
        One pass over the workloads being evicted sorts them into the classes of their queues."""
        where: dict[str, list[tuple[int, QuotaNode | None, bool]]] = {}
        for index, sources in enumerate(groups):
            # A queue listed twice in a class is one source of it (its last listing's).
            in_class = {holder.name: (lca, advantage) for holder, lca, advantage in sources}
            for name, (lca, advantage) in in_class.items():
                where.setdefault(name, []).append((index, lca, advantage))
        in_groups: list[list[_Candidate]] = [[] for _ in groups]
        for candidate in self.holders.evicting.values():
            classes = where.get(candidate.cluster_queue or "")
            if classes is None or not candidate.uses(frs_need):
                continue
            for index, lca, advantage in classes:
                variant = self._classify(wl, queue, candidate, advantage)
                if variant is not Variant.NEVER:
                    in_groups[index].append(_Candidate(candidate, lca, variant))
        found = []
        for index, in_group in enumerate(in_groups):
            last = index == len(groups) - 1  # the preemptor's own ClusterQueue
            found.extend(sorted(in_group, key=same_key if last and same_key is not None else _by_order_key))
        return found

    def _valid(self, candidate: _Candidate, queue: QuotaNode, allow_borrowing: bool, frs_need: frozenset[FlavorResource],
               search: VictimSearch) -> _Validity:
        """Kueue's candidateIsValid, checked as victims are removed one by one (the usage read
        with the search's removals made)."""
        if candidate.workload.cluster_queue == queue.name:
            return _Validity.VALID
        if allow_borrowing and candidate.variant is Variant.RECLAIM_WITHOUT_BORROWING:
            return _Validity.SKIP
        node = self.tree.queue(candidate.workload.cluster_queue or "")
        if search.within_nominal(node, frs_need):
            return _Validity.QUEUE_DONE
        for ancestor in node.ancestors():
            if ancestor is candidate.lca:
                break
            if search.within_nominal(ancestor, frs_need):
                return _Validity.QUEUE_DONE
        return _Validity.VALID

    def _cohort_sources(self, queue: QuotaNode, usage: Usage, frs_need: frozenset[FlavorResource]) -> tuple[
            list[_Source], list[_Source]]:
        """Queues of the cohort tree above their quota on a needed flavor-resource: those
        the preemptor has a hierarchical advantage over, and the rest (by priority)."""
        hierarchy: list[_Source] = []
        by_priority: list[_Source] = []
        if queue.parent is None or self.specs[queue.name].preemption.reclaim_within_cohort is _NEVER:
            return hierarchy, by_priority
        advantage, remaining = queue.fits_in_quota(usage)
        previous: QuotaNode | None = None
        for subtree_root in queue.ancestors():
            found = hierarchy if advantage else by_priority
            _collect_in_subtree(queue, subtree_root, subtree_root, previous, advantage, frs_need, found)
            fits, remaining = subtree_root.fits_in_quota(remaining)
            advantage = advantage or fits
            previous = subtree_root
        return hierarchy, by_priority

    def _candidates_of(self, wl: AdmissionWorkload, queue: QuotaNode, holder: QuotaNode, lca: QuotaNode | None,
                       advantage: bool, frs_need: frozenset[FlavorResource], done: set[str],
                       bound: int | None) -> Iterator[_Candidate]:
        """`holder`'s candidates below priority `bound` (None: any), in candidate order."""
        for candidate in self.holders.ordered(holder.name, frs_need, bound):
            if holder.name in done:
                return
            variant = self._classify(wl, queue, candidate, advantage)
            if variant is not Variant.NEVER:
                yield _Candidate(candidate, lca, variant)

    def _classify(self, wl: AdmissionWorkload, queue: QuotaNode, candidate: AdmissionWorkload, advantage: bool) -> Variant:
        preemption = self.specs[queue.name].preemption
        if priority_too_high(preemption, wl, queue.name, candidate):
            return Variant.NEVER
        if candidate.cluster_queue == queue.name:
            return Variant.WITHIN_CQ
        if advantage:
            return Variant.HIERARCHICAL_RECLAIM
        if preemption.borrow_within_cohort is _NO_BORROWING:
            return Variant.RECLAIM_WITHOUT_BORROWING
        threshold = preemption.borrow_max_priority_threshold
        if candidate.priority >= wl.priority or (threshold is not None and candidate.priority > threshold):
            return Variant.RECLAIM_WITHOUT_BORROWING
        return Variant.RECLAIM_WHILE_BORROWING


def run_reads(preemption: ClusterQueuePreemption, wl: AdmissionWorkload, same_queue: bool, advantage: bool,
              allow_borrowing: bool, bound: int | None) -> tuple[bool, int | None]:
    """Which of a source's candidates a run can take: (any at all, the priority bound they
    stay below). A run that allows borrowing skips every candidate of another queue
    classified ReclaimWithoutBorrowing (Kueue's candidateIsValid); without a hierarchical
    advantage, that is all of them when borrowWithinCohort is Never, and otherwise those of
    priority min(preemptor's, maxPriorityThreshold + 1) and up (`_classify`). Candidates come
    lowest priority first, so the run reads such a source up to that bound, or not at all:
    the candidates it no longer reads are the ones `_valid` would have skipped, one by one."""
    if not allow_borrowing or same_queue or advantage:
        return True, bound
    if preemption.borrow_within_cohort is _NO_BORROWING:
        return False, bound
    cap = wl.priority
    threshold = preemption.borrow_max_priority_threshold
    if threshold is not None:
        cap = min(cap, threshold + 1)
    return True, cap if bound is None else min(bound, cap)


def _collect_in_subtree(queue: QuotaNode, current: QuotaNode, subtree_root: QuotaNode, skip: QuotaNode | None,
                        advantage: bool, frs_need: frozenset[FlavorResource], found: list[_Source]) -> None:
    for child in current.child_cohorts:
        if child is skip or child.within_nominal(frs_need):
            continue
        _collect_in_subtree(queue, child, subtree_root, skip, advantage, frs_need, found)
    for child in current.child_queues:
        if child is not queue and not child.within_nominal(frs_need):
            found.append((child, subtree_root, advantage))


def _fits_once_gone(queue: QuotaNode, usage: Usage, freeable: list[tuple[QuotaNode, dict[FlavorResource, int]]],
                    allow_borrowing: bool) -> bool:
    """`_fits_once_removed`'s answer without writing the tree: per flavor-resource, the usage
    the removals would leave (`usage_after_removing`), and the queue read through it."""
    for fr, value in usage.items():
        after = usage_after_removing(fr, [(source, amounts[fr]) for source, amounts in freeable if amounts.get(fr, 0)])
        if not allow_borrowing and queue.usage_after(fr, after) + value > queue.subtree.get(fr, 0):
            return False
        if value > max(0, queue.available(fr, after)):
            return False
    return True


def _named(targets: list[Target]) -> list[tuple[str, str]]:
    return [(t.workload.name, t.reason.value) for t in targets]


def _under_nominal(queue: QuotaNode, frs: frozenset[FlavorResource]) -> bool:
    """Kueue's queueUnderNominalInResourcesNeedingPreemption (strictly below)."""
    return all(queue.usage.get(fr, 0) < queue.subtree.get(fr, 0) for fr in frs)


def _by_order_key(candidate: _Candidate) -> tuple[object, ...]:
    return order_key(candidate.workload)


def _same_queue_key(fair: QueueUsage | None) -> CandidateKey | None:
    """Admission fair sharing (CandidatesOrdering step 2): among the preemptor's own
    ClusterQueue's candidates, the higher LocalQueue usage goes first, then the usual order."""
    if fair is None:
        return None
    return lambda candidate: (-fair.of(candidate.workload), *order_key(candidate.workload))
