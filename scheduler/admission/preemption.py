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

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum, IntEnum

from scheduler.admission.configuration import LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, FairSharing
from scheduler.admission.fair_sharing import FairShares, Share
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

    `holders(queue_name)` lists the workloads holding quota in a ClusterQueue (admitted, or
    evicted and still terminating)."""

    def __init__(
        self,
        tree: QuotaTree,
        specs: Mapping[str, ClusterQueue],
        holders: Callable[[str], list[AdmissionWorkload]],
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
        return lambda c: (c.cluster_queue == preemptor_queue, c.priority, -(c.admitted_s or 0.0), c.seq)

    # -- classical -----------------------------------------------------------------------

    def _classical_targets(self, wl: AdmissionWorkload, queue: QuotaNode, usage: Usage, frs_need: frozenset[FlavorResource]) -> list[Target]:
        spec = self.specs[queue.name]
        same: list[_Candidate] = []
        if spec.preemption.within_cluster_queue != "Never":
            same = self._candidates_of(wl, queue, queue, None, False, frs_need)
        hierarchy, by_priority = self._cohort_candidates(wl, queue, usage, frs_need)
        key = self._order_key(queue.name)
        for group in (same, hierarchy, by_priority):
            group.sort(key=lambda c: key(c.workload))
        groups = (hierarchy, by_priority, same)
        ordered = [c for g in groups for c in g if c.workload.evicted] + [c for g in groups for c in g if not c.workload.evicted]
        forbidden = spec.preemption.borrow_within_cohort == "Never"
        runs: tuple[bool, ...]
        if (not hierarchy and not by_priority) or (forbidden and not _under_nominal(queue, frs_need)):
            runs = (True,)
        elif forbidden and not hierarchy:
            runs = (False, True)
        else:
            runs = (True, False)
        for allow_borrowing in runs:
            search = _Search(self, queue, usage, allow_borrowing)
            try:
                for candidate in ordered:
                    if self._valid(candidate, queue, allow_borrowing, frs_need) and search.take(
                        Target(candidate.workload, candidate.variant.reason)
                    ):
                        return search.result
            finally:
                search.restore()
        return []

    def _valid(self, candidate: _Candidate, queue: QuotaNode, allow_borrowing: bool, frs_need: frozenset[FlavorResource]) -> bool:
        """Kueue's candidateIsValid, checked as victims are removed one by one."""
        if candidate.workload.cluster_queue == queue.name:
            return True
        if allow_borrowing and candidate.variant is Variant.RECLAIM_WITHOUT_BORROWING:
            return False
        node = self.tree.queue(candidate.workload.cluster_queue or "")
        if node.within_nominal(frs_need):
            return False
        for ancestor in node.ancestors():
            if ancestor is candidate.lca:
                break
            if ancestor.within_nominal(frs_need):
                return False
        return True

    def _cohort_candidates(self, wl: AdmissionWorkload, queue: QuotaNode, usage: Usage, frs_need: frozenset[FlavorResource]) -> tuple[list[_Candidate], list[_Candidate]]:
        hierarchy: list[_Candidate] = []
        by_priority: list[_Candidate] = []
        if queue.parent is None or self.specs[queue.name].preemption.reclaim_within_cohort == "Never":
            return hierarchy, by_priority
        advantage, remaining = queue.fits_in_quota(usage)
        previous: QuotaNode | None = None
        for subtree_root in queue.ancestors():
            found = hierarchy if advantage else by_priority
            self._collect_in_subtree(wl, queue, subtree_root, subtree_root, previous, advantage, frs_need, found)
            fits, remaining = subtree_root.fits_in_quota(remaining)
            advantage = advantage or fits
            previous = subtree_root
        return hierarchy, by_priority

    def _collect_in_subtree(self, wl: AdmissionWorkload, queue: QuotaNode, current: QuotaNode, subtree_root: QuotaNode,
                            skip: QuotaNode | None, advantage: bool, frs_need: frozenset[FlavorResource], found: list[_Candidate]) -> None:
        for child in current.child_cohorts:
            if child is skip or child.within_nominal(frs_need):
                continue
            self._collect_in_subtree(wl, queue, child, subtree_root, skip, advantage, frs_need, found)
        for child in current.child_queues:
            if child is not queue and not child.within_nominal(frs_need):
                found.extend(self._candidates_of(wl, queue, child, subtree_root, advantage, frs_need))

    def _candidates_of(self, wl: AdmissionWorkload, queue: QuotaNode, holder: QuotaNode, lca: QuotaNode | None,
                       advantage: bool, frs_need: frozenset[FlavorResource]) -> list[_Candidate]:
        found = []
        for candidate in self.holders(holder.name):
            variant = self._classify(wl, queue, candidate, advantage, frs_need)
            if variant is not Variant.NEVER:
                found.append(_Candidate(candidate, lca, variant))
        return found

    def _classify(self, wl: AdmissionWorkload, queue: QuotaNode, candidate: AdmissionWorkload, advantage: bool,
                  frs_need: frozenset[FlavorResource]) -> Variant:
        if not candidate.uses(frs_need) or self._priority_too_high(wl, queue, candidate):
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
        candidates.sort(key=lambda c: (not c.evicted, *key(c)))
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
        found = []
        if preemption.within_cluster_queue != "Never":
            found = [c for c in self.holders(queue.name) if c.uses(frs_need) and not self._priority_too_high(wl, queue, c)]
        if queue.parent is not None and preemption.reclaim_within_cohort != "Never":
            for other in self.tree.queues_of_tree(queue):
                if other is queue or not any(other.borrowing_with(fr) for fr in frs_need):
                    continue
                found.extend(c for c in self.holders(other.name) if c.uses(frs_need) and not self._priority_too_high(wl, queue, c))
        return found

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
