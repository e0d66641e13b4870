"""Pods → workloads (rows of the generic trace), and what became of every pod.

A gang's pods become one workload: ``pods`` is its number of members (a recreated pod is
another attempt of the same member), ``min_count`` its quorum (the gang object's, else every
member), ``submit_time`` its first pod's creation and ``duration_s`` the time it ran once
complete: from its last member's start to its last member's finish (a pod still running
when the dump was taken is cut there). Members that ask for different resources (a leader
and its workers) become one workload per shape, tied together by ``parent_group`` so that
the gang scheduler starts them together. A gang no member of which ever started is rejected
(``NeverStarted``: the dump holds no run time for it) unless a pending duration is given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from gpu_finops.importers.allocation_keys import AllocationKeys
from gpu_finops.importers.gangs import (
    KUEUE_PREFERRED_TOPOLOGY,
    KUEUE_PRIORITY_CLASS,
    KUEUE_QUEUE,
    KUEUE_REQUIRED_TOPOLOGY,
    Membership,
    membership,
    standalone_kind,
)
from gpu_finops.importers.kube import iso
from gpu_finops.importers.records import GroupObjects, PodRecord, Rejected

MIN_DURATION_S = 1.0  # API times have 1 s resolution: a pod that ran "0 s" ran under a second


@dataclass(frozen=True, slots=True)
class TraceRow:
    """One row of the generic trace (times in seconds since the import's start)."""

    workload_id: str
    submit_time: datetime
    duration_s: float
    pods: int
    min_count: int
    gpus_per_pod: float
    gpu_model: str
    cpu_milli_per_pod: int
    memory_mib_per_pod: int
    tenant: str
    queue: str
    priority: int
    topology_required: str = ""
    topology_preferred: str = ""
    parent_group: str = ""
    parent_min_groups: int | None = None
    kind: str = "batch"
    gpu_utilization: float | None = None  # mean engine-active fraction (DCGM); None: unknown
    schedule_timeout_s: int | None = None  # the PodGroup's scheduleTimeoutSeconds
    labels: str = ""  # allocation labels and annotations, the trace's canonical JSON cell
    disruption_mode: str = ""  # "all", or "" (Single, the API default)
    on_pod_loss: str = ""  # restart_group / keep_running / replace_pod; "": the kind's default
    resource_claim_templates: str = ""  # DRA: namespace/name of each template, `|` between them
    resource_claim: str = ""  # DRA: the PodGroup's shared claim


@dataclass(frozen=True, slots=True)
class PodOutcome:
    """A row of pods.csv: one input pod and what it became."""

    pod: PodRecord
    role: str  # workload | member | rejected
    workload_id: str = ""
    member: str = ""
    attempt: int = 1
    mechanism: str = ""
    note: str = ""


@dataclass
class Options:
    observed_at: datetime  # when the dump was taken: running pods are cut there
    tenant_label: str | None = None
    pending_duration_s: float | None = None  # run time given to gangs that never started
    level_of: Callable[[str], str | None] = lambda key: None  # node label key → topology level
    allocation_keys: AllocationKeys = field(default_factory=lambda: AllocationKeys.parse(None))


@dataclass
class Built:
    rows: list[TraceRow] = field(default_factory=list)
    outcomes: list[PodOutcome] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    running_at_dump: int = 0
    used_ids: set[str] = field(default_factory=set)


def build_workloads(pods: Iterable[PodRecord], objects: GroupObjects, options: Options) -> Built:
    built = Built()
    groups: dict[str, list[tuple[PodRecord, Membership]]] = {}
    for pod in pods:
        member = membership(pod, objects) or Membership(
            f"{pod.namespace}/{pod.name}", "pod", pod.name, min_count=1, kind=standalone_kind(pod))
        groups.setdefault(member.group_id, []).append((pod, member))
    for group_id, members in groups.items():
        _build_group(group_id, members, objects, options, built)
    built.rows.sort(key=lambda r: (r.submit_time, r.workload_id))
    built.outcomes.sort(key=lambda o: (o.pod.source, o.pod.row))
    return built


def _build_group(group_id: str, members: list[tuple[PodRecord, Membership]], objects: GroupObjects,
                 options: Options, built: Built) -> None:
    first = members[0][1]
    standalone = first.mechanism == "pod"
    slots: dict[str, list[PodRecord]] = {}
    for pod, member in members:
        slots.setdefault(member.slot, []).append(pod)
    for attempts in slots.values():
        attempts.sort(key=lambda p: (p.created, p.name))
    slots = _cap_by_parallelism(group_id, slots, objects)
    starts = {s: min(p.started for p in a if p.started) for s, a in slots.items() if any(p.started for p in a)}
    if not starts and options.pending_duration_s is None:
        waiting = next((p.waiting for a in slots.values() for p in a if p.waiting), "")
        for pod, _ in members:
            what = "the pod never started" if standalone else f"no member of {group_id} started"
            built.rejected.append(Rejected(pod.source, pod.row, "Pod", pod.namespace, pod.name, "status.startTime",
                                           f"NeverStarted: {what} before the dump ({waiting or pod.phase}); "
                                           "it has no run time to replay (--pending-duration gives it one)"))
            built.outcomes.append(PodOutcome(pod, "rejected", mechanism=first.mechanism, note="never started"))
        return
    finishes = [_finish(p, options.observed_at) for a in slots.values() for p in a if p.started]
    built.running_at_dump += sum(1 for a in slots.values() for p in a if p.started and p.finished is None)
    submit = min(p.created for a in slots.values() for p in a)
    if not starts:
        duration = float(options.pending_duration_s or MIN_DURATION_S)
        note = "never started: run time from --pending-duration"
    elif len(starts) == len(slots):
        duration = (max(finishes) - max(starts.values())).total_seconds()
        if duration <= 0:  # members that ended before the last one started: the whole span
            duration = (max(finishes) - min(starts.values())).total_seconds()
        note = ""
    else:
        duration = (max(finishes) - min(starts.values())).total_seconds()
        note = f"incomplete gang: {len(starts)} of {len(slots)} members started; run time is the observed span"
    duration = max(MIN_DURATION_S, duration)
    if note:
        built.notes.append(f"{group_id}: {note}")
    representative = {s: next((p for p in reversed(a) if p.started), a[-1]) for s, a in slots.items()}
    shapes: dict[tuple, list[str]] = {}
    for slot, pod in representative.items():
        shapes.setdefault((pod.gpus, pod.cpu_milli, pod.memory_mib, pod.gpu_models), []).append(slot)
    total = len(slots)
    wanted = first.min_count or total
    if wanted > total:
        built.notes.append(f"{group_id}: quorum {wanted} but {total} members in the dump; quorum set to {total}")
        wanted = total
    all_pods = [p for a in slots.values() for p in a]
    common = _common_fields(group_id, all_pods, first, objects, options, built)
    parts = _parts(group_id, shapes, members, first)
    parent, parent_min = first.parent or "", first.parent_min
    if len(parts) > 1 and not parent:
        parent, parent_min = group_id, len(parts)
    elif len(parts) > 1:
        built.notes.append(f"{group_id}: members of different shapes inside a CompositePodGroup: "
                           "each shape is its own workload under the composite")
    part_of_slot = {}
    for workload_id, (shape, part_slots) in parts.items():
        count = len(part_slots)
        minimum = count if wanted == total else max(1, count - (total - wanted))
        gpus, cpu, memory, models = shape
        workload_id = _unique(built, workload_id)
        built.rows.append(TraceRow(
            workload_id, submit, duration, count, minimum, gpus, "|".join(models), cpu, memory,
            parent_group=parent, parent_min_groups=parent_min if parent else None, **common,
        ))
        part_of_slot.update(dict.fromkeys(part_slots, workload_id))
    for slot, attempts in slots.items():
        for number, pod in enumerate(attempts, start=1):
            built.outcomes.append(PodOutcome(
                pod, "workload" if standalone else "member", part_of_slot[slot], slot, number, first.mechanism, note))


def _parts(group_id: str, shapes: dict[tuple, list[str]], members: list[tuple[PodRecord, Membership]],
           first: Membership) -> dict[str, tuple[tuple, list[str]]]:
    """One workload per request shape; named by the members' role when they share one."""
    if len(shapes) == 1:
        shape, slots = next(iter(shapes.items()))
        return {group_id: (shape, sorted(slots))}
    role_of = {m.slot: m.role for _, m in members}
    parts: dict[str, tuple[tuple, list[str]]] = {}
    ordered = sorted(shapes.items(), key=lambda item: (-item[0][0], item[0][1:3], sorted(item[1])))
    for number, (shape, slots) in enumerate(ordered):
        roles = {role_of.get(s, "") for s in slots}
        label = roles.pop() if len(roles) == 1 and "" not in roles else f"part{number}"
        name = f"{group_id}/{label}"
        if name in parts:
            name = f"{group_id}/{label}-{number}"
        parts[name] = (shape, sorted(slots))
    return parts


def _common_fields(group_id: str, pods: list[PodRecord], first: Membership, objects: GroupObjects,
                   options: Options, built: Built) -> dict:
    """Tenant, queue, priority, topology, kind and labels: the same for every part of a gang."""
    tenant = next((p.labels[options.tenant_label] for p in pods
                   if options.tenant_label and p.labels.get(options.tenant_label)), pods[0].namespace)
    queue_pod = next((p for p in pods if p.labels.get(KUEUE_QUEUE)), None)
    queue = f"{queue_pod.namespace}/{queue_pod.labels[KUEUE_QUEUE]}" if queue_pod else ""
    priority = max((p.priority for p in pods if p.priority is not None), default=0)
    workload_class = next((p.labels[KUEUE_PRIORITY_CLASS] for p in pods if p.labels.get(KUEUE_PRIORITY_CLASS)), "")
    if workload_class:
        if workload_class in objects.priority_classes:
            priority = objects.priority_classes[workload_class]  # Kueue's priority wins for its workloads
        else:
            built.notes.append(f"{group_id}: WorkloadPriorityClass {workload_class!r} is not among the Kueue "
                               f"objects; pod priority {priority} kept")
    required = first.topology_key or next((p.annotations[KUEUE_REQUIRED_TOPOLOGY] for p in pods
                                           if p.annotations.get(KUEUE_REQUIRED_TOPOLOGY)), "")
    preferred = next((p.annotations[KUEUE_PREFERRED_TOPOLOGY] for p in pods
                      if p.annotations.get(KUEUE_PREFERRED_TOPOLOGY)), "")
    return {
        "tenant": tenant, "queue": queue, "priority": priority, "kind": first.kind,
        "topology_required": _level(group_id, required, options, built),
        "topology_preferred": _level(group_id, preferred, options, built),
        "schedule_timeout_s": first.schedule_timeout_s,
        "disruption_mode": first.disruption_mode, "on_pod_loss": first.on_pod_loss,
        "resource_claim_templates": "|".join(pods[0].claim_templates), "resource_claim": pods[0].shared_claim or "",
        "labels": options.allocation_keys.select(
            group_id, [(p.labels, p.annotations) for p in sorted(pods, key=lambda p: (p.created, p.name))],
            built.notes),
    }


def _level(group_id: str, key: str, options: Options, built: Built) -> str:
    if not key:
        return ""
    level = options.level_of(key)
    if level in (None, "gpu_model"):
        built.notes.append(f"{group_id}: topology key {key!r} is not a zone, block, rack or host label; ignored")
        return ""
    return level or ""


def _finish(pod: PodRecord, observed_at: datetime) -> datetime:
    return pod.finished if pod.finished is not None else max(observed_at, pod.started or observed_at)


def _cap_by_parallelism(group_id: str, slots: dict[str, list[PodRecord]], objects: GroupObjects
                        ) -> dict[str, list[PodRecord]]:
    """A NonIndexed Job's retries carry no index: more pods than its parallelism are
    attempts of its parallel members, taken in creation order."""
    namespace, _, rest = group_id.partition("/")
    kind, _, name = rest.partition("/")
    parallelism = objects.job_parallelism.get((namespace, name)) if kind == "job" else None
    if not parallelism or len(slots) <= parallelism or any(s.isdigit() for s in slots):
        return slots
    pods = sorted((p for attempts in slots.values() for p in attempts), key=lambda p: (p.created, p.name))
    capped: dict[str, list[PodRecord]] = {}
    for number, pod in enumerate(pods):
        capped.setdefault(str(number % parallelism), []).append(pod)
    return capped


def _unique(built: Built, workload_id: str) -> str:
    """Workload ids are unique: a clash (a part named like another group) gets a number."""
    candidate, number = workload_id, 1
    while candidate in built.used_ids:
        number += 1
        candidate = f"{workload_id}#{number}"
    built.used_ids.add(candidate)
    if candidate != workload_id:
        built.notes.append(f"workload id {workload_id!r} is taken: this one is {candidate!r}")
    return candidate


def describe_window(rows: list[TraceRow]) -> str:
    if not rows:
        return "no workload"
    return f"{iso(min(r.submit_time for r in rows))} to {iso(max(r.submit_time for r in rows))}"
