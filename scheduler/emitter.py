"""Event rows of a replay: every state transition becomes one row of the event log.

The emitter stamps each row with the simulated time and the workload's identity (tenant,
queue, ClusterQueue, priority, GPU model) and keeps the one piece of policy about rows: a
`pending` row that only repeats the last one is not written. Nothing else in the replay
talks to the `EventLogWriter`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.eventlog.schema import EventType, PendingReason
from scheduler.eventlog.writer import EventFields, EventLogWriter
from scheduler.model import Node, Workload
from scheduler.sim import Environment
from scheduler.workload_run import WorkloadRun

if TYPE_CHECKING:
    from scheduler.dra.allocation_log import DeviceAllocationLog

# Repeating the same "why pending" sentence on every retry would bury the timeline; a
# changed reason is always written, a changed message at most this often.
PENDING_MESSAGE_REFRESH_S = 300.0


class EventEmitter:
    def __init__(self, writer: EventLogWriter, env: Environment, nodes: tuple[Node, ...]) -> None:
        self.writer = writer
        self.env = env
        self.nodes = nodes
        # Through DRA, a pod's GPUs are its devices' share (`ClusterState.dra_gpus`), not the row's count.
        self.device_gpus: dict[tuple[str, int], float] | None = None
        # Through DRA, which devices each placed pod took (device_allocations.parquet).
        self.device_allocations: DeviceAllocationLog | None = None

    def emit(self, run: WorkloadRun, event: EventType, *, reason: str | None = None, message: str | None = None,
             flavor: str | None = None, preemptor: str | None = None, queue_position: int | None = None,
             queue_length: int | None = None) -> None:
        """A row about the workload as a whole (no pod, no node)."""
        spec = run.spec
        self.writer.row(self.env.now, event, spec.workload_id, None, None, None, spec.gpu_model_label, spec.tenant,
                        spec.queue, run.cluster_queue, spec.priority, reason, message, flavor, preemptor,
                        queue_position, queue_length)

    def emit_pod(self, run: WorkloadRun, event: EventType, pod: int, node_index: int, *, reason: str | None = None,
                 message: str | None = None, preemptor: str | None = None) -> None:
        """A row about one pod on one node: its GPUs and the node's GPU model."""
        node = self.nodes[node_index]
        spec = run.spec
        gpus = spec.gpus_per_pod
        if self.device_gpus is not None:
            gpus = self.device_gpus.get((spec.workload_id, pod), gpus)
        if self.device_allocations is not None and event in (EventType.RESERVED, EventType.STARTED):
            # the row about to be written is seq `writer.rows`
            self.device_allocations.record(self.writer.rows, self.env.now, event.value, spec.workload_id,
                                           pod, node_index)
        self.writer.row(self.env.now, event, spec.workload_id, pod, node.name, gpus, node.gpu_model, spec.tenant,
                        spec.queue, run.cluster_queue, spec.priority, reason, message, None, preemptor)

    def pending_is_recent(self, run: WorkloadRun, reason: PendingReason) -> bool:
        """True when a `pending` row with this reason would be dropped whatever its message
        (the same reason was said less than PENDING_MESSAGE_REFRESH_S ago): callers can skip
        composing a message nobody will read."""
        last = run.last_pending
        return last is not None and last[0] == reason.value and self.env.now - last[2] < PENDING_MESSAGE_REFRESH_S

    def pending(self, run: WorkloadRun, reason: PendingReason, message: str, *,
                queue_position: int | None = None, queue_length: int | None = None) -> None:
        """A `pending` row, unless it would repeat the last one: same reason and the same
        message, or the same reason said less than PENDING_MESSAGE_REFRESH_S ago.
        `queue_position` / `queue_length`: the workload's place in its ClusterQueue (Kueue)."""
        last = run.last_pending
        now = self.env.now
        if last is not None and last[0] == reason.value and (
            last[1] == message or now - last[2] < PENDING_MESSAGE_REFRESH_S
        ):
            return
        run.last_pending = (reason.value, message, now)
        self.emit(run, EventType.PENDING, reason=reason.value, message=message,
                  queue_position=queue_position, queue_length=queue_length)

    def never_runs(self, workload: Workload, reason: str, message: str) -> None:
        """An input row that can never run on this cluster: `submitted`, then `rejected`."""
        submitted = EventFields(gpu_model=workload.gpu_model_label, tenant=workload.tenant, queue=workload.queue,
                                priority=workload.priority)
        rejected = EventFields(gpu_model=workload.gpu_model_label, tenant=workload.tenant, queue=workload.queue,
                               priority=workload.priority, reason=reason, message=message)
        self.writer.emit(self.env.now, EventType.SUBMITTED, workload.workload_id, **submitted)
        self.writer.emit(self.env.now, EventType.REJECTED, workload.workload_id, **rejected)
