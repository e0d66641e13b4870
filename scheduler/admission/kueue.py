"""The Kueue admission layer of a replay (the `AdmissionLayer` of `scheduler/runner.py`).

Kueue admits (quota), then the gang scheduler places: a workload reaches placement only
through `Replay.admit`, with its pods narrowed to the flavor it was given (Kueue injects
the flavor's nodeLabels and tolerations into the pods: `inject_flavor`). A workload admitted but not placeable
keeps its quota; its timeline shows Kueue's `admitted` row and the placement layer's reasons.

Life cycle of a workload here:

    submit ─▶ no queue name: not Kueue's (straight to placement, as Kueue ignores it)
           ─▶ LocalQueue missing: pending Misconfigured "LocalQueue X doesn't exist", forever
              (Kueue keeps such a workload pending; it is not rejected)
           ─▶ queued in its ClusterQueue ─ admission cycles ─▶ admitted (quota held)
    admitted ─▶ finished: quota released
             ─▶ preempted by Kueue: evicted; quota held for `eviction_grace_s` while the
                pods terminate, then released and the workload queued again
             ─▶ PodsReady timeout: evicted, quota released, requeued after backoff (or
                deactivated past backoffLimitCount)
             ─▶ pods lost in the placement layer (kube-scheduler preemption, Permit
                rejection, rendezvous time-out): still admitted, quota kept, the PodsReady
                timer still counting from admission (or, once it was ready, the
                recoveryTimeout timer counting from when the pods stopped being ready:
                for a preemption, when they were marked for deletion); placement tries
                again

Admission cycles (`admitter.Admitter`) run on the simulated clock in `Phase.ADMIT`, as
`cycles.AdmissionCycles` schedules them: at an instant when something may have changed, and
again at the same instant while cycles make progress; released capacity requeues the
cohort tree's inadmissible workloads 1 s later (Kueue's requeue batch period).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from scheduler.admission.admission_fair_sharing import admission_fair_sharing
from scheduler.admission.admitter import Admitter
from scheduler.admission.cycles import AdmissionCycles
from scheduler.admission.flavor_assignment import Assignment
from scheduler.admission.holders import Holders
from scheduler.admission.nomination_cache import NominationCheck
from scheduler.admission.objects import QueueConfig, ResourceFlavor
from scheduler.admission.placement_options import PlacementOptionsOf
from scheduler.admission.preemption.classical import ClassicalPreemption
from scheduler.admission.preemption.common import PreemptionReason
from scheduler.admission.queues import PendingQueue
from scheduler.admission.quota import FlavorResource, QuotaNode, QuotaTree
from scheduler.admission.tas import TopologyAssignments
from scheduler.admission.tas_preemption import TopologyFit
from scheduler.admission.wait_for_pods_ready import (
    PODS_READY_TIMEOUT,
    AfterTimeout,
    PodsReadyTracker,
)
from scheduler.admission.workloads import (
    AdmissionWorkload,
    ShapeTable,
    State,
    admission_workload,
    quantity,
)
from scheduler.eventlog.schema import PendingReason
from scheduler.model.cluster import NO_SELECTOR
from scheduler.sim import Phase
from scheduler.verify import ClockedVerifier, Verifier

if TYPE_CHECKING:
    from scheduler.admission.port import ReplayPort
    from scheduler.workload_run import WorkloadRun

EVICTION_GRACE_S = 30.0  # Kubernetes' default terminationGracePeriodSeconds
BORROWING = "Borrowing"


def kueue_admission(config: QueueConfig, *, eviction_grace_s: float = EVICTION_GRACE_S,
                    verifier: Verifier | None = None) -> Callable[[ReplayPort], KueueAdmission]:
    """The `admission_factory` for `Replay` (`verifier`: `replay --verify`)."""
    return lambda replay: KueueAdmission(replay, config, eviction_grace_s=eviction_grace_s, verifier=verifier)


class KueueAdmission(PlacementOptionsOf):
    """Kueue's controllers and cache for one replay: workloads' life cycle, queues, quota
    and who holds it. One admission cycle is the `Admitter`'s; it acts through this class's
    `AdmissionPort` methods (admit, evict, say_pending, admission_blocked)."""

    def __init__(self, replay: ReplayPort, config: QueueConfig, *, eviction_grace_s: float = EVICTION_GRACE_S,
                 verifier: Verifier | None = None) -> None:
        self.replay = replay
        self.env = replay.env
        self.config = config
        self.eviction_grace_s = eviction_grace_s
        self.tree = QuotaTree(config)
        self.fair_usage = admission_fair_sharing(config, lambda: self.env.now)  # admission fair sharing's ledger
        self.queues = {name: PendingQueue(name, cq.queueing_strategy, self.fair_usage.ordering(name))
                       for name, cq in config.cluster_queues.items()}
        # Workloads holding quota per ClusterQueue (admitted, or evicted and terminating).
        self.holders = Holders(config.cluster_queues)
        self.pods_ready_tracker = PodsReadyTracker(self.env, config.configuration.wait_for_pods_ready,
                                                   lambda wl: _pods_ready_timeout(self, wl), self.request_cycle)
        self.admitter = Admitter(config, self.tree, self.queues, self.holders, port=self)
        self.verify = _attach_verifier(self, verifier) if verifier is not None else None
        self.workloads: dict[str, AdmissionWorkload] = {}
        self.unexplained: dict[str, AdmissionWorkload] = {}  # queued without a reason row yet
        self.preempting: set[str] = set()  # victims Kueue evicted, until the replay releases them
        self.timed_out: set[str] = set()
        self.tas = TopologyAssignments()  # Kueue TAS: the domain of each admitted TAS workload
        self.uses_tas = any(flavor.topology_name is not None for flavor in config.flavors.values())
        self.admitter.topology = _topology_fit(self) if self.uses_tas else None
        self._local_queues: dict[str, tuple[str, str] | None] = {}  # see `_local_queue`
        self.shapes = ShapeTable()  # the workloads' interned scheduling-equivalence hashes
        self.cycles = AdmissionCycles(self.env, self.admitter, self.queues, lambda: _explain_unevaluated(self),
                                      lambda: _admission_idle(self), self.unexplained)
        self.cycles.check = self.verify

    @property
    def now(self) -> float:
        return self.env.now

    def commit(self, usage: Iterable[FlavorResource]) -> None:
        """Quota or holders of these flavor-resources changed for real: cached nominations
        that read them are stale."""
        self.tree.commit()
        self.admitter.versions.bump(usage)

    # -- the AdmissionLayer protocol -----------------------------------------------------

    def submit(self, run: WorkloadRun) -> None:
        wl = self.workloads.get(run.spec.workload_id) or self._track(run)
        if wl.state is State.EVICTING:
            wl.resubmitted = True  # queued again once its pods are gone (`_eviction_done`)
            return
        if wl.state is State.DEACTIVATED:
            self.replay.reject(run, PendingReason.DEACTIVATED, self.pods_ready_tracker.deactivated_message(wl))
            return
        if wl.state is State.UNMANAGED:
            self.replay.pass_through(run)
            return
        if wl.state is State.MISCONFIGURED:
            self.replay.pending(run, PendingReason.MISCONFIGURED, f"LocalQueue {run.spec.queue} doesn't exist")
            return
        if wl.state is State.BACKOFF:
            self.replay.pending(run, PendingReason.PODS_READY_TIMEOUT, self.pods_ready_tracker.backoff_message(wl))
            self.env.at(wl.requeue_at_s, Phase.ADMIT, lambda: _backoff_finished(self, wl))
            return
        self.enqueue(wl)

    def release(self, run: WorkloadRun) -> None:
        wl = self.workloads.get(run.spec.workload_id)
        if wl is None or wl.state is not State.ADMITTED:
            return
        self.pods_ready_tracker.released(wl)
        evicted_by_kueue = wl.name in self.preempting
        self.preempting.discard(wl.name)
        if evicted_by_kueue and not run.done:
            # Kueue frees the quota when the job's pods are gone, not at the eviction.
            wl.state = State.EVICTING
            self.env.at(self.now + self.eviction_grace_s, Phase.FINISH, lambda: self._eviction_done(wl))
            return
        self._free(wl)
        if run.done:
            wl.state = State.FINISHED
        elif wl.name in self.timed_out:
            self.timed_out.discard(wl.name)
            outcome = self.pods_ready_tracker.after_timeout(wl)
            wl.state = State.BACKOFF if outcome is AfterTimeout.BACKOFF else State.DEACTIVATED
        else:
            wl.state = State.QUEUED

    def requeue(self, run: WorkloadRun) -> bool:
        """Every pod of `run` is gone and it did not finish. Kueue gives quota back only for
        its own evictions (preemption, PodsReady timeout; workload_controller.go): after a
        kube-level failure the job's pods are recreated under the same admission, so the
        workload stays admitted and placement tries again (True)."""
        wl = self.workloads.get(run.spec.workload_id)
        if wl is None or wl.state is State.UNMANAGED:
            return True
        if _kept_through_pod_loss(self, wl):
            self.pods_ready_tracker.lost(wl)
            return True
        self.release(run)
        self.submit(run)
        return False

    def pods_terminating(self, run: WorkloadRun) -> None:
        """Its pods were marked for deletion: kube-level, the recovery timer starts now."""
        if (wl := self.workloads.get(run.spec.workload_id)) is not None and _kept_through_pod_loss(self, wl):
            self.pods_ready_tracker.lost(wl)

    def pods_ready(self, run: WorkloadRun) -> None:
        wl = self.workloads.get(run.spec.workload_id)
        if wl is not None and wl.state is State.ADMITTED:
            self.pods_ready_tracker.ready(wl)
            self.admitter.scan.workloads_changed(wl.cluster_queue or "")  # its PodsReady condition

    # -- queueing ------------------------------------------------------------------------

    def _track(self, run: WorkloadRun) -> AdmissionWorkload:
        spec = run.spec
        local_queue = self._local_queue(spec.queue) if spec.queue else None
        wl = admission_workload(run, local_queue[0] if local_queue else None,
                                local_queue[1] if local_queue else None, uses_tas=self.uses_tas, shapes=self.shapes)
        if not spec.queue:
            wl.state = State.UNMANAGED
        elif local_queue is None:
            wl.state = State.MISCONFIGURED
        else:
            run.cluster_queue = wl.cluster_queue
        self.workloads[wl.name] = wl
        return wl

    def _local_queue(self, queue: str) -> tuple[str, str] | None:
        """(LocalQueue key, ClusterQueue) of a trace row's queue name, resolved once per name."""
        if queue not in self._local_queues:
            found = self.config.local_queue(queue)
            self._local_queues[queue] = (found.key, found.cluster_queue) if found is not None else None
        return self._local_queues[queue]

    def enqueue(self, wl: AdmissionWorkload) -> None:
        wl.state = State.QUEUED
        wl.queued_s = self.now
        wl.explained = False
        self.queues[wl.cluster_queue or ""].push(wl)
        self.unexplained[wl.name] = wl
        self.request_cycle()

    def queue_of(self, wl: AdmissionWorkload) -> PendingQueue:
        return self.queues[wl.cluster_queue or ""]

    def node_of(self, wl: AdmissionWorkload) -> QuotaNode:
        return self.tree.queue(wl.cluster_queue or "")

    # -- admission cycles ------------------------------------------------------------------

    def request_cycle(self, at: float | None = None) -> None:
        """A cycle now (or at `at`), unless one is already due then."""
        self.cycles.request(at)

    # -- the admitter's AdmissionPort ---------------------------------------------------------

    def admission_blocked(self) -> bool:
        return self.pods_ready_tracker.blocking

    def place_topology(self, wl: AdmissionWorkload, assignment: Assignment) -> str | None:
        flavor = self.config.flavors.get(assignment.gpu_flavor or "")
        if flavor is None or flavor.topology_name is None:
            return None  # no Topology: `tas.place` records nothing and needs no domain (asked per admission)
        return self.tas.place(wl.name, wl.run.original_spec, flavor, self.config.topologies, self.replay.free_gpus,
                              unplaced=lambda name: not self.workloads[name].run.holding)

    def say_pending(self, wl: AdmissionWorkload, reason: PendingReason, message: str) -> None:
        wl.explained = True
        self.unexplained.pop(wl.name, None)
        if self.replay.pending_is_recent(wl.run, reason):
            return
        position, total = self.queue_of(wl).position(wl)
        self.replay.pending(wl.run, reason, f"{message}; position {position} of {total} in ClusterQueue {wl.cluster_queue}",
                            queue_position=position, queue_length=total)

    def admit(self, wl: AdmissionWorkload, assignment: Assignment) -> None:
        node = self.node_of(wl)
        self.queue_of(wl).remove(wl)
        self.unexplained.pop(wl.name, None)
        self.tree.add(node, assignment.usage)
        self.commit(assignment.usage)
        self.fair_usage.admitted(wl, assignment.usage)  # entry penalty, settled at once
        wl.state, wl.usage, wl.flavors = State.ADMITTED, dict(assignment.usage), dict(assignment.flavors)
        wl.admitted_s, wl.borrowing = self.now, assignment.borrow > 0
        self.holders.add(node.name, wl)
        self.admitter.scan.workloads_changed(node.name)  # the admitted Workload's update reaches the cache
        self.pods_ready_tracker.admitted(wl)
        flavor = assignment.gpu_flavor
        if flavor is not None:
            inject_flavor(self.replay, wl.run, self.config.flavors[flavor], self.tas.domain_labels(wl.name))
        message = _admitted_message(self.now - wl.queued_s, wl, node, assignment)
        self.replay.admit(wl.run, node.name, reason=BORROWING if wl.borrowing else None, message=message, flavor=flavor,
                          pods=assignment.pods)

    def evict(self, victim: AdmissionWorkload, preemptor: AdmissionWorkload, reason: PreemptionReason) -> None:
        """Preempt `victim` (quota-only, the whole workload) to make room for `preemptor`;
        not again while it terminates (`_eviction_changes_nothing`)."""
        if _eviction_changes_nothing(self, victim):
            return
        self.preempting.add(victim.name)
        self.holders.mark_evicting(victim)
        self.admitter.scan.workloads_changed(victim.cluster_queue or "")  # its Evicted condition
        self.commit(victim.usage)  # an evicted holder is a different preemption candidate
        message = (
            f"Preempted to accommodate a workload (UID: {preemptor.name}, JobUID: {preemptor.name}) due to "
            f"{reason.human}; preemptor path: {self.node_of(preemptor).path()}; "
            f"preemptee path: {self.node_of(victim).path()}"
        )
        self.replay.evict(victim.run, preemptor.run, message=message)

    # -- quota coming back -------------------------------------------------------------------

    def _free(self, wl: AdmissionWorkload) -> None:
        node = self.node_of(wl)
        self.tree.remove(node, wl.usage)
        self.commit(wl.usage)
        self.holders.remove(node.name, wl)
        self.admitter.scan.workloads_changed(node.name)
        self.tas.release(wl.name)
        self.fair_usage.released(wl)
        wl.usage, wl.flavors = {}, {}
        self.replay.narrow(wl.run, None)
        self.cycles.schedule_requeue(node)
        self.request_cycle()

    def _eviction_done(self, wl: AdmissionWorkload) -> None:
        self._free(wl)
        wl.state = State.QUEUED
        if wl.resubmitted:
            wl.resubmitted = False
            self.enqueue(wl)


