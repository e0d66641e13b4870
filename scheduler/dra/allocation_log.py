"""Which devices each pod took: the rows of ``device_allocations.parquet`` (runs with ``--dra``).

The event log says how many GPUs a DRA pod holds (its devices' share); this log says which
devices, so the cost can name a MIG profile. One row per pod placement (its ``reserved`` row,
or its ``started`` row when it was not reserved first: a reservation turning into a run keeps
its devices) × device, carrying that event row's ``seq`` and ``time_s`` so it joins the event
log exactly. A PodGroup's shared claim is allocated by one pod (``allocated_by_pod``); every
other pod of the group gets rows for the same devices with ``in_pod_gpus`` false: their share
is in the allocating pod's ``gpus`` (docs/dra.md).

Only a DRA replay builds one: the emitter calls `record` for pod rows only when it has a log.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import pyarrow as pa

from scheduler.dra.allocator import Pick
from scheduler.dra.objects import PodClaims
from scheduler.dra.state import DraHolding, DraState, NodeDevices, device_share
from scheduler.eventlog.columns import arrow_table
from scheduler.eventlog.schema import DEVICE_ALLOCATION_SCHEMA

COUNT_CLAIM_KIND = "count"  # a plain GPU count on a DRA node: a claim for that many whole GPUs


class HoldsDevices(Protocol):
    """What the log reads of a pod's holding (`scheduler.state.cluster_state.Holding`)."""

    @property
    def dra(self) -> DraHolding | None: ...


class DeviceAllocationLog:
    """Collects the rows while the replay runs; `table` gives them in event order."""

    def __init__(self, dra: DraState, holdings: Mapping[tuple[str, int], HoldsDevices],
                 node_names: tuple[str, ...], claims_of: Mapping[str, PodClaims]) -> None:
        self._dra = dra
        self._holdings = holdings
        self._node_names = node_names
        self._claims_of = claims_of
        self._recorded: dict[tuple[str, int], HoldsDevices] = {}  # the holding each pod's rows describe
        self._shared_by: dict[str, int] = {}  # shared claim -> the pod that allocated it
        self._rows: dict[str, list] = {field.name: [] for field in DEVICE_ALLOCATION_SCHEMA}

    def record(self, seq: int, time_s: float, event: str, workload_id: str, pod: int, node: int) -> None:
        """The devices of pod `pod` as its event row `seq` places it on `node` (nothing when the
        row only turns its reservation into a run, or it holds no device)."""
        key = (workload_id, pod)
        holding = self._holdings.get(key)
        if holding is None or holding.dra is None or self._recorded.get(key) is holding:
            return
        self._recorded[key] = holding
        devices = holding.dra
        claims = self._claims_of.get(workload_id)
        place = (seq, time_s, event, workload_id, pod, self._node_names[node])
        node_devices = self._dra.nodes[node]
        if node_devices is not None:
            for pick in devices.picks:
                self._add(place, node_devices, pick, _claim_of(claims, pick), pod, True)
        # Shared allocations are kept by claim name (a named claim is allocated once, whichever
        # workloads name it)
        claim_name = devices.shared_claim
        if claim_name is None or claims is None or claims.shared is None:
            return
        shared = self._dra.shared.get(claim_name)
        if devices.allocated_shared:
            self._shared_by[claim_name] = pod
        if shared is None:
            return
        shared_devices = self._dra.nodes[shared.node]
        if shared_devices is None:
            return
        allocated_by = self._shared_by.get(claim_name, pod)
        for pick in shared.picks:
            self._add(place, shared_devices, pick, (claims.shared.kind, claims.shared.name), allocated_by,
                      allocated_by == pod)

    def _add(self, place: tuple, devices: NodeDevices, pick: Pick, claim: tuple[str, str | None],
             allocated_by: int, in_pod_gpus: bool) -> None:
        rows = self._rows
        for name, value in zip(("seq", "time_s", "event", "workload_id", "pod_index", "node"), place, strict=True):
            rows[name].append(value)
        device = devices.devices[pick.device]
        rows["driver"].append(device.driver)
        rows["pool"].append(device.pool)
        rows["device"].append(device.name)
        rows["gpu_unit"].append(devices.unit_of[pick.device])
        rows["share_milli"].append(device_share(devices, pick))
        rows["partition"].append(bool(device.consumes) and not devices.whole[pick.device])
        profile = dict(device.attributes).get(f"{device.driver}/profile")
        rows["profile"].append(None if profile is None else str(profile))
        rows["claim_kind"].append(claim[0])
        rows["claim"].append(claim[1])
        rows["request"].append(pick.request)
        rows["allocated_by_pod"].append(allocated_by)
        rows["in_pod_gpus"].append(in_pod_gpus)

    def table(self) -> pa.Table:
        return arrow_table(self._rows, DEVICE_ALLOCATION_SCHEMA)


def _claim_of(claims: PodClaims | None, pick: Pick) -> tuple[str, str | None]:
    """(kind, name) of the claim a pod's own pick satisfied: one of its templates' claims, or
    the count claim of a plain GPU count."""
    if claims is None or pick.claim >= len(claims.per_pod):
        return COUNT_CLAIM_KIND, None
    spec = claims.per_pod[pick.claim]
    return spec.kind, spec.name
