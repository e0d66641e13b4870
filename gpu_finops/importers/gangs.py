"""Which gang a pod belongs to, and which member of it it is.

`membership(pod, objects)` reads, first match wins:

1. the native Workload API: ``spec.schedulingGroup.podGroupName`` (v1alpha2+, a PodGroup
   object, possibly under a CompositePodGroup) or ``spec.workloadRef`` (v1alpha1: Workload,
   pod group and replica key);
2. scheduler-plugins: label ``scheduling.x-k8s.io/pod-group``, its older spelling
   ``pod-group.scheduling.sigs.k8s.io`` and the lightweight-coscheduling labels
   ``pod-group.scheduling.sigs.k8s.io/name`` + ``/min-available``; Volcano's
   ``scheduling.k8s.io/group-name`` annotation;
3. Kueue's plain pod groups: label ``kueue.x-k8s.io/pod-group-name`` with annotation
   ``kueue.x-k8s.io/pod-group-total-count``;
4. LeaderWorkerSet: ``leaderworkerset.sigs.k8s.io/name`` + ``group-index`` (one gang per
   replica group, of ``leaderworkerset.sigs.k8s.io/size`` pods);
5. JobSet: ``jobset.sigs.k8s.io/jobset-name`` (the whole JobSet is one gang);
6. Kubeflow training jobs: ``training.kubeflow.org/job-name`` or an owner of a training kind;
7. the owner reference of a batch Job;
8. otherwise the pod is a workload of its own.

The member ("slot") is the pod's index in its group (completion index, worker index, replica
type and index, ...), so a pod recreated after a failure is another attempt of the same member,
not an extra pod of the gang.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_finops.importers.records import GroupObjects, PodRecord

# scheduler-plugins, current and older spellings; lightweight coscheduling.
PLUGIN_POD_GROUP_LABELS = ("scheduling.x-k8s.io/pod-group", "pod-group.scheduling.sigs.k8s.io")
LIGHTWEIGHT_NAME = "pod-group.scheduling.sigs.k8s.io/name"
LIGHTWEIGHT_MIN = "pod-group.scheduling.sigs.k8s.io/min-available"
VOLCANO_GROUP = "scheduling.k8s.io/group-name"
KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY_CLASS = "kueue.x-k8s.io/priority-class"
KUEUE_GROUP = "kueue.x-k8s.io/pod-group-name"
KUEUE_GROUP_TOTAL = "kueue.x-k8s.io/pod-group-total-count"
KUEUE_GROUP_INDEX = "kueue.x-k8s.io/pod-group-pod-index"
KUEUE_REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
KUEUE_PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
LWS_NAME = "leaderworkerset.sigs.k8s.io/name"
LWS_GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
LWS_WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
LWS_SIZE = "leaderworkerset.sigs.k8s.io/size"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
JOBSET_REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
JOBSET_JOB_INDEX = "jobset.sigs.k8s.io/job-index"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
KUBEFLOW_JOB = "training.kubeflow.org/job-name"
KUBEFLOW_REPLICA_TYPE = "training.kubeflow.org/replica-type"
KUBEFLOW_REPLICA_INDEX = "training.kubeflow.org/replica-index"
TRAINING_KINDS = frozenset({"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob"})
SERVING_OWNERS = frozenset({"ReplicaSet", "StatefulSet", "Deployment", "ReplicationController"})


@dataclass(frozen=True, slots=True)
class Membership:
    group_id: str  # the workload id: namespace/kind/name
    mechanism: str  # what made the gang, for pods.csv and docs
    slot: str  # which member of the group the pod is
    role: str = ""  # leader / worker / a replicated job's name: names the parts of a mixed gang
    min_count: int | None = None  # None: every member
    parent: str | None = None  # a CompositePodGroup's workload id
    parent_min: int | None = None
    topology_key: str | None = None  # a node label key the whole group must share
    kind: str = "training"
    schedule_timeout_s: int | None = None  # a scheduler-plugins PodGroup's scheduleTimeoutSeconds
    disruption_mode: str = ""  # "all" when the PodGroup (its CompositePodGroup, Job or JobSet) says so; "": Single
    on_pod_loss: str = ""  # what its controller does when one pod is preempted ("": the kind's default)


def _get(pod: PodRecord, key: str) -> str:
    """A label, else an annotation of the same key (some controllers write one, some the other)."""
    return pod.labels.get(key) or pod.annotations.get(key) or ""


MAX_COUNT = 2**31 - 1  # a gang's count, as Kubernetes' int32 fields hold it


def _positive(text: str) -> int | None:
    """A count from a label or annotation; None when it is not one (or past 32 bits)."""
    if not isinstance(text, str) or not text.strip().isdigit() or len(text.strip()) > 10:
        return None  # also before int(): a 5,000-digit label is past Python's str-to-int limit
    value = int(text)
    return value if 0 < value <= MAX_COUNT else None


def membership(pod: PodRecord, objects: GroupObjects) -> Membership | None:
    """The gang ``pod`` belongs to, or None when it is a workload of its own."""
    ns = pod.namespace
    index = _get(pod, COMPLETION_INDEX)
    slot = index or pod.name
    if pod.scheduling_group:
        spec = objects.native_pod_groups.get((ns, pod.scheduling_group))
        composite = objects.composites.get((ns, spec.parent)) if spec and spec.parent else None
        # No PodGroup object in the dump: every member; a Basic policy: no quorum (1).
        minimum = None if spec is None else (spec.min_count or 1)
        # The trace's disruption_mode of a composite's child is the composite's (docs/traces.md).
        disruption_all = composite.disruption_all if composite else bool(spec and spec.disruption_all)
        return Membership(
            f"{ns}/podgroup/{pod.scheduling_group}", "PodGroup (scheduling.k8s.io)", slot,
            min_count=minimum,
            parent=f"{ns}/compositepodgroup/{spec.parent}" if spec and spec.parent else None,
            parent_min=composite.min_groups if composite else None,
            topology_key=spec.topology_key if spec else None,
            disruption_mode="all" if disruption_all else "",
        )
    if pod.workload_ref and pod.workload_ref[0]:
        workload, group, replica = pod.workload_ref
        groups = objects.native_workloads.get((ns, workload))
        minimum = groups.get(group) if groups and group in groups else None
        basic = groups is not None and group in groups and minimum is None
        name = "/".join(p for p in (workload, group, replica) if p)
        return Membership(f"{ns}/workload/{name}", "Workload (scheduling.k8s.io/v1alpha1)", slot,
                          min_count=1 if basic else minimum)
    for label in PLUGIN_POD_GROUP_LABELS:
        if pod.labels.get(label):
            name = pod.labels[label]
            return Membership(f"{ns}/podgroup/{name}", f"scheduler-plugins PodGroup ({label})", slot,
                              min_count=objects.plugin_pod_groups.get((ns, name)),
                              schedule_timeout_s=objects.plugin_schedule_timeouts.get((ns, name)))
    if pod.labels.get(LIGHTWEIGHT_NAME):
        name = pod.labels[LIGHTWEIGHT_NAME]
        return Membership(f"{ns}/podgroup/{name}", "lightweight coscheduling", slot,
                          min_count=_positive(pod.labels.get(LIGHTWEIGHT_MIN, "")))
    if pod.annotations.get(VOLCANO_GROUP):
        name = pod.annotations[VOLCANO_GROUP]
        return Membership(f"{ns}/podgroup/{name}", "Volcano PodGroup", slot,
                          min_count=objects.plugin_pod_groups.get((ns, name)))
    if pod.labels.get(KUEUE_GROUP):
        name = pod.labels[KUEUE_GROUP]
        return Membership(f"{ns}/kueue-group/{name}", "Kueue pod group", _get(pod, KUEUE_GROUP_INDEX) or slot,
                          min_count=_positive(pod.annotations.get(KUEUE_GROUP_TOTAL, "")))
    if pod.labels.get(LWS_NAME):
        return _leader_worker_set(pod, objects)
    if _get(pod, JOBSET_NAME):
        name = _get(pod, JOBSET_NAME)
        replicated = _get(pod, JOBSET_REPLICATED_JOB)
        member = "/".join(p for p in (replicated, _get(pod, JOBSET_JOB_INDEX), index) if p) or pod.name
        # A preempted pod fails its Job, and by the JobSet's default failure policy the JobSet.
        return Membership(f"{ns}/jobset/{name}", "JobSet", member, role=replicated, on_pod_loss="restart_group",
                          disruption_mode="all" if (ns, name) in objects.jobset_disruption_all else "")
    owner = pod.owner
    if _get(pod, KUBEFLOW_JOB) or (owner and owner.kind in TRAINING_KINDS):
        name = _get(pod, KUBEFLOW_JOB) or (owner.name if owner else pod.name)
        role = _get(pod, KUBEFLOW_REPLICA_TYPE)
        member = "/".join(p for p in (role, _get(pod, KUBEFLOW_REPLICA_INDEX)) if p) or pod.name
        return Membership(f"{ns}/trainingjob/{name}", "Kubeflow training job", member, role=role)
    if owner and owner.kind == "Job":
        # An Indexed Job is a gang of its parallelism (KEP-5547); a NonIndexed one runs its
        # pods independently: one workload, any member may start alone.
        # Either way the Job's controller creates a preempted pod again (same completion index).
        return Membership(f"{ns}/job/{owner.name}", "Job (owner reference)", slot,
                          min_count=None if index else 1, kind="training" if index else "batch",
                          on_pod_loss="replace_pod",
                          disruption_mode="all" if (ns, owner.name) in objects.job_disruption_all else "")
    return None


def _leader_worker_set(pod: PodRecord, objects: GroupObjects) -> Membership:
    name = pod.labels[LWS_NAME]
    # restartPolicy RecreateGroupOnPodRestart (the default) recreates the whole group when
    # one pod goes; None lets the group's StatefulSet create the lost pod again.
    restart = objects.lws_restart_policies.get((pod.namespace, name), "RecreateGroupOnPodRestart")
    worker = pod.labels.get(LWS_WORKER_INDEX, "")
    group = pod.labels.get(LWS_GROUP_INDEX, "")
    if not group and worker in ("", "0") and pod.name.startswith(f"{name}-"):
        group = pod.name.removeprefix(f"{name}-")  # a leader named <lws>-<group index>
    return Membership(
        f"{pod.namespace}/lws/{name}-{group or '0'}", "LeaderWorkerSet", worker or pod.name,
        role="leader" if worker == "0" else "worker",
        min_count=_positive(pod.annotations.get(LWS_SIZE, "")), kind="inference",
        on_pod_loss="replace_pod" if restart == "None" else "restart_group",
    )


def standalone_kind(pod: PodRecord) -> str:
    """``inference`` for pods of a serving controller, ``batch`` otherwise."""
    return "inference" if pod.owner and pod.owner.kind in SERVING_OWNERS else "batch"
