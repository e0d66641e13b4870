"""`gpu-finops import kubectl`: ``kubectl get pods -A -o json`` and ``kubectl get nodes -o json``
dumps (plus, optionally, Kueue objects) → the replay's inputs (see the package docstring).

Every object of the pod dumps ends up in exactly one place: a Pod becomes a workload, a member
of one, or a rejected row; a gang or DRA object (PodGroup, Workload, Job, ResourceClaim, ...)
is read to rebuild gangs and GPU counts; anything else is a rejected row saying so. The same
pod found twice (dumps taken at two times, concatenated) is read once: the later copy wins and
the earlier is a rejected row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from gpu_finops.importers import kube
from gpu_finops.importers.allocation_keys import AllocationKeys
from gpu_finops.importers.calendar import keep_to_calendar
from gpu_finops.importers.documents import SourceObject, read_objects
from gpu_finops.importers.dra import DraDump, collect_dra
from gpu_finops.importers.kueue import KueueImport, import_kueue
from gpu_finops.importers.nodes import NodeLabels, node_row
from gpu_finops.importers.objects import collect_group_objects
from gpu_finops.importers.output import ImportResult, write_import
from gpu_finops.importers.pods import all_times, named_claims, pod_record, reject
from gpu_finops.importers.records import GroupObjects, NodeRow, PodRecord, Rejected
from gpu_finops.importers.workloads import Options, build_workloads
from scheduler.errors import InputError


@dataclass(frozen=True)
class ImportOptions:
    """What the user may set on any importer (CLI flags of `gpu-finops import`)."""

    tenant_label: str | None = None
    observed_at: str | None = None  # ISO 8601; default: the latest time found in the dumps
    pending_duration_s: float | None = None
    gpu_product_label: str | None = None
    block_label: str | None = None
    rack_label: str | None = None
    label_keys: str | None = None  # the allow-list of allocation keys (None: the defaults)

    @property
    def labels(self) -> NodeLabels:
        def first(extra: str | None, keys: tuple[str, ...]) -> tuple[str, ...]:
            return ((extra,) if extra else ()) + tuple(k for k in keys if k != extra)

        return NodeLabels(first(self.gpu_product_label, kube.GPU_PRODUCT_LABELS),
                          first(self.block_label, kube.BLOCK_LABELS), first(self.rack_label, kube.RACK_LABELS))

    def level_of(self, key: str) -> str | None:
        labels = self.labels
        if key in labels.gpu_product:
            return "gpu_model"
        return kube.level_of_label(key, block_labels=labels.block, rack_labels=labels.rack)

    def observed(self, times: Iterable[datetime]) -> datetime:
        if self.observed_at:
            try:
                moment = kube.parse_time(self.observed_at)
            except ValueError:
                raise InputError("--observed-at", f"not an ISO 8601 time: {self.observed_at!r}") from None
            assert moment is not None
            return moment
        latest = max(times, default=None)
        if latest is None:
            raise InputError("--observed-at", "the dumps hold no time at all: give the time they were taken")
        return latest


def read_nodes(paths: list[Path], labels: NodeLabels, dra_gpus: dict[str, tuple[int, str]] | None = None
               ) -> tuple[list[NodeRow], list[Rejected], list[datetime]]:
    """GPU nodes of the node dumps, rejected objects, and every time they show. `dra_gpus`:
    the GPUs (and product) of the nodes whose devices ResourceSlices publish."""
    rows: list[NodeRow] = []
    rejected: list[Rejected] = []
    times: list[datetime] = []
    first_seen: dict[str, SourceObject] = {}
    for path in paths:
        for obj in read_objects(path):
            times += all_times(obj.value)
            if obj.kind != "Node":
                rejected.append(reject(obj, "kind", f"NotANode: {obj.kind or 'an object without a kind'} in a node dump"))
                continue
            if obj.name in first_seen:
                earlier = first_seen[obj.name]
                rejected.append(Rejected(obj.source, obj.row, "Node", "", obj.name, "metadata.name",
                                         f"Duplicate: node {obj.name!r} already read from {earlier.source} row {earlier.row}"))
                continue
            first_seen[obj.name] = obj
            row = node_row(obj, labels, (dra_gpus or {}).get(obj.name))
            (rows if isinstance(row, NodeRow) else rejected).append(row)  # type: ignore[arg-type]
    return rows, rejected, times


def read_pods(objects: list[SourceObject], product_keys: tuple[str, ...], priority_classes: dict[str, int],
              dra: DraDump | None = None
              ) -> tuple[list[PodRecord], list[Rejected], GroupObjects, list[datetime], int, dict[str, int]]:
    """Pod records, rejected objects, gang objects, every time shown, the number of pods and
    the gang / claim objects read, by kind. `dra`: the dump's DRA objects (with devices: the
    pods' claims are named in the trace)."""
    groups, used = collect_group_objects(objects)
    if dra is not None and dra.has_devices:
        groups.dra_devices = True
        used = used + [obj for obj in dra.used if obj.kind in ("ResourceSlice", "DeviceClass")]
    groups.priority_classes.update(priority_classes)
    used_ids = {id(obj) for obj in used}
    pods = [obj for obj in objects if obj.kind == "Pod"]
    rejected = [reject(obj, "kind", f"NotAPod: {obj.kind or 'an object without a kind'} is not read by the importer")
                for obj in objects if obj.kind != "Pod" and id(obj) not in used_ids]
    latest: dict[str, SourceObject] = {}
    for obj in pods:  # the same pod twice: the later copy knows more
        identity = str(obj.metadata.get("uid") or "") or f"{obj.namespace}/{obj.name}"
        if identity in latest:
            earlier = latest[identity]
            rejected.append(reject(earlier, "metadata.uid", f"Superseded: the same pod again at {obj.source} "
                                   f"row {obj.row}, which is the one read"))
        latest[identity] = obj
    claim_users = Counter(claim for obj in latest.values() for claim in named_claims(obj))
    records: list[PodRecord] = []
    times = [t for obj in objects for t in all_times(obj.value)]
    for obj in latest.values():
        record = pod_record(obj, groups, claim_users, product_keys)
        (records if isinstance(record, PodRecord) else rejected).append(record)  # type: ignore[arg-type]
    return records, rejected, groups, times, len(pods), dict(Counter(obj.kind for obj in used))


