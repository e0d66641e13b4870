"""The GPU shape of a queued entity: everything that decides its attempt except CPU and memory.

The scheduling queue (`scheduler/queue.py`) parks a whole shape when its first entity fails
for GPU reasons alone: every entity of the same shape, tried on the same cluster state,
would fail the same way until GPUs are released. That is only sound when the shape holds
every input of an attempt that GPU placement reads, so the shape is built from the same
fields as the pod request (`workload_run.pod_request`) and the run's gang state, in one
place. tests/scheduler/test_shape.py checks the promise as a property: two runs with equal
shapes and everything else drawn at random fail alike on random cluster states.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.framework.interface import Unit
from scheduler.model.cluster import NO_SELECTOR, NodeSelector
from scheduler.workload_run import GROUP, WorkloadRun


@dataclass(frozen=True, slots=True)
class GpuShape:
    unit: Unit
    milli: int  # milli-GPUs per pod
    models: tuple[str, ...]  # accepted GPU models (empty: any)
    priority: int  # decides preemption
    needed: int = 1  # pods that must fit in this attempt (pod groups)
    pending: int = 1  # pods left to place (pod groups)
    topology_required: str | None = None
    topology_preferred: str | None = None
    parent_group: str | None = None  # CompositePodGroup
    selector: NodeSelector = NO_SELECTOR  # nodeLabels and tolerations (a Kueue flavor, a TAS domain)

    @staticmethod
    def of(run: WorkloadRun, pod: int) -> GpuShape:
        """The shape of one queued entity: pod `pod` of `run`, or the whole group (GROUP)."""
        request, spec = run.request, run.spec
        if pod != GROUP:
            return GpuShape(Unit.POD, request.milli, request.models, spec.priority, selector=request.selector)
        return GpuShape(Unit.POD_GROUP, request.milli, request.models, spec.priority, run.pods_needed,
                        len(run.pending), spec.topology_required, spec.topology_preferred, spec.parent_group,
                        request.selector)
