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

from scheduler.framework.interface import Unit
from scheduler.model.cluster import NO_SELECTOR, NodeSelector
from scheduler.workload_run import GROUP, WorkloadRun


class GpuShape:
    """A value (equal fields, equal shapes) and a dict key whose hash is computed once: the
    queue files and finds every entity by its shape."""

    __slots__ = ("unit", "milli", "models", "priority", "needed", "pending", "topology_required",
                 "topology_preferred", "parent_group", "selector", "claims", "_key", "_hash")

    def __init__(self, unit: Unit, milli: int, models: tuple[str, ...], priority: int, needed: int = 1,
                 pending: int = 1, topology_required: str | None = None, topology_preferred: str | None = None,
                 parent_group: str | None = None, selector: NodeSelector = NO_SELECTOR,
                 claims: object = None) -> None:
        self.unit = unit
        self.milli = milli  # milli-GPUs per pod
        self.models = models  # accepted GPU models (empty: any)
        self.priority = priority  # decides preemption
        self.needed = needed  # pods that must fit in this attempt (pod groups)
        self.pending = pending  # pods left to place (pod groups)
        self.topology_required = topology_required
        self.topology_preferred = topology_preferred
        self.parent_group = parent_group  # CompositePodGroup
        self.selector = selector  # nodeLabels and tolerations (a Kueue flavor, a TAS domain)
        self.claims = claims  # DRA claims (`PodClaims`; None: a plain count)
        self._key = (unit, milli, models, priority, needed, pending, topology_required, topology_preferred,
                     parent_group, selector, claims)
        self._hash = hash(self._key)

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, GpuShape) and self._hash == other._hash and self._key == other._key)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        fields = ("unit", "milli", "models", "priority", "needed", "pending", "topology_required",
                  "topology_preferred", "parent_group", "selector", "claims")
        return "GpuShape(" + ", ".join(f"{name}={value!r}" for name, value in zip(fields, self._key, strict=True)) + ")"

    @staticmethod
    def of(run: WorkloadRun, pod: int) -> GpuShape:
        """The shape of one queued entity: pod `pod` of `run`, or the whole group (GROUP)."""
        request, spec = run.request, run.spec
        if pod != GROUP:
            return GpuShape(Unit.POD, request.milli, request.models, spec.priority, selector=request.selector,
                            claims=request.claims)
        return GpuShape(Unit.POD_GROUP, request.milli, request.models, spec.priority, run.pods_needed,
                        len(run.pending), spec.topology_required, spec.topology_preferred, spec.parent_group,
                        request.selector, request.claims)
