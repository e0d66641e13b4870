"""Flavor assignment: which ResourceFlavor serves each resource group of a workload.

Source: kueue pkg/scheduler/flavorassigner/flavorassigner.go (findFlavorForPodSets,
fitsResourceQuota, isPreferred, shouldTryNextFlavor, checkFlavorForPodSets; semantics
reference §4.5). For each resource group the workload asks for, flavors are tried in the
ClusterQueue's order:

  - a flavor with a NoSchedule/NoExecute nodeTaint that neither the pod nor the flavor's
    own tolerations tolerate is skipped ("untolerated taint k=v:NoSchedule in flavor F":
    NoMatchingFlavor; checkFlavorForPodSets, FindMatchingUntoleratedTaint);
  - Topology-Aware Scheduling decides first (checkPodSetAndFlavorMatchForTAS): a pod set
    asking for a topology level never gets a flavor without a Topology ("Flavor "F" does
    not support TopologyAwareScheduling") nor one whose Topology lacks the level ("... does
    not contain the requested level"); a pod set asking for none never gets a TAS flavor
    ("Flavor "F" supports only TopologyAwareScheduling") unless every flavor of the
    ClusterQueue has a Topology (TAS is then implied and any flavor matches);
  - a flavor whose nodeLabels contradict the pod's GPU-model affinity is skipped
    ("flavor F doesn't match node affinity": NoMatchingFlavor);
  - per resource: more than the queue could ever hold is NoFit (ExceedsMaxQuota); what
    fits in the available quota is Fit (with its borrowing level); otherwise, when
    preemption could help (the request fits nominal quota, reclaim lower in the tree is
    possible, or borrow-while-preempting is allowed), the preemption oracle says Preempt /
    Reclaim / NoCandidates, else NoFit (WaitingForQuota, "insufficient unused quota …
    more needed");
  - a flavor's mode is its worst resource; the search stops at a flavor unless the
    fungibility says to look further (whenCanBorrow, whenCanPreempt: TryNextFlavor), and
    keeps the preferred one (fit > reclaim > preempt, then lower borrowing, by default).

The scan of a group starts at the flavor after the one the workload's previous attempt
stopped at (`start`, from its LastAssignment: `workloads.ScanProgress`) and records where
it stopped (`Assignment.tried`, Kueue's TriedFlavorIdx: -1 once it looked at the last flavor).

Not modelled: tolerations of the trace's own pods (they have none); the TAS placement itself
is `tas.py`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from types import MappingProxyType

from scheduler.admission.flavor_screen import Screen, screen_flavors
from scheduler.admission.flavor_screen import TasFlavors as TasFlavors  # re-exported
from scheduler.admission.flavor_screen import flavor_accepts as flavor_accepts  # re-exported
from scheduler.admission.flavor_screen import tas_flavors as tas_flavors  # re-exported
from scheduler.admission.flavor_screen import topology_mismatch as topology_mismatch  # re-exported
from scheduler.admission.objects import (
    GPU_RESOURCE,
    ClusterQueue,
    FlavorFungibility,
    ResourceFlavor,
    Topology,
)
from scheduler.admission.policies import (
    BorrowWithinCohortPolicy,
    FungibilityPreference,
    PreemptionPolicy,
)
from scheduler.admission.preemption.common import Possibility
from scheduler.admission.quota import FlavorResource, QuotaNode
from scheduler.admission.workloads import POD_SET, AdmissionWorkload, quantity
from scheduler.eventlog.schema import PendingReason

# Most severe first: the reason that explains a failed assignment (reference §4.13).
_SEVERITY = (
    PendingReason.NO_MATCHING_FLAVOR,
    PendingReason.EXCEEDS_MAX_QUOTA,
    PendingReason.WAITING_FOR_QUOTA,
)
# Compared per nomination and per flavor: module constants (see preemption.common).
_NEVER = PreemptionPolicy.NEVER
_NO_BORROWING = BorrowWithinCohortPolicy.NEVER
_PREEMPTION_OVER_BORROWING = FungibilityPreference.PREEMPTION_OVER_BORROWING


class Mode(IntEnum):
    """Kueue's preemptionMode, worst to best."""

    NO_FIT = 0
    NO_CANDIDATES = 1
    PREEMPT = 2
    RECLAIM = 3
    FIT = 4


