"""THE published event-log contract between the scheduler and everything downstream.

`events.parquet` in a run directory has exactly `EVENT_SCHEMA`'s columns, one row per state
transition, ordered by `seq` (strictly increasing from 0). The pipeline may import this
module and nothing else from `scheduler`.

Event semantics (DESIGN.md section 4.3):

- ``submitted``: the workload (pod group) arrived. One row per workload, ``pod_index`` null.
- ``pending``: an admission or placement attempt failed. ``reason`` is a short code from
  `PendingReason`, ``message`` the human sentence with the numbers. ``pod_index`` null.
  With an admission layer, ``cluster_queue`` is the ClusterQueue the workload waits in;
  Kueue's rows carry its place in that queue as ``queue_position`` (1 = head) and
  ``queue_length`` (since 1.2; the message still ends "; position 3 of 12 in ClusterQueue q").
- ``admitted``: the admission layer (Kueue) admitted the workload; ``cluster_queue`` and
  ``flavor`` (the ResourceFlavor assigned to its GPUs) are set; ``reason`` is ``Borrowing``
  when the admission uses quota borrowed from the cohort, else null. The workload holds
  quota (pods × gpus_per_pod of that flavor) from this row until its next ``finished``
  (last pod) or ``requeued`` row.
- ``reserved``: a pod holds ``gpus`` GPUs on ``node`` without running (gang barrier).
- ``started``: a pod runs on ``node`` with ``gpus`` GPUs. If it was reserved first, the
  reservation turns into the run (no separate release row).
- ``finished``: a pod completed and released its GPUs.
- ``preempted``: a pod was evicted and released its GPUs; ``preemptor`` is the workload it
  made room for (since 1.2; ``reason`` keeps its 1.1 value ``preempted-by:<workload_id>``,
  which readers must not parse). Work since the pod group's last checkpoint is lost.
- ``timed_out``: a pod's reservation (or, in pod-by-pod mode, its run while the gang never
  completed) was released because the gang's wait ended without the gang completing: its
  deadline expired (``reason`` GangPermitTimeout, RendezvousTimeout) or the scheduler
  rejected the group (GangRejected, coscheduling). One row per released pod.
- ``requeued``: the workload went back to the queue (after preemption or time-out);
  ``pod_index`` null; ``preemptor`` set when a preemption sent it back.
- ``resized``: the workload's min_count changed (elastic); ``reason`` MinCountChanged,
  ``message`` "min_count 8 -> 4". Running pods are not disturbed.
- ``rejected``: the workload can never run; ``reason`` says why. ``pod_index`` null.

A pod holds GPUs from its ``reserved`` or ``started`` row until the next ``finished``,
``preempted`` or ``timed_out`` row for the same (workload_id, pod_index). Each pod's
``gpus`` is its request: fractional values (< 1) share one device with other pods; a pod
placed through DRA (``replay --dra``) has its devices' share of whole GPUs (a MIG 1g.10gb slice
of an H100: 0.142; docs/dra.md).

Every GPU-second a pod holds is classified downstream from these rows alone plus
``workloads.parquet``: reserved-not-started is ``gang_wait``; started while fewer than
``min_count`` pods of its group are started is ``gang_wait`` too (partial placement);
of the remaining started time (the pod's *progress*, from the moment its group first has
``min_count`` pods started in this attempt), what runs after the group's last checkpoint
before a ``preempted`` or ``timed_out`` row is ``lost_to_preemption`` (see
`last_checkpoint_s`); the rest is ``productive``.
"""

from __future__ import annotations

from enum import StrEnum

import pyarrow as pa

SCHEMA_VERSION = "1.4"
"""Bumped on any change to the columns below; written to the Parquet key-value metadata.

1.2 added ``preemptor``, ``queue_position`` and ``queue_length``: facts that 1.1 logs carried
only inside ``reason`` and ``message`` text. 1.3 added ``gpu_utilization`` to
``workloads.parquet`` (the events are 1.2's); 1.4 added ``labels`` to it (pod labels and
annotations, a map of text to text; the events are still 1.2's)."""

READABLE_SCHEMA_VERSIONS = ("1.1", "1.2", "1.3", SCHEMA_VERSION)
"""Versions downstream readers accept; `upgrade_events` brings a 1.1 table to this one."""

