"""Fair-sharing preemption: a queue with a lower share takes from the queue with the highest.

Sources: kueue pkg/scheduler/preemption/preemption.go (fairPreemptions, runFirstFsStrategy,
runSecondFsStrategy), fairsharing/{ordering.go, strategy.go, target.go,
least_common_ancestor.go} (semantics reference §4.7).

The ClusterQueue with the highest share (descending from the root, compared at the level
under the lowest common ancestor) gives up a workload while the strategy holds:
LessThanOrEqualToFinalShare (preemptor's share with the workload <= target's share without
the victim), then LessThanInitialShare (< target's share before) for the rest; queues within
nominal quota on the contested resources preempt unconditionally.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from scheduler.admission.fair_shares import FairShares, Share
from scheduler.admission.holders import Holders
from scheduler.admission.objects import ClusterQueue, FairSharing
from scheduler.admission.policies import FairSharingStrategy, PreemptionPolicy
from scheduler.admission.preemption.common import (
    PreemptionReason,
    Target,
    candidates_ordering,
    priority_too_high,
)
from scheduler.admission.preemption.search import TopologyFits, VictimSearch
from scheduler.admission.quota import (
    FlavorResource,
    QuotaNode,
    QuotaTree,
    Usage,
    child_towards,
    lowest_common_ancestor,
)
from scheduler.admission.workloads import AdmissionWorkload

Strategy = Callable[[Share, Share, Share], bool]  # (preemptor's new, target's old, target's new share)
CandidateKey = Callable[[AdmissionWorkload], tuple[object, ...]]  # CandidatesOrdering as a sort key


def _less_than_or_equal_to_final_share(preemptor_new: Share, _target_old: Share, target_new: Share) -> bool:
    return preemptor_new.key <= target_new.key


def _less_than_initial_share(preemptor_new: Share, target_old: Share, _target_new: Share) -> bool:
    return preemptor_new.key < target_old.key


STRATEGIES: Mapping[FairSharingStrategy, Strategy] = {
    FairSharingStrategy.LESS_THAN_OR_EQUAL_TO_FINAL_SHARE: _less_than_or_equal_to_final_share,
    FairSharingStrategy.LESS_THAN_INITIAL_SHARE: _less_than_initial_share,
}


class FairSharingPreemption:
    def __init__(self, tree: QuotaTree, specs: Mapping[str, ClusterQueue], holders: Holders,
                 fair_sharing: FairSharing, shares: FairShares) -> None:
        self.tree = tree
        self.specs = specs
        self.holders = holders
        self.strategies = fair_sharing.preemption_strategies
        self.shares = shares

    def targets(self, wl: AdmissionWorkload, queue: QuotaNode, usage: Usage, frs_need: frozenset[FlavorResource],
                topology_fits: TopologyFits | None = None) -> list[Target]:
        candidates = self._candidates(wl, queue, frs_need)
        if not candidates:
            return []
        key = candidates_ordering(queue.name)
        evicting = self.holders.evicting

        def candidate_key(c: AdmissionWorkload) -> tuple[object, ...]:
            return (c.name not in evicting, *key(c))

        candidates.sort(key=candidate_key)
        search = VictimSearch(self.tree, queue, usage, allow_borrowing=True, preemptor_usage_simulated=True,
                              topology_fits=topology_fits)
        self.tree.add(queue, usage)  # shares are compared with the preemptor admitted
        try:
            retry = self._first_pass(queue, candidates, frs_need, STRATEGIES[self.strategies[0]], search, candidate_key)
            if retry is not None and len(self.strategies) > 1:
                self._second_pass(queue, retry, search, candidate_key)
        finally:
            self.tree.remove(queue, usage)
            search.restore()
        return search.result

    def _candidates(self, wl: AdmissionWorkload, queue: QuotaNode, frs_need: frozenset[FlavorResource]) -> list[AdmissionWorkload]:
        preemption = self.specs[queue.name].preemption
        queues = [queue] if preemption.within_cluster_queue is not PreemptionPolicy.NEVER else []
        if queue.parent is not None and preemption.reclaim_within_cohort is not PreemptionPolicy.NEVER:
            queues += [q for q in self.tree.queues_of_tree(queue) if q is not queue and any(q.borrowing_with(fr) for fr in frs_need)]
        names = {q.name for q in queues}
        found = [c for c in self.holders.evicting.values() if c.cluster_queue in names and c.uses(frs_need)]
        for holder in queues:
            found.extend(self.holders.ordered(holder.name, frs_need, None))
        return [c for c in found if not priority_too_high(preemption, wl, queue.name, c)]

    def _first_pass(self, queue: QuotaNode, candidates: list[AdmissionWorkload], frs_need: frozenset[FlavorResource],
                    strategy: Strategy, search: VictimSearch, candidate_key: CandidateKey) -> list[AdmissionWorkload] | None:
        """Returns the candidates to retry with the second strategy, or None when done."""
        ordering = _TargetOrdering(self.tree, self.shares, queue, candidates, candidate_key)
        within_nominal = queue.within_nominal(frs_need)  # with the preemptor's usage
        retry: list[AdmissionWorkload] = []
        for target in ordering:
            if target is queue:
                if search.take(Target(ordering.pop(target), PreemptionReason.IN_CLUSTER_QUEUE)):
                    return None
                continue
            if within_nominal:
                if search.take(Target(ordering.pop(target), PreemptionReason.IN_COHORT_RECLAMATION)):
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
                    if search.take(Target(candidate, PreemptionReason.IN_COHORT_FAIR_SHARING)):
                        return None
                    break  # the shares moved: pick the target queue again
                retry.append(candidate)
        return retry

    def _second_pass(self, queue: QuotaNode, retry: list[AdmissionWorkload], search: VictimSearch,
                     candidate_key: CandidateKey) -> None:
        ordering = _TargetOrdering(self.tree, self.shares, queue, retry, candidate_key)
        for target in ordering:
            preemptor_new, target_old = ordering.shares(target)
            candidate = ordering.pop(target)
            if preemptor_new.key < target_old.key and search.take(Target(candidate, PreemptionReason.IN_COHORT_FAIR_SHARING)):
                return
            ordering.drop(target)  # rule S2-b cannot apply twice to one queue


class _TargetOrdering:
    """Kueue's TargetClusterQueueOrdering: descend from the root into the child with the
    highest share that still has candidates; prune children that stopped borrowing. Two
    ClusterQueues of equal share: the one whose first candidate comes first in
    CandidatesOrdering (`candidate_key`) is the target (ordering.go nextTarget)."""

    def __init__(self, tree: QuotaTree, shares: FairShares, queue: QuotaNode, candidates: list[AdmissionWorkload],
                 candidate_key: CandidateKey) -> None:
        self.tree = tree
        self.candidate_key = candidate_key
        self.shares_of = shares
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
        self.tree.remove(target, candidate.usage)
        try:
            return self.shares_of.share(self._almost_lcas(target)[1])
        finally:
            self.tree.add(target, candidate.usage)

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
            elif best_queue is None or best_queue_key is None or share.key > best_queue_key:
                best_queue, best_queue_key = queue, share.key
            elif share.key == best_queue_key and (
                self.candidate_key(self.by_queue[queue.name][0]) < self.candidate_key(self.by_queue[best_queue.name][0])
            ):
                best_queue = queue
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
