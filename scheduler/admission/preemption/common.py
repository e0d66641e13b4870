"""The vocabulary both kinds of preemption share: why a victim was preempted, what the oracle
answers, a target, which candidates a policy allows, and the order candidates are tried in.

Sources: kueue pkg/scheduler/preemption/common/{types.go, preemption_policy.go, ordering.go},
apis/kueue/v1beta2/workload_types.go (the Preempted condition's reasons).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum, StrEnum

from scheduler.admission.holders import order_key
from scheduler.admission.objects import ClusterQueuePreemption
from scheduler.admission.policies import PreemptionPolicy
from scheduler.admission.quota import QuotaTree
from scheduler.admission.workloads import AdmissionWorkload

# Enum members read through their class cost a metaclass lookup (about 0.5 µs on CPython
# 3.11, ten times a global): the checks that run per candidate or per nomination compare
# with these module constants instead.
_LOWER_PRIORITY = PreemptionPolicy.LOWER_PRIORITY
_LOWER_OR_NEWER_EQUAL_PRIORITY = PreemptionPolicy.LOWER_OR_NEWER_EQUAL_PRIORITY
_ANY = PreemptionPolicy.ANY


class PreemptionReason(StrEnum):
    """The reason of a victim's Preempted condition."""

    IN_CLUSTER_QUEUE = "InClusterQueue"
    IN_COHORT_RECLAMATION = "InCohortReclamation"
    IN_COHORT_FAIR_SHARING = "InCohortFairSharing"
    IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"

    @property
    def human(self) -> str:
        """How Kueue's preemption message says it (preemption.go preemptionMessage)."""
        return _HUMAN_REASONS[self]


_HUMAN_REASONS = {
    PreemptionReason.IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
    PreemptionReason.IN_COHORT_RECLAMATION: "reclamation within the cohort",
    PreemptionReason.IN_COHORT_FAIR_SHARING: "fair sharing within the cohort",
    PreemptionReason.IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
}


class Possibility(Enum):
    """The preemption oracle's answer for one flavor-resource."""

    NO_CANDIDATES = "NoCandidates"
    PREEMPT = "Preempt"  # some victim in the preemptor's own queue
    RECLAIM = "Reclaim"  # victims only in other queues of the cohort


class Target:
    """A victim and why (a value: nominations that agree compare equal under `--verify`).
    A plain slotted class, not a dataclass: the compiled build runs a dataclass's generated
    `__init__` as interpreted code, and a target is made per candidate taken."""

    __slots__ = ("workload", "reason")

    def __init__(self, workload: AdmissionWorkload, reason: PreemptionReason) -> None:
        self.workload = workload
        self.reason = reason

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Target) and self.workload == other.workload
                                 and self.reason == other.reason)

    def __hash__(self) -> int:
        return hash((self.workload, self.reason))

    def __repr__(self) -> str:
        return f"Target(workload={self.workload!r}, reason={self.reason!r})"


def policy_towards(preemption: ClusterQueuePreemption, same_queue: bool) -> PreemptionPolicy:
    """The policy that governs candidates of the preemptor's own queue, or of the cohort."""
    return preemption.within_cluster_queue if same_queue else preemption.reclaim_within_cohort


def priority_too_high(preemption: ClusterQueuePreemption, preemptor: AdmissionWorkload, preemptor_queue: str,
                      candidate: AdmissionWorkload) -> bool:
    """Kueue's SatisfiesPreemptionPolicy, negated: the policy protects `candidate`."""
    same_queue = candidate.cluster_queue == preemptor_queue
    policy = preemption.within_cluster_queue if same_queue else preemption.reclaim_within_cohort
    lower = preemptor.priority > candidate.priority
    if policy is _LOWER_PRIORITY:
        return not lower
    if policy is _LOWER_OR_NEWER_EQUAL_PRIORITY:
        newer_equal = preemptor.priority == candidate.priority and preemptor.queue_timestamp_s < candidate.queue_timestamp_s
        return not (lower or newer_equal)
    return policy is not _ANY


def priority_bound(policy: PreemptionPolicy, preemptor: AdmissionWorkload) -> int | None:
    """Candidates under `policy` have a priority below this (None: any priority)."""
    if policy is _LOWER_PRIORITY:
        return preemptor.priority
    if policy is _LOWER_OR_NEWER_EQUAL_PRIORITY:
        return preemptor.priority + 1
    return None


def candidates_ordering(preemptor_queue: str) -> Callable[[AdmissionWorkload], tuple[object, ...]]:
    """Kueue's CandidatesOrdering: other queues' workloads before the preemptor's own, then
    lower priority, most recently admitted, id (already evicted first is the callers')."""
    return lambda c: (c.cluster_queue == preemptor_queue, *order_key(c))


def remove_workload(tree: QuotaTree, wl: AdmissionWorkload) -> None:
    """What-if `wl` were gone: its usage leaves its queue (undo with `add_workload`)."""
    tree.remove(tree.queue(wl.cluster_queue or ""), wl.usage)


def add_workload(tree: QuotaTree, wl: AdmissionWorkload) -> None:
    tree.add(tree.queue(wl.cluster_queue or ""), wl.usage)
