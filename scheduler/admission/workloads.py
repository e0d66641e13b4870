"""Kueue's view of one workload: its requests, its place in a queue, its admission.

`AdmissionWorkload` plays the part of Kueue's ``workload.Info`` plus the Workload status the
admission layer needs (QuotaReserved, Evicted, requeueState). It is computed once per trace
row and updated as the workload is queued, admitted, evicted and requeued; the replay's own
`WorkloadRun` stays the source of truth for pods.

Every workload has one pod set (``main``) of ``pods`` pods; its quota request per resource
is pods × the per-pod request, in milli-units (memory: milli-bytes, as quantities parse).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from scheduler.admission.objects import GPU_RESOURCE
from scheduler.admission.quota import FlavorResource

if TYPE_CHECKING:
    from scheduler.sim import Handle
    from scheduler.workload_run import WorkloadRun

POD_SET = "main"
CPU_RESOURCE = "cpu"
MEMORY_RESOURCE = "memory"
_MILLI_BYTES_PER_MIB = 2**20 * 1000


class State(Enum):
    QUEUED = "queued"  # in its ClusterQueue (heap or inadmissible)
    ADMITTED = "admitted"  # holds quota
    EVICTING = "evicting"  # evicted; holds quota until its pods are gone
    BACKOFF = "backoff"  # evicted by the PodsReady timeout; requeued at requeue_at_s
    DEACTIVATED = "deactivated"  # backoffLimitCount exceeded: never admitted again
    FINISHED = "finished"
    MISCONFIGURED = "misconfigured"  # its LocalQueue does not exist
    UNMANAGED = "unmanaged"  # no queue name: Kueue leaves it alone


class WorkloadShape:
    """A scheduling-equivalence hash (`AdmissionWorkload.shape`) as one object whose hash is
    computed once. Queues, nominations and the flavor screen key dicts by it several times
    per head; hashing the nested tuple (requests, models, priority, counts, topology) each
    time cost what those lookups save. Shapes equal by content are equal, and a replay
    interns them (`ShapeTable`) so that lookups find the same object without comparing."""

    __slots__ = ("key", "hash")

    def __init__(self, key: tuple[object, ...]) -> None:
        self.key = key
        self.hash = hash(key)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, WorkloadShape) and self.hash == other.hash and self.key == other.key)

    def __repr__(self) -> str:
        return f"WorkloadShape({self.key!r})"


class ShapeTable:
    """One `WorkloadShape` per distinct key for a replay (interning, no module-level state),
    and per trace row's request fields the requests and shape they give (`by_row`): a
    replay's workloads come in few such shapes, and building the requests, sorting them into
    a shape key and hashing it once per workload cost more than one flat tuple's lookup."""

    def __init__(self) -> None:
        self._shapes: dict[tuple[object, ...], WorkloadShape] = {}
        # (GPUs, CPU, memory per pod, pods, models, priority, minCount, topology request) ->
        # (the pod set's requests, the shape): what `admission_workload` derives from them
        self.by_row: dict[tuple[object, ...], tuple[dict[str, int], WorkloadShape]] = {}

    def of(self, key: tuple[object, ...]) -> WorkloadShape:
        shape = self._shapes.get(key)
        if shape is None:
            shape = self._shapes[key] = WorkloadShape(key)
        return shape


class ScanProgress:
    """Kueue's AssignmentClusterQueueState of a workload's last nomination (a value; slotted
    rather than a dataclass, whose generated `__init__` the compiled build interprets: one is
    recorded per nomination)."""

    __slots__ = ("tried", "generation", "cycle")

    def __init__(self, tried: tuple[tuple[int, int], ...], generation: int, cycle: int) -> None:
        self.tried = tried  # (resource group index, LastTriedFlavorIdx), -1: the last one
        self.generation = generation  # the ClusterQueue's AllocatableResourceGeneration then
        self.cycle = cycle  # the scheduling cycle that computed it

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, ScanProgress) and self.tried == other.tried
                                 and self.generation == other.generation and self.cycle == other.cycle)

    def __hash__(self) -> int:
        return hash((self.tried, self.generation, self.cycle))

    def __repr__(self) -> str:
        return f"ScanProgress(tried={self.tried!r}, generation={self.generation!r}, cycle={self.cycle!r})"

    @property
    def pending_flavors(self) -> bool:
        """PendingFlavors: some group has flavors after the one its scan stopped at."""
        return any(index != -1 for _, index in self.tried)

    def start(self) -> tuple[int, ...]:
        """NextFlavorToTryForPodSetResource per group: the index after the one tried (0 after
        -1, or for a group without a recorded index); () when every group starts at 0."""
        if not self.pending_flavors:
            return ()
        starts = [0] * (max(group for group, _ in self.tried) + 1)
        for group, index in self.tried:
            starts[group] = index + 1
        return tuple(starts)