def import_kubectl(pods: list[Path], nodes: list[Path], out: Path, *, kueue: Path | None = None,
                   options: ImportOptions | None = None) -> ImportResult:
    """Read the dumps, rebuild workloads and write everything into ``out``."""
    options = options or ImportOptions()
    labels = options.labels
    objects = [obj for path in pods for obj in read_objects(path)]
    dra = collect_dra(objects)
    node_rows, rejected, node_times = read_nodes(nodes, labels, dra.node_gpus() if dra.has_devices else None)
    kueue_import: KueueImport | None = import_kueue(kueue, node_rows, options.level_of) if kueue else None
    records, pod_rejected, groups, pod_times, input_pods, objects_read = read_pods(
        objects, labels.gpu_product, kueue_import.priority_classes if kueue_import else {}, dra)
    records, outliers, times, calendar_warning = keep_to_calendar(records, [*pod_times, *node_times])
    observed_at = options.observed(times)
    built = build_workloads(records, groups, Options(observed_at, options.tenant_label, options.pending_duration_s,
                                                     options.level_of, AllocationKeys.parse(options.label_keys)))
    result = ImportResult("kubectl", [*pods, *nodes, *([kueue] if kueue else [])], built, node_rows,
                          rejected + pod_rejected + outliers, observed_at, kueue_import,
                          warnings=[calendar_warning] if calendar_warning else [], input_pods=input_pods,
                          objects_read=objects_read, dra=dra if dra.has_devices else None)
    write_import(out, result)
    return result