def _pods_ready_timeout(admission: KueueAdmission, wl: AdmissionWorkload) -> None:
    if wl.state is not State.ADMITTED:
        return
    admission.timed_out.add(wl.name)
    admission.admitter.scan.workloads_changed(wl.cluster_queue or "")  # its Evicted condition
    admission.replay.expire(wl.run, PODS_READY_TIMEOUT, admission.pods_ready_tracker.timeout_message(wl))


def _kept_through_pod_loss(admission: KueueAdmission, wl: AdmissionWorkload) -> bool:
    """Its pods are lost (or marked for deletion) while it is admitted and Kueue did not
    evict it (preemption, PodsReady timeout): a kube-level failure, the quota is kept. The
    Job's ready count drops as soon as a pod is marked for deletion (terminating pods are
    not active), so a PodsReady workload turns WaitForRecovery then."""
    return wl.state is State.ADMITTED and wl.name not in admission.preempting and wl.name not in admission.timed_out


def _backoff_finished(kueue: KueueAdmission, wl: AdmissionWorkload) -> None:
    if wl.state is State.BACKOFF:  # queued again once its PodsReady backoff is over
        kueue.enqueue(wl)


def _admission_idle(admission: KueueAdmission) -> bool:
    """A cycle now would do nothing: no ClusterQueue has a head, nobody waits to be explained."""
    return not admission.unexplained and not any(queue.has_heads for queue in admission.queues.values())


