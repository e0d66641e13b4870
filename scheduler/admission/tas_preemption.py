"""TAS-aware preemption: a pod set whose topology does not fit now, but would on the empty
topology, looks for preemption targets instead of waiting.

Sources: kueue pkg/scheduler/flavorassigner/flavorassigner.go (`Assign`, after the flavors
are chosen: `FindTopologyAssignmentsForWorkload` on the snapshot, then `WithSimulateEmpty`,
`updateMode`, `updateModeForTASRequests`), pkg/scheduler/preemption/preemption.go
(`GetTargets` with the workload's TAS requests, `workloadFits`), pkg/scheduler/scheduler.go
(`updateAssignmentIfNeeded` with TASRecomputeAssignmentWithinSchedulingCycle, beta and on
since 0.19: an entry whose topology no longer fits is assigned again in its turn).

  1. An assignment that fits the quota is checked against the topology as it is now (the
     free GPUs, less what admitted TAS workloads not placed yet are assumed to use). When no
     domain holds the pod set, the assignment turns Preempt, with Kueue's not-fit message as
     its reason.
  2. A Preempt assignment (from quota or from step 1) is checked against the empty topology
     (`WithSimulateEmpty`: only pods of workloads outside TAS count). No fit: NoFit, reason
     TopologyPlacementFailed; it waits. A fit: every resource of the TAS flavor becomes
     Preempt (preemption may be needed where unused quota is enough but the nodes are
     fragmented), so candidates are the holders of that flavor.
  3. Targets are found as for quota (classical or fair sharing, `search.VictimSearch`), with
     one more condition on each step: the pod set's topology fits once the removed
     candidates' pods are gone (`TopologyFit.fits_without`). None found: the entry waits
     for quota (WaitingForQuota, Kueue's message), holding its reservable quota for the cycle
     as any preemptor without candidates. A preemptor also holds, until the cycle ends, the
     topology assignment it would get with its targets gone (without targets: the one on the
     empty topology), so that later entries of the cycle do not take those nodes
     (`TopologyFit.reserve`).

The replay runs these steps in the entry's turn of the cycle (the nominated, quota-only
assignment is the input), which is where upstream lands after its in-cycle recompute.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from scheduler.admission.flavor_assignment import Assignment, Mode
from scheduler.admission.holders import Holders
from scheduler.admission.objects import QueueConfig
from scheduler.admission.preemption.common import Target
from scheduler.admission.quota import QuotaNode
from scheduler.admission.tas import FreeGpus, TopologyAssignment, TopologyAssignments
from scheduler.admission.workloads import AdmissionWorkload
from scheduler.eventlog.schema import PendingReason

Held = Callable[[str, Sequence[int]], dict[int, tuple[int, int]]]  # workload id, pods -> node -> (whole, milli)
FindTargets = Callable[..., list[Target]]


class TopologyFit:
    """What Kueue's TAS cache answers about one pod set: does its topology fit now, with some
    workloads gone, or on the empty topology."""

    def __init__(self, config: QueueConfig, assignments: TopologyAssignments, holders: Holders,
                 free_gpus: FreeGpus, gpus_held: Held, unplaced: Callable[[str], bool]) -> None:
        self.config = config
        self.assignments = assignments
        self.holders = holders
        self.free_gpus = free_gpus
        self.gpus_held = gpus_held
        self.unplaced = unplaced  # an admitted TAS workload holds no pods yet (assumed usage)

    def applies(self, wl: AdmissionWorkload, assignment: Assignment) -> bool:
        """The assignment's flavor has a Topology and the pod set asks for a level."""
        flavor = self.config.flavors.get(assignment.gpu_flavor or "")
        spec = wl.run.original_spec
        return (flavor is not None and flavor.topology_name is not None
                and (spec.topology_required or spec.topology_preferred) is not None)

    def failure(self, wl: AdmissionWorkload, assignment: Assignment, gone: Sequence[AdmissionWorkload] = (), *,
                empty: bool = False) -> str | None:
        """None when a domain holds the pod set with `gone` removed (or on the empty
        topology), else Kueue's not-fit message."""
        found = self._find(wl, assignment, gone, empty)
        return found if isinstance(found, str) else None

    def reserve(self, wl: AdmissionWorkload, assignment: Assignment, targets: Sequence[Target]) -> None:
        """A TAS preemptor holds, for the rest of the cycle, the assignment it would get with
        its targets gone, or without targets the one on the empty topology (scheduler.go
        updateAssignmentForTAS; AddUsage in processEntry and reserveCapacityForUnreclaimablePreempt)."""
        if not self.applies(wl, assignment):
            return
        found = self._find(wl, assignment, [t.workload for t in targets], empty=not targets)
        if found is not None and not isinstance(found, str):
            self.assignments.reserve_for_cycle(found, wl.run.original_spec.gpu_milli_per_pod)

    def end_cycle(self) -> None:
        self.assignments.end_cycle()

    def fits_without(self, wl: AdmissionWorkload, assignment: Assignment) -> Callable[[list[AdmissionWorkload]], bool]:
        """The TAS condition of Kueue's workloadFits for the victim search."""
        return lambda gone: self.failure(wl, assignment, gone) is None

    def _find(self, wl: AdmissionWorkload, assignment: Assignment, gone: Sequence[AdmissionWorkload],
              empty: bool) -> TopologyAssignment | str | None:
        flavor = self.config.flavors.get(assignment.gpu_flavor or "")
        spec = wl.run.original_spec
        if assignment.pods is not None:  # partial admission: the admitted count
            spec = replace(spec, pods=assignment.pods)
        freed = self._held(self._tas_holders(flavor.name if flavor else "") if empty else gone)
        return self.assignments.find(spec, flavor, self.config.topologies, self.free_gpus, unplaced=self.unplaced,
                                     freed=freed, gone={w.name for w in gone}, empty=empty)

    def _tas_holders(self, flavor: str) -> list[AdmissionWorkload]:
        """Workloads holding quota of the TAS flavor: their pods are Kueue's TAS usage."""
        return [wl for holders in self.holders.by_queue.values() for wl in holders.values()
                if flavor in wl.flavors.values()]

    def _held(self, workloads: Sequence[AdmissionWorkload]) -> dict[int, tuple[int, int]]:
        freed: dict[int, tuple[int, int]] = {}
        for wl in workloads:
            for node, (whole, milli) in self.gpus_held(wl.name, wl.run.holding).items():
                before = freed.get(node, (0, 0))
                freed[node] = (before[0] + whole, before[1] + milli)
        return freed


def topology_nomination(fit: TopologyFit, wl: AdmissionWorkload, node: QuotaNode, assignment: Assignment,
                        find_targets: FindTargets) -> tuple[Assignment, list[Target]] | None:
    """Steps 1-3 for a TAS pod set: None when the assignment fits the quota and the topology
    now (nothing to change), else the assignment (Preempt or NoFit) and its targets."""
    if assignment.mode is Mode.NO_FIT:
        return None
    if assignment.mode is Mode.FIT:
        now = fit.failure(wl, assignment)
        if now is None:
            return None
        assignment = replace(assignment, mode=Mode.PREEMPT, reasons=[now])
    if fit.failure(wl, assignment, empty=True) is not None:
        return replace(assignment, mode=Mode.NO_FIT, no_fit_reason=PendingReason.TOPOLOGY_PLACEMENT_FAILED), []
    tas_flavor = assignment.gpu_flavor
    modes = {fr: Mode.PREEMPT if fr[0] == tas_flavor else mode for fr, mode in assignment.modes.items()}
    assignment = replace(assignment, modes=modes)
    return assignment, find_targets(wl, node, assignment.usage, assignment.frs_needing_preemption,
                                    fit.fits_without(wl, assignment))

