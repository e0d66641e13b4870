"""The named policies of Kueue's API, as string enums (values spelled as in the YAML).

Each enum is the closed set of values one field accepts; the manifest reader turns a YAML
string into a member (or fails naming the file, document and field), and the decisions
compare members, never bare strings. Sources: kueue apis/kueue/v1beta2/clusterqueue_types.go,
apis/config/v1beta2/configuration_types.go.
"""

from __future__ import annotations

from enum import StrEnum


class QueueingStrategy(StrEnum):
    """ClusterQueue ``spec.queueingStrategy``: how a head that cannot be admitted is requeued."""

    BEST_EFFORT_FIFO = "BestEffortFIFO"  # default: it steps aside, the next workload gets a turn
    STRICT_FIFO = "StrictFIFO"  # it stays the head and blocks the queue


class PreemptionPolicy(StrEnum):
    """ClusterQueue ``spec.preemption.withinClusterQueue`` / ``reclaimWithinCohort``: which
    admitted workloads a pending one may preempt."""

    NEVER = "Never"
    LOWER_PRIORITY = "LowerPriority"
    LOWER_OR_NEWER_EQUAL_PRIORITY = "LowerOrNewerEqualPriority"  # withinClusterQueue only
    ANY = "Any"  # reclaimWithinCohort only


WITHIN_CLUSTER_QUEUE_POLICIES = (
    PreemptionPolicy.NEVER, PreemptionPolicy.LOWER_PRIORITY, PreemptionPolicy.LOWER_OR_NEWER_EQUAL_PRIORITY,
)
RECLAIM_WITHIN_COHORT_POLICIES = (PreemptionPolicy.NEVER, PreemptionPolicy.LOWER_PRIORITY, PreemptionPolicy.ANY)


class BorrowWithinCohortPolicy(StrEnum):
    """ClusterQueue ``spec.preemption.borrowWithinCohort.policy``: may a workload preempt in
    the cohort while it borrows (classical preemption only)."""

    NEVER = "Never"
    LOWER_PRIORITY = "LowerPriority"


class FlavorFungibilityPolicy(StrEnum):
    """ClusterQueue ``spec.flavorFungibility.whenCanBorrow`` / ``whenCanPreempt``: stop at a
    flavor that needs borrowing (preemption), or look at the next one first."""

    MAY_STOP_SEARCH = "MayStopSearch"
    TRY_NEXT_FLAVOR = "TryNextFlavor"


class FungibilityPreference(StrEnum):
    """ClusterQueue ``spec.flavorFungibility.preference``: which flavor wins when every
    candidate needs borrowing, preemption or both."""

    BORROWING_OVER_PREEMPTION = "BorrowingOverPreemption"
    PREEMPTION_OVER_BORROWING = "PreemptionOverBorrowing"


class StopPolicy(StrEnum):
    """ClusterQueue ``spec.stopPolicy``: Hold and HoldAndDrain make the queue admit nothing."""

    NONE = "None"
    HOLD = "Hold"
    HOLD_AND_DRAIN = "HoldAndDrain"


class FairSharingStrategy(StrEnum):
    """Configuration ``fairSharing.preemptionStrategies``: when a queue may preempt a
    workload of a queue with a higher share."""

    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
    LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"


class RequeueTimestamp(StrEnum):
    """Configuration ``waitForPodsReady.requeuingStrategy.timestamp``: a workload evicted by
    the PodsReady timeout queues again by its eviction time, or keeps its creation time."""

    EVICTION = "Eviction"
    CREATION = "Creation"
