"""A Pod API object (``kubectl get pods -o json``) → a `PodRecord`, or a `Rejected` row.

What is read (docs/importers.md has the full mapping):

- GPUs: ``nvidia.com/gpu`` from the containers' requests (or limits: an extended resource's
  request defaults to its limit), summed over app containers and sidecars (init containers
  with ``restartPolicy: Always``), or the largest ordinary init container if that is more, as
  the kube-scheduler counts them; plus GPUs of DRA claims (``spec.resourceClaims``).
- CPU and memory: the same rule, in millicores and MiB.
- GPU model: a node selector or required node affinity (``In``) on a GPU product label.
- Times: ``metadata.creationTimestamp`` (submit), ``status.startTime`` (else the first
  container start), and the last container ``finishedAt`` of a pod that ended (else a
  deletion time); a pod still running has no finish: the dump's time cuts it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import ROUND_CEILING, Decimal
from typing import Any

from gpu_finops.importers.documents import SourceObject
from gpu_finops.importers.dra import pod_claims
from gpu_finops.importers.kube import GPU_RESOURCE, parse_quantity, parse_time, text_map
from gpu_finops.importers.records import GroupObjects, Owner, PodRecord, Rejected
from scheduler.admission.manifests.quantities import kind_of, shown
from scheduler.trace.generic import MAX_GPUS_PER_POD, MAX_PRIORITY, MAX_RESOURCE_PER_POD

_MIB = Decimal(2) ** 20
_TERMINAL = ("Succeeded", "Failed")
MAX_RESTARTS = 2**31 - 1  # a container status's restartCount is an int32


class _Problem(Exception):
    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


def reject(obj: SourceObject, field: str, reason: str) -> Rejected:
    kind = obj.kind or ("Pod" if isinstance(obj.value, Mapping) else type(obj.value).__name__)
    return Rejected(obj.source, obj.row, kind, obj.namespace, obj.name, field, reason)


def pod_record(obj: SourceObject, groups: GroupObjects, claim_users: Mapping[tuple[str, str], int],
               product_keys: tuple[str, ...]) -> PodRecord | Rejected:
    """Read one Pod; a pod that cannot be replayed comes back as its rejected row."""
    try:
        return _read(obj, groups, claim_users, product_keys)
    except _Problem as problem:
        return reject(obj, problem.field, problem.reason)


def _read(obj: SourceObject, groups: GroupObjects, claim_users: Mapping[tuple[str, str], int],
          product_keys: tuple[str, ...]) -> PodRecord:
    meta, spec, status = obj.metadata, _mapping(obj.value, "spec"), _mapping(obj.value, "status")
    if not obj.name:
        raise _Problem("metadata.name", "Invalid: a pod without a name")
    namespace = obj.namespace or "default"
    created = _time(meta.get("creationTimestamp"), "metadata.creationTimestamp")
    if created is None:
        raise _Problem("metadata.creationTimestamp", "Invalid: missing; the submit time comes from it")
    gpus_ext, cpu_milli, memory_mib, other = _container_requests(spec)
    gpus_dra = _claim_gpus(spec, status, namespace, groups, claim_users)
    gpus = float(gpus_ext) + gpus_dra
    claim_templates, shared_claim = pod_claims(spec, namespace) if groups.dra_devices else ((), None)
    if claim_templates or shared_claim:  # the replay reads the claims whole: the count is the containers'
        gpus = float(gpus_ext)
    if gpus <= 0 and not (claim_templates or shared_claim):
        extra = f" (it asks for {', '.join(sorted(other))}, which the replay does not model)" if other else ""
        raise _Problem("spec.containers", f"NoGpuRequest: requests no {GPU_RESOURCE} and no GPU device claim{extra}")
    phase = str(status.get("phase") or "Unknown")
    started, finished, restarts = _run_times(meta, status, phase)
    owner = _controller(meta.get("ownerReferences"))
    priority = spec.get("priority")
    workload_ref = _mapping(spec, "workloadRef") or None
    scheduling_group = _mapping(spec, "schedulingGroup") or None
    return PodRecord(
        source=obj.source, row=obj.row, namespace=namespace, name=obj.name, uid=str(meta.get("uid") or ""),
        labels=text_map(meta.get("labels")), annotations=text_map(meta.get("annotations")), owner=owner,
        node=str(spec.get("nodeName")) if spec.get("nodeName") else None, phase=phase, gpus=gpus,
        cpu_milli=cpu_milli, memory_mib=memory_mib, gpu_models=_gpu_models(spec, product_keys),
        priority=_priority(priority),
        created=created, started=started, finished=finished, restarts=restarts,
        workload_ref=(str(workload_ref.get("name") or ""), str(workload_ref.get("podGroup") or ""),
                      str(workload_ref.get("podGroupReplicaKey") or "")) if workload_ref else None,
        scheduling_group=str(scheduling_group.get("podGroupName") or "") or None if scheduling_group else None,
        waiting=_waiting(status), claim_templates=claim_templates, shared_claim=shared_claim,
    )


# ----------------------------------------------------------------------------- resources


def _container_requests(spec: Mapping[str, Any]) -> tuple[Decimal, int, int, set[str]]:
    """(GPUs, CPU millicores, memory MiB, other extended resources) as the scheduler sums them."""
    totals = {"gpu": Decimal(0), "cpu": Decimal(0), "memory": Decimal(0)}
    init_peak = {"gpu": Decimal(0), "cpu": Decimal(0), "memory": Decimal(0)}
    other: set[str] = set()
    for list_name in ("initContainers", "containers"):
        containers = spec.get(list_name) or []
        if not isinstance(containers, list):
            raise _Problem(f"spec.{list_name}", "Invalid: must be a list")
        for index, container in enumerate(containers):
            if not isinstance(container, Mapping):
                raise _Problem(f"spec.{list_name}[{index}]", "Invalid: must be a mapping")
            path = f"spec.{list_name}[{index}].resources"
            asked = _requests(container.get("resources"), path, other)
            sidecar = list_name == "initContainers" and container.get("restartPolicy") == "Always"
            for resource, amount in asked.items():
                if list_name == "containers" or sidecar:
                    totals[resource] += amount
                else:  # an ordinary init container runs alone, before the app containers
                    init_peak[resource] = max(init_peak[resource], amount)
    effective = {r: max(totals[r], init_peak[r]) for r in totals}
    if effective["gpu"] != effective["gpu"].to_integral_value():
        raise _Problem("spec.containers", f"Invalid: {GPU_RESOURCE} must be whole, got {effective['gpu']}")
    # The trace's own bounds (scheduler.trace.generic): a pod past them would be quarantined by
    # the replay; the import says so here, on the pod's row.
    if effective["gpu"] > MAX_GPUS_PER_POD:
        raise _Problem("spec.containers", f"Invalid: {effective['gpu']:.0f} {GPU_RESOURCE} in one pod; "
                                          f"at most {MAX_GPUS_PER_POD:,}")
    for resource, scale, unit in (("cpu", Decimal(1000), "millicores"), ("memory", 1 / _MIB, "MiB")):
        if effective[resource] * scale > MAX_RESOURCE_PER_POD:
            raise _Problem("spec.containers", f"Invalid: {resource} of more than {MAX_RESOURCE_PER_POD:,} {unit} "
                                              "in one pod")
    cpu_milli = int((effective["cpu"] * 1000).to_integral_value(rounding=ROUND_CEILING))
    memory_mib = int((effective["memory"] / _MIB).to_integral_value(rounding=ROUND_CEILING))
    return effective["gpu"], cpu_milli, memory_mib, other


def _requests(resources: Any, path: str, other: set[str]) -> dict[str, Decimal]:
    if resources is None:
        return {}
    if not isinstance(resources, Mapping):
        raise _Problem(path, "Invalid: must be a mapping")
    requests = _mapping(resources, "requests")
    limits = _mapping(resources, "limits")
    asked: dict[str, Decimal] = {}
    for resource, key in ((GPU_RESOURCE, "gpu"), ("cpu", "cpu"), ("memory", "memory")):
        # A request defaults to the limit (always so for extended resources such as GPUs).
        where, value = ("requests", requests[resource]) if resource in requests else ("limits", limits.get(resource))
        if value is None:
            continue
        try:
            amount = parse_quantity(value)
        except ValueError as error:
            reason = str(error) if str(error).startswith("not a") else f"not a quantity: {shown(value)} ({error})"
            raise _Problem(f"{path}.{where}.{resource}", f"Invalid: {reason}") from None
        if amount < 0:
            raise _Problem(f"{path}.{where}.{resource}", f"Invalid: must be >= 0, got {shown(value)}")
        asked[key] = amount
    other.update(k for k in {*requests, *limits} if "/" in k and k != GPU_RESOURCE)
    return asked


def _claim_gpus(spec: Mapping[str, Any], status: Mapping[str, Any], namespace: str, groups: GroupObjects,
                claim_users: Mapping[tuple[str, str], int]) -> float:
    """GPUs of the pod's DRA claims: a template's are the pod's own; a named claim shared by
    several pods of the dump is split between them (GPU sharing)."""
    claims = spec.get("resourceClaims") or []
    if not isinstance(claims, list):
        return 0.0
    generated = {str(s.get("name")): s.get("resourceClaimName")
                 for s in _listed(status.get("resourceClaimStatuses"), "status.resourceClaimStatuses")
                 if isinstance(s, Mapping)}
    total = 0.0
    for index, claim in enumerate(claims):
        if not isinstance(claim, Mapping):
            continue
        source = _mapping(claim, "source") or claim  # pre-1.31 nesting
        path = f"spec.resourceClaims[{index}]"
        if source.get("resourceClaimName"):
            key = (namespace, str(source["resourceClaimName"]))
            if key not in groups.claim_gpus:
                raise _Problem(path, f"DraClaimNotInDump: ResourceClaim {key[1]!r} is not in the dump "
                                     "(add resourceclaims to the kubectl get)")
            gpus = groups.claim_gpus[key]
            if gpus is None:
                raise _Problem(path, f"DraAllDevices: ResourceClaim {key[1]!r} asks for all devices of a node "
                                     "and was not allocated: its GPU count is unknown")
            total += gpus / max(1, claim_users.get(key, 1))
        elif source.get("resourceClaimTemplateName"):
            made = generated.get(str(claim.get("name")))
            if made and (namespace, str(made)) in groups.claim_gpus and groups.claim_gpus[(namespace, str(made))] is not None:
                total += groups.claim_gpus[(namespace, str(made))] or 0.0
                continue
            key = (namespace, str(source["resourceClaimTemplateName"]))
            if key not in groups.template_gpus:
                raise _Problem(path, f"DraClaimNotInDump: ResourceClaimTemplate {key[1]!r} is not in the dump "
                                     "(add resourceclaimtemplates to the kubectl get)")
            gpus = groups.template_gpus[key]
            if gpus is None:
                raise _Problem(path, f"DraAllDevices: ResourceClaimTemplate {key[1]!r} asks for all devices "
                                     "of a node: its GPU count is unknown")
            total += gpus
    return total


def named_claims(obj: SourceObject) -> list[tuple[str, str]]:
    """(namespace, claim) of the named (shared) ResourceClaims a pod uses."""
    spec = _mapping(obj.value, "spec")
    found = []
    claims = spec.get("resourceClaims")
    for claim in claims if isinstance(claims, list) else []:  # not a list: no claim (as _claim_gpus)
        if isinstance(claim, Mapping):
            source = _mapping(claim, "source") or claim
            if source.get("resourceClaimName"):
                found.append((obj.namespace or "default", str(source["resourceClaimName"])))
    return found


def _gpu_models(spec: Mapping[str, Any], product_keys: tuple[str, ...]) -> tuple[str, ...]:
    """GPU products the pod may run on: node selector, or required node affinity terms (ORed)."""
    selector = _mapping(spec, "nodeSelector")
    for key in product_keys:
        if selector.get(key):
            return (str(selector[key]),)
    affinity = _mapping(spec, "affinity")
    node_affinity = _mapping(affinity, "nodeAffinity")
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
    models: list[str] = []
    where = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    for t, term in enumerate(_listed(terms, where)):
        expressions = term.get("matchExpressions") if isinstance(term, Mapping) else None
        for e, expression in enumerate(_listed(expressions, f"{where}[{t}].matchExpressions")):
            if (isinstance(expression, Mapping) and expression.get("key") in product_keys
                    and expression.get("operator") == "In"):
                values = _listed(expression.get("values"), f"{where}[{t}].matchExpressions[{e}].values")
                models += [str(v) for v in values if str(v) not in models]
    return tuple(models)


# --------------------------------------------------------------------------------- times


def _run_times(meta: Mapping[str, Any], status: Mapping[str, Any], phase: str
               ) -> tuple[datetime | None, datetime | None, int]:
    starts, finishes, restarts = [], [], 0
    for list_name in ("initContainerStatuses", "containerStatuses"):
        for index, container in enumerate(_listed(status.get(list_name), f"status.{list_name}")):
            if not isinstance(container, Mapping):
                continue
            count = container.get("restartCount")
            if isinstance(count, int) and not isinstance(count, bool) and list_name == "containerStatuses":
                if not 0 <= count <= MAX_RESTARTS:
                    raise _Problem(f"status.{list_name}[{index}].restartCount",
                                   f"Invalid: must be 0..{MAX_RESTARTS:,}, got {shown(count)}")
                restarts += count
            for state_name in ("state", "lastState"):
                state = _mapping(container, state_name)
                for kind in ("running", "terminated"):
                    detail = _mapping(state, kind)
                    path = f"status.{list_name}[{index}].{state_name}.{kind}"
                    if detail.get("startedAt"):
                        starts.append(_time(detail["startedAt"], f"{path}.startedAt"))
                    if kind == "terminated" and state_name == "state" and detail.get("finishedAt"):
                        finishes.append(_time(detail["finishedAt"], f"{path}.finishedAt"))
    started = _time(status.get("startTime"), "status.startTime") or min((s for s in starts if s), default=None)
    finished: datetime | None = None
    if phase in _TERMINAL:
        finished = max((f for f in finishes if f), default=None) or _last_transition(status)
    elif meta.get("deletionTimestamp"):  # being deleted: it stops at the end of its grace period
        finished = _time(meta["deletionTimestamp"], "metadata.deletionTimestamp")
    if started is not None and finished is not None and finished < started:
        finished = started  # clocks of kubelet and API server disagree by a second: no negative run
    if phase in _TERMINAL and started is not None and finished is None:
        raise _Problem("status.containerStatuses", f"NoFinishTime: the pod {phase} but shows no finish time")
    return started, finished, restarts


def _last_transition(status: Mapping[str, Any]) -> datetime | None:
    times = [_time(c.get("lastTransitionTime"), f"status.conditions[{i}].lastTransitionTime")
             for i, c in enumerate(_listed(status.get("conditions"), "status.conditions"))
             if isinstance(c, Mapping) and c.get("lastTransitionTime")]
    return max((t for t in times if t), default=None)


def _waiting(status: Mapping[str, Any]) -> str:
    conditions = status.get("conditions")
    for condition in conditions if isinstance(conditions, list) else []:
        if isinstance(condition, Mapping) and condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            text = f"{condition.get('reason') or 'Unschedulable'}: {condition.get('message') or ''}".strip()
            return " ".join(text.split())[:200]
    reason = status.get("reason") or ""
    return f"{status.get('phase') or 'Pending'} {reason}".strip()


def _time(value: Any, field: str) -> datetime | None:
    try:
        return parse_time(value)
    except (ValueError, TypeError) as error:
        if "outside the years" in str(error):
            raise _Problem(field, f"OutsideCalendar: {shown(value)} is {error}") from None
        raise _Problem(field, f"Invalid: not an RFC 3339 time: {shown(value)}") from None


def all_times(value: Any) -> list[datetime]:
    """Every RFC 3339 time in an object's metadata and status: the latest says when it was dumped."""
    found: list[datetime] = []
    if not isinstance(value, Mapping):
        return found

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for key, item in node.items():
                if isinstance(item, str) and (key.endswith("Timestamp") or key.endswith("Time") or key.endswith("At")
                                              or key == "time"):
                    try:
                        moment = parse_time(item)
                    except ValueError:
                        continue
                    if moment is not None:
                        found.append(moment)
                else:
                    walk(item)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(value.get("metadata"))
    walk(value.get("status"))
    return found


# ------------------------------------------------------------------------------ helpers


def _priority(value: Any) -> int | None:
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    if not -MAX_PRIORITY - 1 <= value <= MAX_PRIORITY:  # spec.priority is a Kubernetes int32
        raise _Problem("spec.priority", f"Invalid: a 32-bit whole number, got {shown(value)}")
    return value


def _listed(value: Any, field: str) -> list[Any]:
    """A list field of the object (missing: empty); anything else is the pod's rejected row."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Problem(field, f"Invalid: must be a list, got {kind_of(value)}")
    return value


def _mapping(value: Any, key: str) -> Mapping[str, Any]:
    found = value.get(key) if isinstance(value, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _controller(references: Any) -> Owner | None:
    """The controller owner reference, else the first one."""
    if not isinstance(references, list):
        return None
    refs = [r for r in references if isinstance(r, Mapping) and r.get("kind") and r.get("name")]
    chosen = next((r for r in refs if r.get("controller") is True), refs[0] if refs else None)
    if chosen is None:
        return None
    return Owner(str(chosen["kind"]), str(chosen["name"]), str(chosen.get("uid") or ""))