METADATA_KEY = b"gpu_finops.eventlog.schema_version"


class EventType(StrEnum):
    SUBMITTED = "submitted"
    PENDING = "pending"
    ADMITTED = "admitted"
    RESERVED = "reserved"
    STARTED = "started"
    FINISHED = "finished"
    PREEMPTED = "preempted"
    TIMED_OUT = "timed_out"
    REQUEUED = "requeued"
    RESIZED = "resized"
    REJECTED = "rejected"


class PendingReason(StrEnum):
    """Short codes on ``pending`` and ``rejected`` rows (Kueue / kube-scheduler vocabulary)."""

    # placement (kube-scheduler side)
    UNSCHEDULABLE = "Unschedulable"  # no node fits a pod
    GANG_NOT_SATISFIABLE = "GangNotSatisfiable"  # fewer than min_count pods can be placed
    WAITING_FOR_GANG = "WaitingForGang"  # reserved pods wait at the Permit barrier
    TOPOLOGY_UNSATISFIABLE = "TopologyUnsatisfiable"
    WAITING_FOR_PREEMPTED = "WaitingForPreemptedWorkloads"
    # admission (Kueue side: QuotaReserved=False reasons)
    WAITING_FOR_QUOTA = "WaitingForQuota"
    EXCEEDS_MAX_QUOTA = "ExceedsMaxQuota"
    NO_MATCHING_FLAVOR = "NoMatchingFlavor"
    TOPOLOGY_PLACEMENT_FAILED = "TopologyPlacementFailed"  # TAS: no topology domain holds the pod set
    PENDING_EVALUATION = "PendingEvaluation"  # queued, not yet the head its ClusterQueue tries
    WAITING_FOR_PODS_READY = "WaitingForPodsReady"  # blockAdmission: others are not running yet
    MISCONFIGURED = "Misconfigured"  # its LocalQueue does not exist
    SUSPENDED = "Suspended"  # its ClusterQueue is inactive (stopPolicy, cohort cycle)
    PODS_READY_TIMEOUT = "PodsReadyTimeout"  # evicted by waitForPodsReady, in requeue backoff
    DEACTIVATED = "Deactivated"  # on `rejected`: waitForPodsReady's backoffLimitCount exceeded
    # rejection (can never run)
    LARGER_THAN_CLUSTER = "LargerThanCluster"
    UNKNOWN_GPU_MODEL = "UnknownGpuModel"
    UNKNOWN_QUEUE = "UnknownQueue"
    UNKNOWN_RESOURCE_CLAIM = "UnknownResourceClaim"  # names a ResourceClaim(Template) the DRA inputs lack
    # Kueue cannot count a workload's claims (an unmapped DeviceClass, firstAvailable, a named claim, the gate off)
    INADMISSIBLE_RESOURCE_CLAIM = "InadmissibleResourceClaim"


EVENT_SCHEMA = pa.schema(
    [
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("time_s", pa.float64(), nullable=False),
        pa.field("event", pa.string(), nullable=False),
        pa.field("workload_id", pa.string(), nullable=False),
        pa.field("pod_index", pa.int32()),
        pa.field("node", pa.string()),
        pa.field("gpus", pa.float64()),
        pa.field("gpu_model", pa.string()),
        pa.field("tenant", pa.string()),
        pa.field("queue", pa.string()),
        pa.field("cluster_queue", pa.string()),
        pa.field("priority", pa.int32()),
        pa.field("reason", pa.string()),
        pa.field("message", pa.string()),
        pa.field("flavor", pa.string()),
        # 1.2
        pa.field("preemptor", pa.string()),
        pa.field("queue_position", pa.int32()),
        pa.field("queue_length", pa.int32()),
    ]
)

ADDED_IN_1_2 = ("preemptor", "queue_position", "queue_length")