_FROM_POSSIBILITY = {
    Possibility.NO_CANDIDATES: Mode.NO_CANDIDATES,
    Possibility.PREEMPT: Mode.PREEMPT,
    Possibility.RECLAIM: Mode.RECLAIM,
}


class Granular:
    """A flavor's mode and borrowing level (a value; slotted rather than a dataclass, whose
    generated `__init__` the compiled build interprets: one is made per flavor-resource tried)."""

    __slots__ = ("mode", "borrow")

    def __init__(self, mode: Mode, borrow: int) -> None:
        self.mode = mode
        self.borrow = borrow  # borrowing level: 0 = within the queue's own quota

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Granular) and self.mode == other.mode and self.borrow == other.borrow)

    def __hash__(self) -> int:
        return hash((self.mode, self.borrow))

    def __repr__(self) -> str:
        return f"Granular(mode={self.mode!r}, borrow={self.borrow!r})"


WORST = Granular(Mode.NO_FIT, 1 << 30)
BEST = Granular(Mode.FIT, 0)


def is_preferred(a: Granular, b: Granular, fungibility: FlavorFungibility) -> bool:
    """Kueue's isPreferred: is `a` strictly better than `b`?"""
    if a.mode is Mode.NO_FIT:
        return False
    if b.mode is Mode.NO_FIT:
        return True
    if (a.mode is Mode.NO_CANDIDATES) != (b.mode is Mode.NO_CANDIDATES):
        return b.mode is Mode.NO_CANDIDATES
    # PreemptionOverBorrowing ranks by borrowing level first (preempting within nominal
    # quota beats borrowing); BorrowingOverPreemption and unset rank by preemption mode
    # first (borrowing beats preempting). The mapping of current Kueue (kueue #9464).
    if fungibility.preference is _PREEMPTION_OVER_BORROWING:
        if a.borrow != b.borrow:
            return a.borrow < b.borrow
        return a.mode > b.mode
    if a.mode != b.mode:
        return a.mode > b.mode
    return a.borrow < b.borrow


def should_try_next(mode: Granular, fungibility: FlavorFungibility) -> bool:
    if mode.mode in (Mode.NO_FIT, Mode.NO_CANDIDATES):
        return True
    if mode.mode in (Mode.PREEMPT, Mode.RECLAIM) and fungibility.try_next_when_preempting:
        return True
    return mode.borrow > 0 and fungibility.try_next_when_borrowing


@dataclass(init=False)
class Assignment:
    flavors: dict[str, str]  # resource -> flavor
    usage: dict[FlavorResource, int]
    modes: dict[FlavorResource, Mode]
    borrow: int
    mode: Mode  # FIT, PREEMPT (incl. reclaim / no candidates) or NO_FIT
    reasons: list[str]
    no_fit_reason: PendingReason | None
    pods: int | None  # partial admission: the reduced pod count (None: all of them)
    # Kueue's LastState.LastTriedFlavorIdx: per resource group (index in the ClusterQueue)
    # that got a flavor, the index the scan stopped at, or -1 when it reached the last flavor.
    tried: dict[int, int]

    # Written out: mypyc compiles it; the __init__ the dataclasses module generates runs
    # interpreted, even in the compiled build (`test_compiled_inits.py`).
    def __init__(
        self, flavors: dict[str, str] | None = None, usage: dict[FlavorResource, int] | None = None,
        modes: dict[FlavorResource, Mode] | None = None, borrow: int = 0, mode: Mode = Mode.FIT,
        reasons: list[str] | None = None, no_fit_reason: PendingReason | None = None, pods: int | None = None,
        tried: dict[int, int] | None = None,
    ) -> None:
        self.flavors = {} if flavors is None else flavors
        self.usage = {} if usage is None else usage
        self.modes = {} if modes is None else modes
        self.borrow = borrow
        self.mode = mode
        self.reasons = [] if reasons is None else reasons
        self.no_fit_reason = no_fit_reason
        self.pods = pods
        self.tried = {} if tried is None else tried

    @property
    def pending_flavors(self) -> bool:
        """AssignmentClusterQueueState.PendingFlavors: some group has flavors left to try."""
        return any(index != -1 for index in self.tried.values())

    @property
    def frs_needing_preemption(self) -> frozenset[FlavorResource]:
        return frozenset(fr for fr, mode in self.modes.items() if mode in (Mode.PREEMPT, Mode.RECLAIM, Mode.NO_CANDIDATES))

    @property
    def gpu_flavor(self) -> str | None:
        """The flavor of the GPUs (of the first resource when no GPU is asked for)."""
        return self.flavors.get(GPU_RESOURCE) or next(iter(self.flavors.values()), None)

    def message(self) -> str:
        """Kueue's Assignment.Message(): the sorted reasons of the pod set."""
        if self.mode is Mode.FIT:
            return ""
        return f"couldn't assign flavors to pod set {POD_SET}: {', '.join(sorted(self.reasons))}"


