"""The objects of a dump beside its pods that say how pods form gangs and how many GPUs a
DRA claim holds: native Workload / PodGroup / CompositePodGroup (scheduling.k8s.io),
scheduler-plugins and Volcano PodGroups, batch Jobs (their parallelism and
`spec.scheduling.disruptionMode`), JobSets (`spec.scheduling.disruptionMode`), LeaderWorkerSets
(their restart policy), ResourceClaims and their templates.

Add them to the pods dump to rebuild gangs exactly, e.g.
``kubectl get pods,jobs,jobsets,podgroups,compositepodgroups,leaderworkersets,resourceclaims,resourceclaimtemplates -A -o json``.
Without them, gangs are still rebuilt from pod labels; the quorum is then every member.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpu_finops.importers.documents import SourceObject
from gpu_finops.importers.gangs import MAX_COUNT
from gpu_finops.importers.records import CompositeSpec, GroupObjects, PodGroupSpec

NATIVE_GROUP = "scheduling.k8s.io"
PLUGIN_GROUPS = ("scheduling.x-k8s.io", "scheduling.sigs.k8s.io", "scheduling.volcano.sh")
KINDS = frozenset({"Workload", "PodGroup", "CompositePodGroup", "Job", "JobSet", "ResourceClaim",
                   "ResourceClaimTemplate", "LeaderWorkerSet"})


def collect_group_objects(objects: Iterable[SourceObject]) -> tuple[GroupObjects, list[SourceObject]]:
    """The gang and claim objects found, and the objects used (the rest are the caller's)."""
    found = GroupObjects()
    used: list[SourceObject] = []
    for obj in objects:
        if not isinstance(obj.value, Mapping) or obj.kind not in KINDS or not obj.name:
            continue
        group = str(obj.value.get("apiVersion") or "").split("/")[0]
        key = (obj.namespace or "default", obj.name)
        spec = _map(obj.value.get("spec"))
        if obj.kind == "Workload" and group == NATIVE_GROUP:
            found.native_workloads[key] = {
                str(g.get("name")): _gang_min(_map(g.get("policy")), "minCount")
                for g in _list(spec.get("podGroups")) if isinstance(g, Mapping)
            }
        elif obj.kind == "PodGroup" and group == NATIVE_GROUP:
            found.native_pod_groups[key] = PodGroupSpec(
                _gang_min(_map(spec.get("schedulingPolicy")), "minCount"),
                str(spec.get("parentCompositePodGroupName") or "") or None,
                _topology_key(spec),
                _disruption_all(spec),
            )
        elif obj.kind == "CompositePodGroup" and group == NATIVE_GROUP:
            found.composites[key] = CompositeSpec(_gang_min(_map(spec.get("schedulingPolicy")), "minGroupCount"),
                                                  _topology_key(spec), _disruption_all(spec))
        elif obj.kind == "LeaderWorkerSet" and group == "leaderworkerset.x-k8s.io":
            policy = _map(spec.get("leaderWorkerTemplate")).get("restartPolicy")
            if not isinstance(policy, str) or not policy:
                continue
            found.lws_restart_policies[key] = policy
        elif obj.kind == "PodGroup" and group in PLUGIN_GROUPS:
            minimum = _count(spec.get("minMember"))
            if minimum is not None:
                found.plugin_pod_groups[key] = minimum
            timeout = _count(spec.get("scheduleTimeoutSeconds"))  # coscheduling's Permit wait for this group
            if timeout is not None:
                found.plugin_schedule_timeouts[key] = timeout
        elif obj.kind == "Job" and group == "batch":
            parallelism = _count(spec.get("parallelism", 1))
            if parallelism is not None:
                found.job_parallelism[key] = parallelism
            if _disruption_all(_map(spec.get("scheduling"))):  # JobSchedulingConfiguration (WorkloadWithJob)
                found.job_disruption_all.add(key)
        elif obj.kind == "JobSet" and group == "jobset.x-k8s.io":
            # The JobSet-wide scheduling block; per-ReplicatedJob blocks are not read (the
            # importer makes one gang of a JobSet).
            if _disruption_all(_map(spec.get("scheduling"))):
                found.jobset_disruption_all.add(key)
        elif obj.kind == "ResourceClaim" and group == "resource.k8s.io":
            found.claim_gpus[key] = _allocated_gpus(obj.value) or _requested_gpus(_map(spec.get("devices")))
        elif obj.kind == "ResourceClaimTemplate" and group == "resource.k8s.io":
            found.template_gpus[key] = _requested_gpus(_map(_map(spec.get("spec")).get("devices")))
        else:
            continue
        used.append(obj)
    return found, used


def is_gpu_class(device_class: str) -> bool:
    """DeviceClasses of whole GPUs (gpu.nvidia.com, gpu.amd.com, gpu.intel.com); MIG slices
    (mig.nvidia.com) are not modelled."""
    return "gpu" in device_class.lower() and "mig" not in device_class.lower()


def _requested_gpus(devices: Mapping[str, Any]) -> float | None:
    """GPUs a claim asks for; None when it asks for all devices of a node (count unknown)."""
    total = 0
    for request in _list(devices.get("requests")):
        if not isinstance(request, Mapping):
            continue
        chosen = _gpu_request(request)
        if chosen is None:
            continue
        if chosen.get("allocationMode") == "All":
            return None
        total += _count(chosen.get("count", 1)) or 1
    return float(total)


def _gpu_request(request: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The device request body (v1beta1 fields inline; v1beta2/v1 under ``exactly``; the first,
    most preferred, of ``firstAvailable``) when it is for GPUs."""
    body = request
    if isinstance(request.get("exactly"), Mapping):
        body = request["exactly"]
    elif isinstance(request.get("firstAvailable"), list) and request["firstAvailable"]:
        first = request["firstAvailable"][0]
        body = first if isinstance(first, Mapping) else {}
    return body if is_gpu_class(str(body.get("deviceClassName") or "")) else None


def _allocated_gpus(claim: Mapping[str, Any]) -> float | None:
    """GPUs the scheduler allocated to a claim (status.allocation), when it was allocated."""
    spec = _map(claim.get("spec"))
    gpu_requests = {str(r.get("name")) for r in _list(_map(spec.get("devices")).get("requests"))
                    if isinstance(r, Mapping) and _gpu_request(r) is not None}
    results = _list(_map(_map(_map(claim.get("status")).get("allocation")).get("devices")).get("results"))
    if not results:
        return None
    count = sum(1 for r in results if isinstance(r, Mapping) and str(r.get("request") or "").split("/")[0] in gpu_requests)
    return float(count)


def _gang_min(policy: Mapping[str, Any], field: str) -> int | None:
    gang = policy.get("gang")
    if not isinstance(gang, Mapping):
        return None  # basic policy: no quorum
    return _count(gang.get(field))


def _disruption_all(spec: Mapping[str, Any]) -> bool:
    """`disruptionMode: {all: {}}`; absent, or `{single: {}}`, is Single (the API default)."""
    mode = spec.get("disruptionMode")
    return isinstance(mode, Mapping) and "all" in mode


def _count(value: Any) -> int | None:
    """A positive count of an object's spec (Kubernetes' int32 fields); None otherwise, also
    for a 5,000-digit integer, which must never reach a trace cell."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_COUNT else None


def _topology_key(spec: Mapping[str, Any]) -> str | None:
    constraints = _map(spec.get("schedulingConstraints"))
    for item in _list(constraints.get("topology")):
        if isinstance(item, Mapping) and item.get("key"):
            return str(item["key"])
    return None


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