def _explain_unevaluated(admission: KueueAdmission) -> None:
    """Workloads still waiting their turn say so, with their place in the queue."""
    if not admission.unexplained:  # the common end of a run of cycles: everybody heard why
        return
    for wl in list(admission.unexplained.values()):
        if wl.state is State.QUEUED and not wl.explained:
            admission.say_pending(wl, PendingReason.PENDING_EVALUATION, "Workload is pending evaluation in the scheduling queue")
    admission.unexplained.clear()


def _attach_verifier(admission: KueueAdmission, verifier: Verifier) -> ClockedVerifier:
    """`replay --verify`: the admitter's caches and the preemption shortcuts check themselves."""
    def clock() -> float:
        return admission.env.now

    admission.admitter.nominator.check = NominationCheck(verifier, clock)
    clocked = ClockedVerifier(verifier, clock)
    admission.admitter.preemptor.check = clocked
    admission.admitter.memo.check = clocked
    admission.admitter.nominator.screens.check = clocked
    if isinstance(admission.admitter.preemptor.strategy, ClassicalPreemption):
        admission.admitter.preemptor.strategy.check = clocked
    for queue in admission.queues.values():
        if queue.fair_usage is not None:  # admission fair sharing's rebuilt heap
            queue.check = clocked
    return clocked


