"""Kueue preemption: which admitted workloads to evict so that a pending one fits its quota.

Sources: kueue pkg/scheduler/preemption/{preemption.go, classical_strategy.go,
classical/candidate_generator.go, classical/hierarchical_preemption.go, fair_strategy.go,
fairsharing/ordering.go, fairsharing/target.go, fairsharing/strategy.go} (semantics
reference §4.6, §4.7). Eviction is quota-only and of whole workloads.

Classical (fair sharing off):
  1. Candidates: the preemptor's ClusterQueue (withinClusterQueue policy) and, with
     reclaimWithinCohort, queues of the cohort tree that are above their quota on a needed
     flavor-resource. Each is classified: WithinCQ, HierarchicalReclaim (the preemptor's
     subtree owns the quota), ReclaimWithoutBorrowing, ReclaimWhileBorrowing
     (borrowWithinCohort, priority below maxPriorityThreshold).
  2. Order inside a class: already evicted first, lower priority, most recently admitted,
     then id; classes: hierarchical, priority, same queue (evicted ones of each first).
  3. Runs with allowBorrowing true and/or false (order by configuration); each run removes
     valid candidates until the preemptor fits, then adds them back newest-removed-first
     while it still fits: the fewest victims, "greedy then add back".

Fair sharing: the ClusterQueue with the highest share (descending from the root, compared
at the level under the lowest common ancestor) gives up a workload while the strategy holds:
LessThanOrEqualToFinalShare (preemptor's share with the workload <= target's share without
the victim), then LessThanInitialShare (< target's share before) for the rest; queues within
nominal quota on the contested resources preempt unconditionally.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum, IntEnum

from scheduler.admission.configuration import LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, FairSharing
from scheduler.admission.fair_sharing import FairShares, Share
from scheduler.admission.holders import Holders, order_key
from scheduler.admission.manifests import ClusterQueue
from scheduler.admission.quota import (
    FlavorResource,
    QuotaNode,
    QuotaTree,
    Usage,
    child_towards,
    lowest_common_ancestor,
)
from scheduler.admission.workloads import AdmissionWorkload

IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_FAIR_SHARING = "InCohortFairSharing"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"
HUMAN_REASONS = {
    IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
    IN_COHORT_RECLAMATION: "reclamation within the cohort",
    IN_COHORT_FAIR_SHARING: "fair sharing within the cohort",
    IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
}


class Possibility(Enum):
    """The preemption oracle's answer for one flavor-resource."""

    NO_CANDIDATES = "NoCandidates"
    PREEMPT = "Preempt"  # some victim in the preemptor's own queue
    RECLAIM = "Reclaim"  # victims only in other queues of the cohort


_Source = tuple[QuotaNode, "QuotaNode | None", bool]  # (queue holding candidates, LCA, hierarchical advantage)


class _Validity(Enum):
    VALID = "valid"
    SKIP = "skip"  # this candidate only
    QUEUE_DONE = "queue done"  # its queue (or subtree) is back within quota: none of it is valid


class Variant(IntEnum):
    NEVER = 0
    WITHIN_CQ = 1
    HIERARCHICAL_RECLAIM = 2
    RECLAIM_WITHOUT_BORROWING = 3
    RECLAIM_WHILE_BORROWING = 4

    @property
    def reason(self) -> str:
        if self is Variant.WITHIN_CQ:
            return IN_CLUSTER_QUEUE
        if self is Variant.RECLAIM_WHILE_BORROWING:
            return IN_COHORT_RECLAIM_WHILE_BORROWING
        return IN_COHORT_RECLAMATION


@dataclass(frozen=True, slots=True)
class Target:
    workload: AdmissionWorkload
    reason: str


@dataclass(frozen=True, slots=True)
class _Candidate:
    workload: AdmissionWorkload
    lca: QuotaNode | None
    variant: Variant


