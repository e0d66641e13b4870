"""From the DRA files to the replay: the devices of each node, and each workload's claims.

`dra_setup` checks what upstream's API validation and the scheduler's PreFilter would refuse
(each one line naming the file, the object and the field): a slice for a node the cluster
file does not have; a node whose `gpus` differs from the GPUs its slices publish (its counter
sets plus its devices without counters); a device drawing on a counter set no slice declares;
a selector that does not compile. A workload naming a template or claim the files do not
have can never run: it is a rejected row (`UnknownResourceClaim`), as a pod waits for ever
upstream.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from scheduler.admission.objects import KueueConfiguration
from scheduler.dra.allocator import Matcher
from scheduler.dra.inputs import read_dra_files
from scheduler.dra.kueue import kueue_device_counts
from scheduler.dra.objects import DraInputs, PodClaims
from scheduler.dra.state import DraState, NodeDevices, node_devices
from scheduler.errors import InputError
from scheduler.eventlog.columns import arrow_table
from scheduler.eventlog.schema import DEVICE_SCHEMA, PendingReason
from scheduler.model import Cluster, Workload
from scheduler.trace.generic import RejectedRow


@dataclass(frozen=True)
class DraSetup:
    state: DraState
    claims_of: dict[str, PodClaims]  # workload id -> its pods' claims
    warnings: tuple[str, ...] = ()


def dra_setup(inputs: DraInputs, cluster: Cluster, source: Path, cluster_source: Path) -> DraState:
    """The DRA state of a replay on `cluster` (`source`, `cluster_source`: for messages)."""
    from scheduler.dra.cel import DeviceMatcher

    matcher = DeviceMatcher()
    _check_selectors(inputs, matcher, source)
    index = {node.name: number for number, node in enumerate(cluster.nodes)}
    for name in inputs.devices:
        if name not in index:
            raise InputError(source, f"ResourceSlice for node {name!r}, which the cluster file does not have",
                             field="spec.nodeName")
    nodes: list[NodeDevices | None] = [None] * len(cluster.nodes)
    for name, devices in inputs.devices.items():
        for device in devices:
            for set_name, _ in device.consumes:
                if (device.driver, device.pool, set_name) not in inputs.counter_sets:
                    raise InputError(source, f"device {device.name} of node {name} consumes counter set "
                                             f"{set_name!r}, which no ResourceSlice of pool {device.pool} declares",
                                     field="spec.devices.consumesCounters.counterSet")
        published = node_devices(devices, inputs.counter_sets)
        node = cluster.nodes[index[name]]
        if published.units != node.gpus:
            raise InputError(cluster_source, f"node {name} has {node.gpus} GPUs, but its ResourceSlices publish "
                                             f"{published.units} (counter sets plus devices without counters)",
                             field="gpus")
        nodes[index[name]] = published
    return DraState(nodes, inputs.classes, matcher)


def _check_selectors(inputs: DraInputs, matcher: Matcher, source: Path) -> None:
    from scheduler.dra.cel import DeviceMatcher

    assert isinstance(matcher, DeviceMatcher)
    owners: list[tuple[str, str, tuple[str, ...]]] = [
        (f"DeviceClass {c.name}", "spec.selectors", c.selectors) for c in inputs.classes.values()]
    for claim in (*inputs.templates.values(), *inputs.claims.values()):
        for request in claim.requests:
            for alternative in request.alternatives:
                owners.append((f"{claim.kind} {claim.name}", f"request {request.label(request.alternatives.index(alternative))}",
                               alternative.selectors))
    for owner, where, selectors in owners:
        for number, expression in enumerate(selectors):
            problem = matcher.compile(expression)
            if problem is not None:
                raise InputError(source, f"{owner}: {where}, selector #{number}: CEL compile error: {problem}",
                                 field="cel.expression")


def resolve_claims(workloads: list[Workload], inputs: DraInputs) -> tuple[dict[str, PodClaims], list[tuple[Workload, str, str]]]:
    """Each claim-asking workload's `PodClaims`, and (workload, field, message) for those
    naming a template or claim the DRA files do not have."""
    claims_of: dict[str, PodClaims] = {}
    unknown: list[tuple[Workload, str, str]] = []
    for workload in workloads:
        if not workload.claims_devices:
            continue
        missing = [name for name in workload.claim_templates if name not in inputs.templates]
        if missing:
            unknown.append((workload, "resource_claim_templates",
                            f"ResourceClaimTemplate {missing[0]} is not in the DRA inputs"))
            continue
        if workload.shared_claim is not None and workload.shared_claim not in inputs.claims:
            unknown.append((workload, "resource_claim", f"ResourceClaim {workload.shared_claim} is not in the DRA inputs"))
            continue
        per_pod = tuple(inputs.templates[name] for name in workload.claim_templates)
        shared = inputs.claims[workload.shared_claim] if workload.shared_claim is not None else None
        claims_of[workload.workload_id] = PodClaims(workload.workload_id, per_pod, shared)
    return claims_of, unknown


def load_dra(path: Path, cluster_path: Path, cluster: Cluster, workloads: list[Workload],
             kueue: KueueConfiguration | None = None) -> tuple[DraSetup, list[Workload], list[RejectedRow]]:
    """The DRA file of a replay: its state, the workloads that can ask for their claims (with
    Kueue's count of their devices, `kueue`: the queues file's Configuration), and rejected
    rows for the others."""
    inputs = read_dra_files([path])
    state = dra_setup(inputs, cluster, path, cluster_path)
    claims_of, unknown = resolve_claims(workloads, inputs)
    rows = [RejectedRow(w.source_row, w.workload_id, field, f"{PendingReason.UNKNOWN_RESOURCE_CLAIM}: {message}",
                        code=PendingReason.UNKNOWN_RESOURCE_CLAIM, message=message) for w, field, message in unknown]
    refused = {w.workload_id for w, _, _ in unknown}
    kept = [w for w in workloads if w.workload_id not in refused]
    warnings: tuple[str, ...] = ()
    if kueue is not None:
        kept, inadmissible, warnings = kueue_device_counts(kept, inputs, kueue, state.matcher)
        rows += [RejectedRow(w.source_row, w.workload_id, field, f"{PendingReason.INADMISSIBLE_RESOURCE_CLAIM}: {message}",
                             code=PendingReason.INADMISSIBLE_RESOURCE_CLAIM, message=message)
                 for w, field, message in inadmissible]
    return DraSetup(state, claims_of, warnings), kept, rows


def devices_table(state: DraState, cluster: Cluster) -> pa.Table:
    """Every published device as `DEVICE_SCHEMA` rows (``devices.parquet``), in node and slice order."""
    from scheduler.dra.allocator import Pick
    from scheduler.dra.state import device_share

    rows: dict[str, list] = {field.name: [] for field in DEVICE_SCHEMA}
    for node, devices in zip(cluster.nodes, state.nodes, strict=True):
        if devices is None:
            continue
        for index, device in enumerate(devices.devices):
            rows["node"].append(node.name)
            rows["driver"].append(device.driver)
            rows["pool"].append(device.pool)
            rows["device"].append(device.name)
            rows["gpu_unit"].append(devices.unit_of[index])
            rows["share_milli"].append(device_share(devices, Pick(0, "", index)))
            rows["partition"].append(bool(device.consumes) and not devices.whole[index])
            profile = dict(device.attributes).get(f"{device.driver}/profile")
            rows["profile"].append(None if profile is None else str(profile))
    return arrow_table(rows, DEVICE_SCHEMA)