Oracle = Callable[[AdmissionWorkload, QuotaNode, FlavorResource, int], tuple[Possibility, int]]


def assign_flavors(
    wl: AdmissionWorkload,
    queue: QuotaNode,
    spec: ClusterQueue,
    flavors: Mapping[str, ResourceFlavor],
    oracle: Oracle,
    *,
    fair_sharing: bool,
    topologies: Mapping[str, Topology] = MappingProxyType({}),
    plain: bool = False,
    start: tuple[int, ...] = (),
    screen: Screen | None = None,
) -> Assignment:
    """`plain` (`replay --verify`): ask the oracle for every resource of a flavor that does
    not exceed the queue's maximum, as Kueue does, instead of only where its answer counts.
    `start`: per resource group, the first flavor index to try (Kueue's
    LastAssignment.NextFlavorToTryForPodSetResource; a group past the tuple starts at 0).
    `screen`: `flavor_screen.screen_flavors` of this workload and ClusterQueue, kept by the
    caller (computed here when not given)."""
    assignment = Assignment()
    uncovered, groups = screen_flavors(wl, spec, flavors, topologies) if screen is None else screen
    if uncovered is not None:
        assignment.reasons.append(uncovered)
        assignment.mode, assignment.no_fit_reason = Mode.NO_FIT, PendingReason.NO_MATCHING_FLAVOR
        return assignment
    can_preempt_while_borrowing = spec.preemption.borrow_within_cohort is not _NO_BORROWING or (
        fair_sharing and spec.preemption.reclaim_within_cohort is not _NEVER
    )
    fungibility = spec.flavor_fungibility
    # The tree's one key object per (flavor, resource); its method called on the object, not
    # kept bound in a local, which the compiled build would call as a generic Python callable.
    keys = queue.keys
    for group_index, requested, screened in groups:
        best: tuple[str, dict[str, Granular]] | None = None
        best_mode = WORST
        group_reasons: set[PendingReason] = set()
        first = start[group_index] if group_index < len(start) else 0
        attempted = -1
        for flavor_index in range(first, len(screened)):
            attempted = flavor_index
            name, skipped = screened[flavor_index]
            if skipped is not None:  # a Topology, taint or node-affinity mismatch
                assignment.reasons.append(skipped)
                group_reasons.add(PendingReason.NO_MATCHING_FLAVOR)
                continue
            representative = BEST
            per_resource: dict[str, Granular] = {}
            flavor_reason: PendingReason | None = None
            # The quota checks first, the oracle after: a resource that cannot fit even with
            # preemption (over the queue's maximum, or short with no preemption allowed) dooms
            # the flavor; the others still say why they would wait, but the oracle's answer
            # about them cannot change the outcome (`flavor_doomed`).
            frs = [keys.of(name, resource) for resource in requested]
            checks = [_quota_check(queue, fr, wl.requests[fr[1]], may_preempt_while_borrowing=can_preempt_while_borrowing)
                      for fr in frs]
            if plain:  # only a resource over the maximum spares the oracle (the rule before)
                doomed = any(check[2] is PendingReason.EXCEEDS_MAX_QUOTA for check in checks)
            else:
                doomed = flavor_doomed([check[2] for check in checks])
            for fr, (granular, reason, no_fit, asks_oracle) in zip(frs, checks, strict=True):
                resource = fr[1]
                if asks_oracle and not doomed:
                    possibility, borrow_after = oracle(wl, queue, fr, wl.requests[resource])
                    granular = Granular(_FROM_POSSIBILITY[possibility], borrow_after)
                if reason:
                    assignment.reasons.append(reason)
                if no_fit is not None:
                    flavor_reason = _more_severe(flavor_reason, no_fit)
                if is_preferred(representative, granular, fungibility):
                    representative = granular
                per_resource[resource] = granular  # Kueue goes on: every resource states its reason
            if flavor_reason is not None and representative.mode is Mode.NO_FIT:
                group_reasons.add(flavor_reason)
            if not should_try_next(representative, fungibility):
                best, best_mode = (name, per_resource), representative
                break
            if is_preferred(representative, best_mode, fungibility):
                best, best_mode = (name, per_resource), representative
        if best is None:
            assignment.mode = Mode.NO_FIT
            # Per resource group the least severe alternative explains the wait.
            assignment.no_fit_reason = _more_severe(assignment.no_fit_reason, _least_severe(group_reasons))
            return assignment
        # findFlavorForPodSets: TriedFlavorIdx of the chosen flavor's resources is where the
        # scan stopped, -1 when it looked at the last flavor (the next scan starts over).
        assignment.tried[group_index] = -1 if attempted == len(screened) - 1 else attempted
        name, per_resource = best
        for resource, granular in per_resource.items():
            fr = keys.of(name, resource)
            assignment.flavors[resource] = name
            assignment.usage[fr] = wl.requests[resource]
            assignment.modes[fr] = granular.mode
            assignment.borrow = max(assignment.borrow, granular.borrow)
        if best_mode.mode is not Mode.FIT:
            assignment.mode = Mode.PREEMPT
    if assignment.mode is Mode.FIT:
        assignment.reasons.clear()
    return assignment


