"""The entry point of preemption: targets for a nominated workload, and the oracle flavor
assignment asks whether preemption could make room in one flavor-resource.

Sources: kueue pkg/scheduler/preemption/preemption.go (Preemptor.GetTargets),
preemption_oracle.go (SimulatePreemption).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from scheduler.admission.fair_shares import FairShares
from scheduler.admission.holders import Holders
from scheduler.admission.objects import ClusterQueue, FairSharing
from scheduler.admission.policies import PreemptionPolicy
from scheduler.admission.preemption.classical import ClassicalPreemption
from scheduler.admission.preemption.common import Possibility, Target, add_workload, remove_workload
from scheduler.admission.preemption.fair_sharing import FairSharingPreemption
from scheduler.admission.preemption.search import TopologyFits
from scheduler.admission.quota import (
    FlavorResource,
    QuotaNode,
    QuotaTree,
    Usage,
    usage_after_removing,
)
from scheduler.admission.versions import FlavorResourceVersions
from scheduler.admission.workloads import AdmissionWorkload
from scheduler.verify import ClockedVerifier

if TYPE_CHECKING:
    from scheduler.admission.admission_fair_sharing import QueueUsage

ORACLE_LEVEL_CHECK = "preemption oracle's borrowing level on an overlay of the usage"
_MOST_ANSWERS = 100_000  # with the queue-order timestamp in the key, one per waiting workload


class Preemptor:
    """Finds preemption targets against the live quota tree (restored before returning):
    classical preemption, or fair sharing's when `fair_sharing` is set."""

    def __init__(self, tree: QuotaTree, specs: Mapping[str, ClusterQueue], holders: Holders,
                 fair_sharing: FairSharing | None, shares: FairShares,
                 versions: FlavorResourceVersions | None = None, fair_orderings: Mapping[str, QueueUsage] | None = None) -> None:
        self.tree = tree
        # Admission fair sharing's LocalQueue usage per ClusterQueue in that mode: it orders
        # the preemptor's own queue's candidates (classical preemption), so answers read it.
        self.fair_orderings = fair_orderings or {}
        self.strategy: ClassicalPreemption | FairSharingPreemption = (
            ClassicalPreemption(tree, specs, holders, self.fair_orderings) if fair_sharing is None
            else FairSharingPreemption(tree, specs, holders, fair_sharing, shares)
        )
        # Oracle answers, each valid while the one flavor-resource it reads keeps its version
        # (`versions`; without them, while the tree's version stands). Flavor assignment asks
        # the same question for every head of the same size and priority.
        self.versions = versions
        self._answers: dict[tuple[object, ...], tuple[tuple[int, ...], tuple[Possibility, int]]] = {}
        # The preemptor's timestamp changes an answer only under LowerOrNewerEqualPriority.
        self._timestamp_matters = any(
            s.preemption.within_cluster_queue is PreemptionPolicy.LOWER_OR_NEWER_EQUAL_PRIORITY for s in specs.values()
        )
        self.check: ClockedVerifier | None = None  # `replay --verify`: every reused answer computed afresh

    def targets(self, wl: AdmissionWorkload, queue: QuotaNode, usage: Usage, frs_need: frozenset[FlavorResource],
                topology_fits: TopologyFits | None = None) -> list[Target]:
        """The fewest workloads whose eviction lets `usage` fit in `queue` ([] when none do);
        with `topology_fits`, whose eviction also lets the pod set's topology fit (TAS)."""
        return self.strategy.targets(wl, queue, usage, frs_need, topology_fits)

    def simulate(self, wl: AdmissionWorkload, queue: QuotaNode, fr: FlavorResource, value: int) -> tuple[Possibility, int]:
        """The oracle: could preemption make room for `value` of `fr`, and with which
        borrowing level once the victims are gone."""
        fair = self.fair_orderings.get(queue.name)
        key = (queue.name, fr, value, wl.priority, wl.queue_timestamp_s if self._timestamp_matters else None,
               None if fair is None else fair.version())
        stamp = self._stamp(fr)
        cached = self._answers.get(key)
        if cached is not None and cached[0] == stamp:
            if self.check is not None:
                self.check.same("preemption oracle answer reused per flavor-resource", cached[1],
                                self._simulate(wl, queue, fr, value), wl.name)
            return cached[1]
        if len(self._answers) >= _MOST_ANSWERS and key not in self._answers:
            self._answers.clear()  # questions no head asks any more; dropping answers only costs time
        answer = self._simulate(wl, queue, fr, value)
        self._answers[key] = (stamp, answer)
        return answer

    def _stamp(self, fr: FlavorResource) -> tuple[int, ...]:
        """What an answer about `fr` is valid for: the version of `fr` (of the tree without versions)."""
        return (self.tree.version,) if self.versions is None else self.versions.stamp((fr,))

    def _simulate(self, wl: AdmissionWorkload, queue: QuotaNode, fr: FlavorResource, value: int) -> tuple[Possibility, int]:
        targets = self.targets(wl, queue, {fr: value}, frozenset({fr}))
        if not targets:
            return Possibility.NO_CANDIDATES, 0
        # The level once the targets are gone reads `fr` alone: their usage of it removed on
        # an overlay, with the tree's arithmetic, rather than all of it written to the tree
        # and added back.
        after = usage_after_removing(fr, [(self.tree.queue(t.workload.cluster_queue or ""), t.workload.usage.get(fr, 0))
                                          for t in targets])
        borrow, _ = queue.borrowing_level(fr, value, after)
        if self.check is not None:
            self.check.same(ORACLE_LEVEL_CHECK, borrow, self._level_once_removed(queue, fr, value, targets), wl.name)
        if any(t.workload.cluster_queue == queue.name for t in targets):
            return Possibility.PREEMPT, borrow
        return Possibility.RECLAIM, borrow

    def _level_once_removed(self, queue: QuotaNode, fr: FlavorResource, value: int, targets: list[Target]) -> int:
        """The borrowing level with the targets removed from the tree and added back
        (`replay --verify`'s plain answer)."""
        for target in targets:
            remove_workload(self.tree, target.workload)
        borrow, _ = queue.borrowing_level(fr, value)
        for target in targets:
            add_workload(self.tree, target.workload)
        return borrow