WORKLOAD_SCHEMA = pa.schema(
    [
        pa.field("workload_id", pa.string(), nullable=False),
        pa.field("submit_time_s", pa.float64(), nullable=False),
        pa.field("duration_s", pa.float64(), nullable=False),
        pa.field("pods", pa.int32(), nullable=False),
        pa.field("min_count", pa.int32(), nullable=False),
        pa.field("gpus_per_pod", pa.float64(), nullable=False),
        pa.field("gpu_model", pa.string()),
        pa.field("cpu_milli_per_pod", pa.int64()),
        pa.field("memory_mib_per_pod", pa.int64()),
        pa.field("tenant", pa.string(), nullable=False),
        pa.field("queue", pa.string()),
        pa.field("priority", pa.int32(), nullable=False),
        pa.field("checkpoint_interval_s", pa.float64()),
        pa.field("topology_required", pa.string()),
        pa.field("topology_preferred", pa.string()),
        pa.field("parent_group", pa.string()),
        pa.field("kind", pa.string()),
        # 1.3: mean GPU engine-active fraction while running, 0..1; null = not measured
        pa.field("gpu_utilization", pa.float64()),
        # 1.4: pod labels and annotations, keys sorted; null = none
        pa.field("labels", pa.map_(pa.string(), pa.string())),
    ]
)

WORKLOAD_COLUMNS_ADDED_IN_1_3 = ("gpu_utilization",)
WORKLOAD_COLUMNS_ADDED_IN_1_4 = ("labels",)
WORKLOAD_COLUMNS_ADDED_SINCE_1_2 = WORKLOAD_COLUMNS_ADDED_IN_1_3 + WORKLOAD_COLUMNS_ADDED_IN_1_4
"""Nullable ``workloads.parquet`` columns an older run lacks: readers fill them with nulls."""

CLUSTER_SCHEMA = pa.schema(
    [
        pa.field("node", pa.string(), nullable=False),
        pa.field("gpu_model", pa.string()),
        pa.field("gpus", pa.int32(), nullable=False),
        pa.field("cpu_milli", pa.int64()),
        pa.field("memory_mib", pa.int64()),
        pa.field("zone", pa.string()),
        pa.field("block", pa.string()),
        pa.field("rack", pa.string()),
        pa.field("pricing_category", pa.string(), nullable=False),
    ]
)

QUEUE_SCHEMA = pa.schema(
    [
        pa.field("cluster_queue", pa.string(), nullable=False),
        pa.field("cohort", pa.string()),
        pa.field("flavor", pa.string(), nullable=False),
        pa.field("resource", pa.string(), nullable=False),
        pa.field("nominal_quota", pa.float64(), nullable=False),
        pa.field("borrowing_limit", pa.float64()),
        pa.field("lending_limit", pa.float64()),
        pa.field("fair_sharing_weight", pa.float64()),
    ]
)
"""`cluster_queues.parquet` (only when the replay had a queues file): one row per
ClusterQueue × flavor × resource, quantities in the resource's unit (GPUs, CPU cores, MiB)."""

DEVICE_SCHEMA = pa.schema(
    [
        pa.field("node", pa.string(), nullable=False),
        pa.field("driver", pa.string(), nullable=False),
        pa.field("pool", pa.string(), nullable=False),
        pa.field("device", pa.string(), nullable=False),
        pa.field("gpu_unit", pa.int32(), nullable=False),
        pa.field("share_milli", pa.int32(), nullable=False),
        pa.field("partition", pa.bool_(), nullable=False),
        pa.field("profile", pa.string()),
    ]
)
"""``devices.parquet`` (runs with ``--dra`` only): one row per device a ResourceSlice publishes:
its node, GPU (``gpu_unit``, the node's counter set or device it counts as), its share of that
GPU in milli-GPUs when allocated alone (a consumable-capacity device: 1000), ``partition`` (it
draws on a counter set without taking all of it: a MIG slice) and its ``profile`` attribute."""