class Preemptor:
    """Finds preemption targets against the live quota tree (restored before returning).

    `holders` indexes the workloads holding quota in each ClusterQueue (admitted, or evicted
    and still terminating)."""

    def __init__(
        self,
        tree: QuotaTree,
        specs: Mapping[str, ClusterQueue],
        holders: Holders,
        fair_sharing: FairSharing | None,
        shares: FairShares,
    ) -> None:
        self.tree = tree
        self.specs = specs
        self.holders = holders
        self.fair_sharing = fair_sharing
        self.shares = shares
        # Oracle answers for the current tree version (flavor assignment asks the same
        # question for every head of the same size while nothing is admitted).
        self._answers: dict[tuple[object, ...], tuple[Possibility, int]] = {}
        self._answers_version = -1
        self._timestamp_matters = any(s.preemption.within_cluster_queue == "LowerOrNewerEqualPriority" for s in specs.values())

    # -- the oracle used by flavor assignment -------------------------------------------

    def simulate(self, wl: AdmissionWorkload, queue: QuotaNode, fr: FlavorResource, value: int) -> tuple[Possibility, int]:
        if self._answers_version != self.tree.version:
            self._answers.clear()
            self._answers_version = self.tree.version
        key = (queue.name, fr, value, wl.priority, wl.queue_timestamp_s if self._timestamp_matters else None)
        answer = self._answers.get(key)
        if answer is None:
            answer = self._answers[key] = self._simulate(wl, queue, fr, value)
        return answer

    def _simulate(self, wl: AdmissionWorkload, queue: QuotaNode, fr: FlavorResource, value: int) -> tuple[Possibility, int]:
        targets = self.targets(wl, queue, {fr: value}, frozenset({fr}))
        if not targets:
            return Possibility.NO_CANDIDATES, 0
        for target in targets:
            self._remove(target.workload)
        borrow, _ = queue.borrowing_level(fr, value)
        for target in targets:
            self._add(target.workload)
        if any(t.workload.cluster_queue == queue.name for t in targets):
            return Possibility.PREEMPT, borrow
        return Possibility.RECLAIM, borrow

    # -- targets -------------------------------------------------------------------------

    def targets(self, wl: AdmissionWorkload, queue: QuotaNode, usage: Usage, frs_need: frozenset[FlavorResource]) -> list[Target]:
        if self.fair_sharing is not None:
            return self._fair_targets(wl, queue, usage, frs_need)
        return self._classical_targets(wl, queue, usage, frs_need)

    def _remove(self, wl: AdmissionWorkload) -> None:
        self.tree.remove(self.tree.queue(wl.cluster_queue or ""), wl.usage)

    def _add(self, wl: AdmissionWorkload) -> None:
        self.tree.add(self.tree.queue(wl.cluster_queue or ""), wl.usage)

    def _order_key(self, preemptor_queue: str) -> Callable[[AdmissionWorkload], tuple[object, ...]]:
        """Kueue's CandidatesOrdering (evicted first is applied by the callers)."""
        return lambda c: (c.cluster_queue == preemptor_queue, *order_key(c))

    # -- classical -----------------------------------------------------------------------

    def _classical_targets(self, wl: AdmissionWorkload, queue: QuotaNode, usage: Usage, frs_need: frozenset[FlavorResource]) -> list[Target]:
        spec = self.specs[queue.name]
        same: list[_Source] = [(queue, None, False)] if spec.preemption.within_cluster_queue != "Never" else []
        hierarchy, by_priority = self._cohort_sources(queue, usage, frs_need)
        if not self._could_fit(wl, queue, usage, frs_need, [*same, *hierarchy, *by_priority]):
            return []
        evicted = self._evicted_candidates(wl, queue, frs_need, (hierarchy, by_priority, same))

        def ordered(done: set[str]) -> Iterator[_Candidate]:
            yield from evicted
            for sources in (hierarchy, by_priority, same):
                yield from self._stream(wl, queue, sources, frs_need, done)

        def exists(sources: list[_Source]) -> bool:
            return next(self._stream(wl, queue, sources, frs_need, set()), None) is not None

        has_hierarchy = any(c.variant is Variant.HIERARCHICAL_RECLAIM for c in evicted) or exists(hierarchy)
        has_other = has_hierarchy or any(c.workload.cluster_queue != queue.name for c in evicted) or exists(by_priority)
        forbidden = spec.preemption.borrow_within_cohort == "Never"
        runs: tuple[bool, ...]
        if not has_other or (forbidden and not _under_nominal(queue, frs_need)):
            runs = (True,)
        elif forbidden and not has_hierarchy:
            runs = (False, True)
        else:
            runs = (True, False)
        for allow_borrowing in runs:
            search = _Search(self, queue, usage, allow_borrowing)
            # Queues back within their quota give up no more victims in this run (removals
            # only lower usage): their remaining candidates are not even looked at.
            done: set[str] = set()
            try:
                for candidate in ordered(done):
                    validity = self._valid(candidate, queue, allow_borrowing, frs_need)
                    if validity is _Validity.QUEUE_DONE:
                        done.add(candidate.workload.cluster_queue or "")
                    elif validity is _Validity.VALID and search.take(Target(candidate.workload, candidate.variant.reason)):
                        return search.result
            finally:
                search.restore()
        return []

    def _could_fit(self, wl: AdmissionWorkload, queue: QuotaNode, usage: Usage, frs_need: frozenset[FlavorResource],
                   sources: list[_Source]) -> bool:
        """A necessary condition, cheap: could the preemptor fit if every workload that could
        ever be a victim were gone? Removing usage never lowers what a queue can admit, and a
        search only removes some of those workloads, so when even all of them together leave
        no room, the one-by-one search Kueue runs would find none either (same answer).

        Checked once per kind of run: with borrowing allowed, queues whose candidates could
        only be reclaimed without borrowing give nothing (they are skipped in that run);
        without borrowing, every candidate counts but the preemptor must end within its
        nominal quota. (What a queue above nominal gives is not capped at what it borrows:
        its last victim may take it below nominal, freeing quota the preemptor can use.)"""
        spec = self.specs[queue.name].preemption
        no_borrowing_reclaim = spec.borrow_within_cohort == "Never"
        with_borrowing = [source for source, _, advantage in sources
                          if source is queue or advantage or not no_borrowing_reclaim]
        if self._fits_without(wl, queue, usage, with_borrowing, allow_borrowing=True):
            return True
        return self._fits_without(wl, queue, usage, [source for source, _, _ in sources], allow_borrowing=False)

    def _fits_without(self, wl: AdmissionWorkload, queue: QuotaNode, usage: Usage, sources: list[QuotaNode],
                      allow_borrowing: bool) -> bool:
        """Does `usage` fit `queue` once the sources' holders below the priority bound are gone?"""
        removed = []
        for source in dict.fromkeys(sources):  # a queue is one source, even if listed twice
            freeable = {fr: self.holders.held_below(source.name, fr, self._priority_bound(wl, queue, source)) for fr in usage}
            self.tree.remove(source, freeable)
            removed.append((source, freeable))
        try:
            return all((allow_borrowing or not queue.borrowing_with(fr, value)) and value <= max(0, queue.available(fr))
                       for fr, value in usage.items())
        finally:
            for source, freeable in reversed(removed):
                self.tree.add(source, freeable)

    def _priority_bound(self, wl: AdmissionWorkload, queue: QuotaNode, holder: QuotaNode) -> int | None:
        """Candidates of `holder` have a priority below this (None: any priority)."""
        preemption = self.specs[queue.name].preemption
        policy = preemption.within_cluster_queue if holder is queue else preemption.reclaim_within_cohort
        return {"LowerPriority": wl.priority, "LowerOrNewerEqualPriority": wl.priority + 1}.get(policy)

    def _stream(self, wl: AdmissionWorkload, queue: QuotaNode, sources: list[_Source],
                frs_need: frozenset[FlavorResource], done: set[str]) -> Iterator[_Candidate]:
        """The (not evicted) candidates of some queues, merged in candidate order."""
        streams = [self._candidates_of(wl, queue, holder, lca, advantage, frs_need, done) for holder, lca, advantage in sources]
        if len(streams) == 1:
            return streams[0]
        return heapq.merge(*streams, key=lambda c: order_key(c.workload))

    def _evicted_candidates(self, wl: AdmissionWorkload, queue: QuotaNode, frs_need: frozenset[FlavorResource],
                            groups: tuple[list[_Source], ...]) -> list[_Candidate]:
        """Victims already being evicted come first, class by class (their quota is coming back)."""
        found = []
        for sources in groups:
            where = {holder.name: (lca, advantage) for holder, lca, advantage in sources}
            in_group = []
            for candidate in self.holders.evicting.values():
                if candidate.cluster_queue in where and candidate.uses(frs_need):
                    lca, advantage = where[candidate.cluster_queue or ""]
                    variant = self._classify(wl, queue, candidate, advantage, frs_need)
                    if variant is not Variant.NEVER:
                        in_group.append(_Candidate(candidate, lca, variant))
            found.extend(sorted(in_group, key=lambda c: order_key(c.workload)))
        return found

    def _valid(self, candidate: _Candidate, queue: QuotaNode, allow_borrowing: bool, frs_need: frozenset[FlavorResource]) -> _Validity:
        """Kueue's candidateIsValid, checked as victims are removed one by one."""
        if candidate.workload.cluster_queue == queue.name:
            return _Validity.VALID
        if allow_borrowing and candidate.variant is Variant.RECLAIM_WITHOUT_BORROWING:
            return _Validity.SKIP
        node = self.tree.queue(candidate.workload.cluster_queue or "")
        if node.within_nominal(frs_need):
            return _Validity.QUEUE_DONE
        for ancestor in node.ancestors():
            if ancestor is candidate.lca:
                break
            if ancestor.within_nominal(frs_need):
                return _Validity.QUEUE_DONE
        return _Validity.VALID

    def _cohort_sources(self, queue: QuotaNode, usage: Usage, frs_need: frozenset[FlavorResource]) -> tuple[
            list[_Source], list[_Source]]:
        """Queues of the cohort tree above their quota on a needed flavor-resource: those
        the preemptor has a hierarchical advantage over, and the rest (by priority)."""
        hierarchy: list[_Source] = []
        by_priority: list[_Source] = []
        if queue.parent is None or self.specs[queue.name].preemption.reclaim_within_cohort == "Never":
            return hierarchy, by_priority
        advantage, remaining = queue.fits_in_quota(usage)
        previous: QuotaNode | None = None
        for subtree_root in queue.ancestors():
            found = hierarchy if advantage else by_priority
            self._collect_in_subtree(queue, subtree_root, subtree_root, previous, advantage, frs_need, found)
            fits, remaining = subtree_root.fits_in_quota(remaining)
            advantage = advantage or fits
            previous = subtree_root
        return hierarchy, by_priority

    def _collect_in_subtree(self, queue: QuotaNode, current: QuotaNode, subtree_root: QuotaNode, skip: QuotaNode | None,
                            advantage: bool, frs_need: frozenset[FlavorResource], found: list[_Source]) -> None:
        for child in current.child_cohorts:
            if child is skip or child.within_nominal(frs_need):
                continue
            self._collect_in_subtree(queue, child, subtree_root, skip, advantage, frs_need, found)
        for child in current.child_queues:
            if child is not queue and not child.within_nominal(frs_need):
                found.append((child, subtree_root, advantage))

    def _candidates_of(self, wl: AdmissionWorkload, queue: QuotaNode, holder: QuotaNode, lca: QuotaNode | None,
                       advantage: bool, frs_need: frozenset[FlavorResource], done: set[str]) -> Iterator[_Candidate]:
        for candidate in self.holders.ordered(holder.name, frs_need, self._priority_bound(wl, queue, holder)):
            if holder.name in done:
                return
            variant = self._classify(wl, queue, candidate, advantage, frs_need)
            if variant is not Variant.NEVER:
                yield _Candidate(candidate, lca, variant)

    def _classify(self, wl: AdmissionWorkload, queue: QuotaNode, candidate: AdmissionWorkload, advantage: bool,
                  frs_need: frozenset[FlavorResource]) -> Variant:
        if self._priority_too_high(wl, queue, candidate):
            return Variant.NEVER
        if candidate.cluster_queue == queue.name:
            return Variant.WITHIN_CQ
        if advantage:
            return Variant.HIERARCHICAL_RECLAIM
        preemption = self.specs[queue.name].preemption
        if preemption.borrow_within_cohort == "Never":
            return Variant.RECLAIM_WITHOUT_BORROWING
        threshold = preemption.borrow_max_priority_threshold
        if candidate.priority >= wl.priority or (threshold is not None and candidate.priority > threshold):
            return Variant.RECLAIM_WITHOUT_BORROWING
        return Variant.RECLAIM_WHILE_BORROWING

    def _priority_too_high(self, wl: AdmissionWorkload, queue: QuotaNode, candidate: AdmissionWorkload) -> bool:
        preemption = self.specs[queue.name].preemption
        same_queue = candidate.cluster_queue == queue.name
        policy = preemption.within_cluster_queue if same_queue else preemption.reclaim_within_cohort
        lower = wl.priority > candidate.priority
        if policy == "LowerPriority":
            return not lower
        if policy == "LowerOrNewerEqualPriority":
            newer_equal = wl.priority == candidate.priority and wl.queue_timestamp_s < candidate.queue_timestamp_s
            return not (lower or newer_equal)
        return policy != "Any"

    # -- fair sharing ----------------------------------------------------------------------

    def _fair_targets(self, wl: AdmissionWorkload, queue: QuotaNode, usage: Usage, frs_need: frozenset[FlavorResource]) -> list[Target]:
        candidates = self._fair_candidates(wl, queue, frs_need)
        if not candidates:
            return []
        key = self._order_key(queue.name)
        candidates.sort(key=lambda c: (c.name not in self.holders.evicting, *key(c)))
        strategies = self.fair_sharing.preemption_strategies if self.fair_sharing else ()
        first_strategy = _STRATEGIES[strategies[0]]
        search = _Search(self, queue, usage, allow_borrowing=True, preemptor_usage_simulated=True)
        self.tree.add(queue, usage)  # shares are compared with the preemptor admitted
        try:
            retry = self._first_fair_pass(queue, candidates, frs_need, first_strategy, search)
            if retry is not None and len(strategies) > 1:
                self._second_fair_pass(queue, retry, search)
        finally:
            self.tree.remove(queue, usage)
            search.restore()
        return search.result

    def _fair_candidates(self, wl: AdmissionWorkload, queue: QuotaNode, frs_need: frozenset[FlavorResource]) -> list[AdmissionWorkload]:
        preemption = self.specs[queue.name].preemption
        queues = [queue] if preemption.within_cluster_queue != "Never" else []
        if queue.parent is not None and preemption.reclaim_within_cohort != "Never":
            queues += [q for q in self.tree.queues_of_tree(queue) if q is not queue and any(q.borrowing_with(fr) for fr in frs_need)]
        names = {q.name for q in queues}
        found = [c for c in self.holders.evicting.values() if c.cluster_queue in names and c.uses(frs_need)]
        for holder in queues:
            found.extend(self.holders.ordered(holder.name, frs_need, None))
        return [c for c in found if not self._priority_too_high(wl, queue, c)]

    def _first_fair_pass(self, queue: QuotaNode, candidates: list[AdmissionWorkload], frs_need: frozenset[FlavorResource],
                         strategy: Callable[[Share, Share, Share], bool], search: _Search) -> list[AdmissionWorkload] | None:
        """Returns the candidates to retry with the second strategy, or None when done."""
        ordering = _TargetOrdering(self, queue, candidates)
        within_nominal = queue.within_nominal(frs_need)  # with the preemptor's usage
        retry: list[AdmissionWorkload] = []
        for target in ordering:
            if target is queue:
                if search.take(Target(ordering.pop(target), IN_CLUSTER_QUEUE)):
                    return None
                continue
            if within_nominal:
                if search.take(Target(ordering.pop(target), IN_COHORT_RECLAMATION)):
                    return None
                continue
            preemptor_new, target_old = ordering.shares(target)
            if not strategy(preemptor_new, target_old, target_old):
                while ordering.has_workloads(target):  # nothing here can pass; keep for rule S2-b
                    retry.append(ordering.pop(target))
                continue
            while ordering.has_workloads(target):
                candidate = ordering.pop(target)
                if strategy(preemptor_new, target_old, ordering.share_without(target, candidate)):
                    if search.take(Target(candidate, IN_COHORT_FAIR_SHARING)):
                        return None
                    break  # the shares moved: pick the target queue again
                retry.append(candidate)
        return retry

    def _second_fair_pass(self, queue: QuotaNode, retry: list[AdmissionWorkload], search: _Search) -> None:
        ordering = _TargetOrdering(self, queue, retry)
        for target in ordering:
            preemptor_new, target_old = ordering.shares(target)
            candidate = ordering.pop(target)
            if preemptor_new.key < target_old.key and search.take(Target(candidate, IN_COHORT_FAIR_SHARING)):
                return
            ordering.drop(target)  # rule S2-b cannot apply twice to one queue


