"""What the admission layer may do to the replay: its one seam into placement.

The Kueue layer (`kueue.py`) never reaches into the replay's internals; it is handed an
object with these methods (the replay) and talks to placement through them alone. The
replay calls the layer back through its own small protocol (`AdmissionLayer` in
`scheduler/runner.py`: submit, release, pods_ready).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from scheduler.eventlog.schema import PendingReason
from scheduler.model.cluster import NO_SELECTOR, Node, NodeSelector
from scheduler.sim import Environment
from scheduler.workload_run import WorkloadRun


class ReplayPort(Protocol):
    """The replay as the admission layer sees it.

    `env` is the simulated clock; the layer schedules its own admission cycles on it in
    `Phase.ADMIT` and nothing else. Every method writes the event rows its decision implies.
    """

    @property
    def env(self) -> Environment: ...

    def admit(self, run: WorkloadRun, cluster_queue: str, *, reason: str | None = None,
              message: str | None = None, flavor: str | None = None, pods: int | None = None) -> None:
        """`run` holds quota now: an `admitted` row, then it queues for placement with
        `pods` pods (partial admission; None: all of the trace's)."""

    def narrow(self, run: WorkloadRun, gpu_models: tuple[str, ...] | None, selector: NodeSelector = NO_SELECTOR,
               *, topology_assigned: bool = False) -> None:
        """Placement may use only nodes of `gpu_models` that `selector` admits for `run`
        (Kueue injects the flavor's nodeLabels and tolerations into its pods, and a TAS
        domain's labels: then `topology_assigned`, and the trace's topology columns are
        Kueue's, not the placement plugin's); None gives back the trace's own choice."""

    def free_gpus(self) -> tuple[Sequence[Node], Sequence[int], Sequence[int]]:
        """The nodes, and per node its whole free GPUs and its free milli-GPUs now (what
        Kueue's TAS cache knows of the nodes and the pods on them)."""

    def gpus_held(self, workload_id: str, pods: Sequence[int]) -> dict[int, tuple[int, int]]:
        """(whole devices, milli-GPUs) per node index held by these pods of the workload."""

    def pass_through(self, run: WorkloadRun) -> None:
        """`run` is not the layer's (no queue name): it queues for placement at once."""

    def pending(self, run: WorkloadRun, reason: PendingReason, message: str, *,
                queue_position: int | None = None, queue_length: int | None = None) -> None:
        """Why `run` waits for admission (a `pending` row, throttled like every one)."""

    def pending_is_recent(self, run: WorkloadRun, reason: PendingReason) -> bool:
        """A `pending` row with this reason would be dropped now: skip composing it."""

    def evict(self, run: WorkloadRun, preemptor: WorkloadRun, *, message: str | None = None) -> None:
        """Preempt every pod of `run` for `preemptor` (Kueue preemption)."""

    def expire(self, run: WorkloadRun, reason: str, message: str) -> None:
        """The layer stopped waiting for `run`'s pods (waitForPodsReady): release and requeue."""

    def reject(self, run: WorkloadRun, reason: PendingReason, message: str) -> None:
        """`run` will never be admitted again (deactivated): a `rejected` row."""