DEVICE_ALLOCATION_SCHEMA = pa.schema(
    [
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("time_s", pa.float64(), nullable=False),
        pa.field("event", pa.string(), nullable=False),
        pa.field("workload_id", pa.string(), nullable=False),
        pa.field("pod_index", pa.int32(), nullable=False),
        pa.field("node", pa.string(), nullable=False),
        pa.field("driver", pa.string(), nullable=False),
        pa.field("pool", pa.string(), nullable=False),
        pa.field("device", pa.string(), nullable=False),
        pa.field("gpu_unit", pa.int32(), nullable=False),
        pa.field("share_milli", pa.int32(), nullable=False),
        pa.field("partition", pa.bool_(), nullable=False),
        pa.field("profile", pa.string()),
        pa.field("claim_kind", pa.string(), nullable=False),
        pa.field("claim", pa.string()),
        pa.field("request", pa.string(), nullable=False),
        pa.field("allocated_by_pod", pa.int32(), nullable=False),
        pa.field("in_pod_gpus", pa.bool_(), nullable=False),
    ]
)
"""``device_allocations.parquet`` (runs with ``--dra`` only): one row per pod placement × device
it took. A placement is the pod's ``reserved`` row, or its ``started`` row when it was not
reserved first (``seq``, ``time_s``, ``event``, ``workload_id``, ``pod_index``, ``node``: that
row's). The device: ``driver``, ``pool``, ``device``, its GPU (``gpu_unit``, as in
``devices.parquet``), ``share_milli`` (the milli-GPUs of that GPU it stands for, for this
claim: a consumable-capacity device by the capacity taken), ``partition``, ``profile``. The
claim: ``claim_kind`` (``ResourceClaimTemplate``, ``ResourceClaim`` for a PodGroup's shared
claim, or ``count`` for a plain GPU count on a DRA node, ``claim`` null), ``claim`` (its name),
``request`` (``request`` or ``request/subrequest``). ``allocated_by_pod``: the pod of the
workload that allocated the claim (the pod itself, but for a shared claim allocated by
another pod of its group); ``in_pod_gpus``: the device's share is in this pod's ``gpus``
(false on the rows of a shared claim's other pods: they use the same devices, the allocating
pod carries their share)."""

RUN_FILES = {
    "events": "events.parquet",
    "workloads": "workloads.parquet",
    "cluster": "cluster.parquet",
    "run": "run.json",
    "rejected": "rejected.csv",
    "queues": "cluster_queues.parquet",
    "devices": "devices.parquet",
    "device_allocations": "device_allocations.parquet",
}
"""File names inside a run directory."""


def last_checkpoint_s(progress_start_s: float, end_s: float, checkpoint_interval_s: float | None) -> float:
    """Simulated time of a group's last checkpoint before ``end_s``.

    A group checkpoints every ``checkpoint_interval_s`` seconds of progress, counted from
    ``progress_start_s`` (the moment it first had ``min_count`` pods started in this
    attempt). Without checkpoints nothing is kept: the answer is ``progress_start_s``.
    Eviction at ``end_s`` loses each pod's progress after ``max(pod progress start, this)``.
    Published here so the scheduler (which resumes from the last checkpoint) and the
    pipeline (which costs the loss) use one formula.
    """
    if not checkpoint_interval_s or checkpoint_interval_s <= 0 or end_s <= progress_start_s:
        return progress_start_s
    periods = (end_s - progress_start_s) // checkpoint_interval_s
    return progress_start_s + periods * checkpoint_interval_s


def upgrade_events(table: pa.Table, version: str) -> pa.Table:
    """A log of an older readable version with the columns of this one.

    1.1 → 1.2: the new facts are recovered, once and here, from the only place 1.1 logs had
    them: ``preemptor`` from the ``preempted-by:<id>`` reason of ``preempted`` rows
    (1.1's ``requeued`` rows never named it), ``queue_position`` / ``queue_length`` from the "position N of M in
    ClusterQueue" end of Kueue's messages. Nothing downstream parses text."""
    import pyarrow.compute as pc

    if version in ("1.2", "1.3", SCHEMA_VERSION) or all(name in table.schema.names for name in ADDED_IN_1_2):
        return table
    if version not in READABLE_SCHEMA_VERSIONS:
        raise ValueError(f"event-log schema {version!r} is not one of {', '.join(READABLE_SCHEMA_VERSIONS)}")
    reason = table.column("reason")
    preempted_by = pc.extract_regex(reason, r"^preempted-by:(?P<preemptor>.+)$")
    preemptor = pc.if_else(pc.is_valid(preempted_by), pc.struct_field(preempted_by, [0]), pa.scalar(None, pa.string()))
    place = pc.extract_regex(table.column("message"),
                             r"position (?P<position>\d+) of (?P<length>\d+) in ClusterQueue [^;]*$")
    position = pc.cast(pc.struct_field(place, [0]), pa.int32())
    length = pc.cast(pc.struct_field(place, [1]), pa.int32())
    table = table.append_column("preemptor", preemptor)
    table = table.append_column("queue_position", position)
    return table.append_column("queue_length", length)