@dataclass(eq=False, init=False)
class AdmissionWorkload:
    run: WorkloadRun
    name: str
    local_queue: str | None
    cluster_queue: str | None
    requests: dict[str, int]  # resource -> milli-units for the whole pod set
    priority: int
    seq: int
    created_s: float
    models: tuple[str, ...]
    pods: int  # the pod set's count
    min_count: int  # its minCount (the trace's min_count): partial admission down to it
    state: State
    queue_timestamp_s: float  # Kueue's queue-order timestamp (creation, or eviction)
    queued_s: float  # when it last entered its queue
    usage: dict[FlavorResource, int]
    flavors: dict[str, str]  # resource -> flavor, once admitted
    admitted_s: float | None
    borrowing: bool
    pods_ready: bool
    recovering: bool  # lost its pods after PodsReady: the recovery timer runs
    resubmitted: bool  # the replay requeued it while its eviction was under way
    requeue_count: int
    requeue_at_s: float
    timer: Handle | None
    explained: bool  # a pending row says why, since it was last queued
    # Its pod set's topology request (required, preferred level) when the queues file uses
    # TAS, so that the trace's topology columns are Kueue's annotations: part of the shape.
    topology_request: tuple[str | None, str | None] | None
    # Kueue's LastAssignment (workload.AssignmentClusterQueueState): where its last flavor
    # scan stopped, per resource group, with the ClusterQueue generation and the scheduling
    # cycle it was computed in; None: the next scan starts at every group's first flavor.
    scan: ScanProgress | None
    # The scheduling-equivalence hash once computed (`shape`): a plain field, not a cached
    # property, so that the compiled build (a native class, no instance dict) keeps it too.
    _shape: WorkloadShape | None

    # Written out: mypyc compiles it; the __init__ the dataclasses module generates runs
    # interpreted, even in the compiled build (`test_compiled_inits.py`).
    def __init__(
        self, run: WorkloadRun, name: str, local_queue: str | None, cluster_queue: str | None,
        requests: dict[str, int], priority: int, seq: int, created_s: float, models: tuple[str, ...],
        pods: int = 1, min_count: int = 1, state: State = State.QUEUED, queue_timestamp_s: float = 0.0,
        queued_s: float = 0.0, usage: dict[FlavorResource, int] | None = None,
        flavors: dict[str, str] | None = None, admitted_s: float | None = None, borrowing: bool = False,
        pods_ready: bool = False, recovering: bool = False, resubmitted: bool = False, requeue_count: int = 0,
        requeue_at_s: float = 0.0, timer: Handle | None = None, explained: bool = False,
        topology_request: tuple[str | None, str | None] | None = None, scan: ScanProgress | None = None,
        _shape: WorkloadShape | None = None,
    ) -> None:
        self.run = run
        self.name = name
        self.local_queue = local_queue
        self.cluster_queue = cluster_queue
        self.requests = requests
        self.priority = priority
        self.seq = seq
        self.created_s = created_s
        self.models = models
        self.pods = pods
        self.min_count = min_count
        self.state = state
        self.queue_timestamp_s = queue_timestamp_s
        self.queued_s = queued_s
        self.usage = {} if usage is None else usage
        self.flavors = {} if flavors is None else flavors
        self.admitted_s = admitted_s
        self.borrowing = borrowing
        self.pods_ready = pods_ready
        self.recovering = recovering
        self.resubmitted = resubmitted
        self.requeue_count = requeue_count
        self.requeue_at_s = requeue_at_s
        self.timer = timer
        self.explained = explained
        self.topology_request = topology_request
        self.scan = scan
        self._shape = _shape

    @property
    def queue_key(self) -> tuple[int, float, int]:
        """Kueue's heap order: priority desc, queue-order timestamp asc, then a stable id."""
        return (-self.priority, self.queue_timestamp_s, self.seq)

    @property
    def shape(self) -> WorkloadShape:
        """Scheduling-equivalence hash: workloads equal here get the same assignment (none of
        its parts changes once the workload is tracked, so it is computed once; a replay's
        workloads get it interned from `admission_workload`)."""
        shape = self._shape
        if shape is None:
            shape = self._shape = WorkloadShape(self.shape_key())
        return shape

    def shape_key(self) -> tuple[object, ...]:
        return (tuple(sorted(self.requests.items())), self.models, self.priority, self.pods, self.min_count,
                self.topology_request)

    def with_pods(self, pods: int) -> AdmissionWorkload:
        """This workload as asked for with `pods` pods (partial admission tries counts)."""
        # A shallow copy (the dicts shared, as copy.copy shares them), built by the written
        # __init__: copy.copy cannot rebuild a compiled class whose __init__ takes arguments.
        # Its equivalence hash is the full count's with the count: equal pairs ask alike.
        return AdmissionWorkload(
            self.run, self.name, self.local_queue, self.cluster_queue,
            {resource: value // self.pods * pods for resource, value in self.requests.items()}, self.priority,
            self.seq, self.created_s, self.models, pods, self.min_count, self.state, self.queue_timestamp_s,
            self.queued_s, self.usage, self.flavors, self.admitted_s, self.borrowing, self.pods_ready,
            self.recovering, self.resubmitted, self.requeue_count, self.requeue_at_s, self.timer, self.explained,
            self.topology_request, self.scan, WorkloadShape((self.shape, pods)))

    def uses(self, frs: set[FlavorResource] | frozenset[FlavorResource]) -> bool:
        return not self.usage.keys().isdisjoint(frs)


def admission_workload(run: WorkloadRun, local_queue: str | None, cluster_queue: str | None, *,
                       uses_tas: bool = False, shapes: ShapeTable | None = None) -> AdmissionWorkload:
    """Kueue's view of a run, computed once when the layer first sees it (``workload.Info``);
    its queue-order timestamp starts as its creation (submit) time. `uses_tas`: some flavor of
    the queues file has a Topology, so the trace's topology columns are the pod set's topology
    request and belong to its scheduling-equivalence hash (computeSchedulingHash). `shapes`:
    the replay's interned shapes; workloads of one row shape then share one requests dict,
    which nothing changes once it is made (`with_pods` builds its own)."""
    spec = run.spec
    min_count = min(spec.min_count, spec.pods)
    topology_request = (spec.topology_required, spec.topology_preferred) if uses_tas else None
    row: tuple[object, ...] | None = None
    found: tuple[dict[str, int], WorkloadShape] | None = None
    if shapes is not None:
        row = (spec.gpus_per_pod, spec.cpu_milli_per_pod, spec.memory_mib_per_pod, spec.pods, spec.gpu_models,
               spec.priority, min_count, topology_request)
        found = shapes.by_row.get(row)
    wl = AdmissionWorkload(
        run=run,
        name=spec.workload_id,
        local_queue=local_queue,
        cluster_queue=cluster_queue,
        requests=pod_set_requests(run) if found is None else found[0],
        priority=spec.priority,
        seq=run.seq,
        created_s=spec.submit_time_s,
        models=spec.gpu_models,
        pods=spec.pods,
        min_count=min_count,
        queue_timestamp_s=spec.submit_time_s,
        topology_request=topology_request,
    )
    if found is not None:
        wl._shape = found[1]
    elif shapes is not None and row is not None:
        wl._shape = shape = shapes.of(wl.shape_key())
        shapes.by_row[row] = (wl.requests, shape)
    return wl


def pod_set_requests(run: WorkloadRun) -> dict[str, int]:
    """Quota requests of the workload's pod set, only the resources it asks for."""
    spec = run.spec
    per_pod = {
        GPU_RESOURCE: spec.gpu_milli_per_pod,
        CPU_RESOURCE: spec.cpu_milli_per_pod,
        MEMORY_RESOURCE: spec.memory_mib_per_pod * _MILLI_BYTES_PER_MIB,
    }
    return {resource: value * spec.pods for resource, value in per_pod.items() if value > 0}


def quantity(resource: str, milli: int) -> str:
    """A quantity as Kubernetes prints it: "8", "500m", "96Gi"."""
    if resource == MEMORY_RESOURCE and milli % 1000 == 0:
        value = milli // 1000
        for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if value and value % size == 0:
                return f"{value // size}{suffix}"
        return str(value)
    if milli % 1000 == 0:
        return str(milli // 1000)
    return f"{milli}m"


def in_base_unit(resource: str, milli: int) -> float:
    """GPUs, CPU cores, MiB of memory (the `cluster_queues.parquet` units)."""
    if resource == MEMORY_RESOURCE:
        return milli / _MILLI_BYTES_PER_MIB
    return milli / 1000