def flavor_doomed(no_fits: list[PendingReason | None]) -> bool:
    """Some requested resource of a flavor is NoFit whatever preemption could free (over
    the queue's maximum, or short of unused quota where Kueue would not ask the oracle).
    The flavor's representative mode is then NoFit (the worst resource decides), it is
    never the chosen flavor, and its reasons do not carry the oracle's answers: so the
    oracle need not be asked about its other resources (`assign_flavors(plain=True)` asks)."""
    return any(no_fit is not None for no_fit in no_fits)


def _quota_check(queue: QuotaNode, fr: FlavorResource, value: int, *,
                 may_preempt_while_borrowing: bool) -> tuple[Granular, str, PendingReason | None, bool]:
    """Kueue's fitsResourceQuota up to the oracle: (mode, reason, why NoFit, whether the
    oracle is to be asked). Preemption is simulated only when the request fits the queue's
    nominal quota, reclaiming lower in the cohort tree could make room, or the queue may
    preempt while borrowing; a request above nominal does not preempt inside its own
    ClusterQueue otherwise (withinClusterQueue alone is not enough). Where the oracle is to
    be asked, the mode is NoCandidates until it answers."""
    flavor, resource = fr
    most = queue.potential_available(fr)
    if value > most:
        return WORST, (
            f"insufficient quota for {resource} in flavor {flavor}, previously considered podsets requests (0) + "
            f"current podset request ({quantity(resource, value)}) > maximum capacity ({quantity(resource, most)})"
        ), PendingReason.EXCEEDS_MAX_QUOTA, False
    borrow, may_reclaim = queue.borrowing_level(fr, value)
    available = max(0, queue.available(fr))
    if value <= available:
        return Granular(Mode.FIT, borrow), "", None, False
    reason = f"insufficient unused quota for {resource} in flavor {flavor}, {quantity(resource, value - available)} more needed"
    if value <= queue.nominal.get(fr, 0) or may_reclaim or may_preempt_while_borrowing:
        return Granular(Mode.NO_CANDIDATES, borrow), reason, None, True
    return Granular(Mode.NO_FIT, borrow), reason, PendingReason.WAITING_FOR_QUOTA, False


def _more_severe(a: PendingReason | None, b: PendingReason | None) -> PendingReason | None:
    if a is None or b is None:
        return a or b
    return min(a, b, key=_SEVERITY.index)


def _least_severe(reasons: set[PendingReason]) -> PendingReason | None:
    return max(reasons, key=_SEVERITY.index) if reasons else None