def _less_than_or_equal_to_final_share(preemptor_new: Share, _target_old: Share, target_new: Share) -> bool:
    return preemptor_new.key <= target_new.key


def _less_than_initial_share(preemptor_new: Share, target_old: Share, _target_new: Share) -> bool:
    return preemptor_new.key < target_old.key


_STRATEGIES = {
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE: _less_than_or_equal_to_final_share,
    "LessThanInitialShare": _less_than_initial_share,
}


def _under_nominal(queue: QuotaNode, frs: frozenset[FlavorResource]) -> bool:
    """Kueue's queueUnderNominalInResourcesNeedingPreemption (strictly below)."""
    return all(queue.usage.get(fr, 0) < queue.subtree.get(fr, 0) for fr in frs)


class _Search:
    """Remove victims one by one until the preemptor fits, then add back what is not
    needed (newest removed first), as Kueue's minimal preemption and fillBackWorkloads."""

    def __init__(self, preemptor: Preemptor, queue: QuotaNode, usage: Usage, allow_borrowing: bool,
                 preemptor_usage_simulated: bool = False) -> None:
        self.preemptor = preemptor
        self.queue = queue
        self.usage = usage
        self.allow_borrowing = allow_borrowing
        self.simulated = preemptor_usage_simulated  # fair sharing keeps it added while choosing
        self.removed: list[Target] = []
        self.result: list[Target] = []

    def take(self, target: Target) -> bool:
        self.preemptor._remove(target.workload)
        self.removed.append(target)
        tree = self.preemptor.tree
        if self.simulated:
            tree.remove(self.queue, self.usage)
        try:
            if not self._fits():
                return False
            for target_back in reversed(self.removed[:-1]):
                self.preemptor._add(target_back.workload)
                if self._fits():
                    self.removed.remove(target_back)
                else:
                    self.preemptor._remove(target_back.workload)
            self.result = list(self.removed)
            return True
        finally:
            if self.simulated:
                tree.add(self.queue, self.usage)

    def _fits(self) -> bool:
        queue = self.queue
        for fr, value in self.usage.items():
            if not self.allow_borrowing and queue.borrowing_with(fr, value):
                return False
            if value > max(0, queue.available(fr)):
                return False
        return True

    def restore(self) -> None:
        for target in self.removed:
            self.preemptor._add(target.workload)
        self.removed = []