def _topology_fit(admission: KueueAdmission) -> TopologyFit:
    """What the admitter asks Kueue's TAS cache (TAS-aware preemption, `tas_preemption`)."""
    return TopologyFit(admission.config, admission.tas, admission.holders, admission.replay.free_gpus,
                       admission.replay.gpus_held, lambda name: not admission.workloads[name].run.holding)


def _already_evicted(admission: KueueAdmission, victim: AdmissionWorkload) -> bool:
    return victim.name in admission.preempting


def _eviction_changes_nothing(admission: KueueAdmission, victim: AdmissionWorkload) -> bool:
    """A victim Kueue already evicted, whose pods are still terminating: evicting it again
    would change nothing (the replay ignores a second eviction) but the versions of its
    flavor-resources, throwing away every cached nomination that read them."""
    if not _already_evicted(admission, victim):
        return False
    if admission.verify is not None:  # the eviction it skips would be a no-op
        admission.verify.same("repeated eviction of a terminating victim skipped", True,
                              victim.run.terminating and victim.name in admission.holders.evicting, victim.name)
    return True


def inject_flavor(replay: ReplayPort, run: WorkloadRun, flavor: ResourceFlavor,
                  domain: dict[str, str] | None = None) -> None:
    """Kueue injects the flavor's nodeLabels (as a nodeSelector) and tolerations into the
    pods (pkg/podset FromAssignment, PodSetInfo.Merge), and with TAS the labels of the
    assigned topology domain (pkg/controller/tas, the topology scheduling gate):
    placement sees the workload as asking for the flavor's GPU model on nodes with all
    those labels, tolerating what the flavor tolerates, until it gives the quota back."""
    selector = flavor.selector if not domain else flavor.selector.with_labels(domain)
    product = flavor.gpu_product
    if product is None and selector == NO_SELECTOR and domain is None:
        return
    replay.narrow(run, (product,) if product is not None else run.original_spec.gpu_models, selector,
                  topology_assigned=domain is not None)


def _admitted_message(waited_s: float, wl: AdmissionWorkload, node: QuotaNode, assignment: Assignment) -> str:
    """Kueue's QuotaReserved message, with what is borrowed and a partial admission's count."""
    # The float formatted on its own: with only plain fields the compiled build joins the
    # f-string natively, where a format spec in it makes the whole template go to `str.format`.
    message = f"Quota reserved in ClusterQueue {node.name}, wait time since queued was {format(waited_s, '.0f')}s"
    borrowed = [
        f"{quantity(fr[1], node.usage[fr] - node.subtree.get(fr, 0))} {fr[1]} in flavor {fr[0]}"
        for fr in assignment.usage if node.usage[fr] > node.subtree.get(fr, 0)
    ]
    if borrowed:
        message += f"; borrowing {', '.join(borrowed)} from cohort {node.parent.name if node.parent else ''}"
    if assignment.pods is not None:
        message += f"; partially admitted: {assignment.pods} of {wl.pods} pods"
    return message