class _TargetOrdering:
    """Kueue's TargetClusterQueueOrdering: descend from the root into the child with the
    highest share that still has candidates; prune children that stopped borrowing."""

    def __init__(self, preemptor: Preemptor, queue: QuotaNode, candidates: list[AdmissionWorkload]) -> None:
        self.preemptor = preemptor
        self.shares_of = preemptor.shares
        self.queue = queue
        self.path = {id(a) for a in queue.ancestors()}
        self.by_queue: dict[str, list[AdmissionWorkload]] = {}
        for candidate in candidates:
            self.by_queue.setdefault(candidate.cluster_queue or "", []).append(candidate)
        self.pruned: set[int] = set()

    def __iter__(self) -> Iterator[QuotaNode]:
        if self.queue.parent is None:
            while self.has_workloads(self.queue):
                yield self.queue
            return
        root = self.queue.root()
        while id(root) not in self.pruned:
            target = self._next(root)
            if target is not None:
                yield target

    def has_workloads(self, queue: QuotaNode) -> bool:
        return bool(self.by_queue.get(queue.name))

    def pop(self, queue: QuotaNode) -> AdmissionWorkload:
        return self.by_queue[queue.name].pop(0)

    def drop(self, queue: QuotaNode) -> None:
        self.pruned.add(id(queue))

    def shares(self, target: QuotaNode) -> tuple[Share, Share]:
        """(preemptor's share, target's share) at the level below their common ancestor."""
        preemptor_side, target_side = self._almost_lcas(target)
        return self.shares_of.share(preemptor_side), self.shares_of.share(target_side)

    def share_without(self, target: QuotaNode, candidate: AdmissionWorkload) -> Share:
        tree = self.preemptor.tree
        tree.remove(target, candidate.usage)
        try:
            return self.shares_of.share(self._almost_lcas(target)[1])
        finally:
            tree.add(target, candidate.usage)

    def _almost_lcas(self, target: QuotaNode) -> tuple[QuotaNode, QuotaNode]:
        lca = lowest_common_ancestor(self.queue, target)
        assert lca is not None, "preemption targets share the preemptor's cohort tree"
        return child_towards(lca, self.queue), child_towards(lca, target)

    def _next(self, cohort: QuotaNode) -> QuotaNode | None:
        best_queue, best_queue_key = None, None
        for queue in cohort.child_queues:
            if id(queue) in self.pruned:
                continue
            share = self.shares_of.share(queue)
            if (share.ratio == 0 and queue is not self.queue) or not self.has_workloads(queue):
                self.pruned.add(id(queue))
            elif best_queue_key is None or share.key >= best_queue_key:
                best_queue, best_queue_key = queue, share.key
        best_cohort, best_cohort_key = None, None
        for child in cohort.child_cohorts:
            if id(child) in self.pruned:
                continue
            share = self.shares_of.share(child)
            if share.ratio == 0 and id(child) not in self.path:
                self.pruned.add(id(child))
            elif best_cohort_key is None or share.key >= best_cohort_key:
                best_cohort, best_cohort_key = child, share.key
        if best_queue is None and best_cohort is None:
            self.pruned.add(id(cohort))
            return None
        if best_cohort is not None and (best_queue_key is None or (best_cohort_key is not None and best_cohort_key >= best_queue_key)):
            return self._next(best_cohort)
        return best_queue
