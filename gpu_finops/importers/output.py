"""Writing an import: trace.csv, cluster.csv, queues.yaml, rejected.csv, pods.csv, import.json,
and a starter price book, prices.csv (`gpu_finops.importers.price_book`).

Written under the write discipline (`scheduler.eventlog.writes.write_files`): each file through
a temporary sibling swapped into place (an interrupted import leaves the previous file or the
new one, never half), never over an input of the import, and never over a file gpu-finops did
not write (the folder's manifest lists what an import wrote, with its hash). A queues.yaml
left by an earlier import with Kueue objects is removed when this one has none, so the folder
always describes one import; a user's own queues.yaml is left alone. prices.csv is never
removed, and a prices.csv of the user's (their own, or the starter book once they edit it) is
kept as it is: the import says so and writes the rest.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpu_finops.importers.dra import DRA_FILE, DraDump
from gpu_finops.importers.kube import iso
from gpu_finops.importers.kueue import KueueImport, render_queues
from gpu_finops.importers.price_book import PRICE_BOOK, STARTER_COLUMNS, StarterBook, starter_book
from gpu_finops.importers.records import NodeRow, Rejected
from gpu_finops.importers.workloads import Built, TraceRow
from scheduler.errors import InputError
from scheduler.eventlog.files import NotOurs
from scheduler.eventlog.writes import neutralise_formula, sha256_file, written_by_us
from scheduler.eventlog.writes import write_files as write_named_files

TRACE_COLUMNS = (
    "workload_id", "submit_time", "duration_s", "pods", "min_count", "gpus_per_pod", "gpu_model",
    "cpu_milli_per_pod", "memory_mib_per_pod", "tenant", "queue", "priority", "topology_required",
    "topology_preferred", "parent_group", "parent_min_groups", "kind", "gpu_utilization",
    "schedule_timeout_s", "labels", "disruption_mode", "on_pod_loss",
)
CLUSTER_COLUMNS = ("node", "gpu_model", "gpus", "cpu_milli", "memory_mib", "zone", "block", "rack", "pricing_category")
REJECTED_COLUMNS = ("source", "row", "kind", "namespace", "name", "field", "reason")
POD_COLUMNS = ("source", "row", "namespace", "pod", "uid", "role", "workload_id", "member", "attempt",
               "mechanism", "phase", "node", "gpus", "created", "started", "finished", "restarts", "note")
DRA_TRACE_COLUMNS = ("resource_claim_templates", "resource_claim")  # only when the dump has ResourceSlices
OUTPUTS = ("trace.csv", "cluster.csv", "queues.yaml", "rejected.csv", "pods.csv", "import.json", DRA_FILE)


@dataclass
class ImportResult:
    source: str  # kubectl | prometheus
    inputs: list[Path]
    built: Built
    nodes: list[NodeRow]
    rejected: list[Rejected]  # nodes and other objects; rejected pods are in built.rejected
    observed_at: datetime
    kueue: KueueImport | None = None
    warnings: list[str] = field(default_factory=list)
    input_pods: int = 0
    objects_read: dict[str, int] = field(default_factory=dict)  # gang and claim objects, by kind
    dra: DraDump | None = None  # the dump's DRA objects, when it has ResourceSlices
    price_book: StarterBook | None = None  # set by write_import
    price_book_kept: bool = False  # the folder's prices.csv is the user's: not rewritten
    fetched: dict[str, str] = field(default_factory=dict)  # a live import's queries: SHA-256 of each answer
    origin: dict[str, Any] = field(default_factory=dict)  # a live import's server, range and step

    @property
    def start(self) -> datetime:
        """The replay's start: the hour of the first submission (relative times count from it)."""
        first = min((r.submit_time for r in self.built.rows), default=self.observed_at)
        return first.astimezone(UTC).replace(minute=0, second=0, microsecond=0)

    @property
    def all_rejected(self) -> list[Rejected]:
        rows = self.rejected + self.built.rejected + (self.kueue.rejected if self.kueue else [])
        return sorted(rows, key=lambda r: (r.source, r.row))

    def summary(self) -> dict[str, Any]:
        roles = Counter(o.role for o in self.built.outcomes)
        return {
            "input_pods": self.input_pods,
            "workloads": len(self.built.rows),
            "pods_as_workloads": roles["workload"],
            "pods_as_members": roles["member"],
            # rejected while grouping (never started) and while reading (no GPU, invalid, superseded)
            "pods_rejected": roles["rejected"] + sum(1 for r in self.rejected if r.kind == "Pod"),
            "running_at_dump": self.built.running_at_dump,
            "nodes": len(self.nodes),
            "gpus": sum(n.gpus for n in self.nodes),
            "rejected_rows": len(self.all_rejected),
            "gang_and_claim_objects": self.objects_read,
            **({"kueue_objects": self.kueue.counts()} if self.kueue else {}),
        }


def write_import(out: Path, result: ImportResult) -> list[Path]:
    """Write every file of ``result`` into ``out`` (see the module docstring)."""
    if not result.nodes:
        raise InputError(result.inputs[-1] if result.inputs else "nodes", "no GPU node in the input: the replay needs "
                         "at least one (see rejected rows with --out for why each node was left out)")
    start = result.start
    files = {
        "trace.csv": csv_text(TRACE_COLUMNS + (DRA_TRACE_COLUMNS if result.dra else ()),
                              (_trace_row(r, start, result.dra is not None) for r in result.built.rows)),
        "cluster.csv": csv_text(CLUSTER_COLUMNS, ([getattr(n, c) for c in CLUSTER_COLUMNS] for n in result.nodes)),
        "rejected.csv": csv_text(REJECTED_COLUMNS, ([getattr(r, c) for c in REJECTED_COLUMNS] for r in result.all_rejected)),
        "pods.csv": csv_text(POD_COLUMNS, _pod_rows(result)),
    }
    if result.kueue is not None:
        files["queues.yaml"] = render_queues(result.kueue)
    if result.dra is not None:
        files[DRA_FILE] = result.dra.render()
    book = starter_book(n.gpu_model for n in result.nodes)
    result.price_book = book
    if written_by_us(Path(out), PRICE_BOOK):
        files[PRICE_BOOK] = csv_text(STARTER_COLUMNS, book.rows)
    else:
        result.price_book_kept = True
        result.warnings.append(f"{PRICE_BOOK} is yours (not written by gpu-finops, or edited since): left as it "
                               f"is; the GPU models of this import: {', '.join(r[0] for r in book.rows)}")
    manifest = {
        "source": result.source,
        "start": iso(start),
        "observed_at": iso(result.observed_at),
        "inputs": {**{p.name: sha256_file(p) for p in result.inputs}, **result.fetched},
        **({"prometheus": result.origin} if result.origin else {}),
        "counts": result.summary(),
        "warnings": result.warnings + (result.kueue.warnings if result.kueue else []),
        "notes": result.built.notes,
        "price_book": {**book.summary(), "written": PRICE_BOOK in files},
    }
    files["import.json"] = json.dumps(manifest, indent=2) + "\n"
    return write_files(Path(out), files, inputs=result.inputs)


def _trace_row(row: TraceRow, start: datetime, dra: bool = False) -> list[Any]:
    return [
        row.workload_id, _number((row.submit_time - start).total_seconds()), _number(row.duration_s), row.pods,
        row.min_count, _number(row.gpus_per_pod), row.gpu_model, row.cpu_milli_per_pod, row.memory_mib_per_pod,
        row.tenant, row.queue, row.priority, row.topology_required, row.topology_preferred, row.parent_group,
        "" if row.parent_min_groups is None else row.parent_min_groups, row.kind,
        "" if row.gpu_utilization is None else _number(row.gpu_utilization),
        "" if row.schedule_timeout_s is None else row.schedule_timeout_s, row.labels, row.disruption_mode,
        row.on_pod_loss,
    ] + ([row.resource_claim_templates, row.resource_claim] if dra else [])


def _pod_rows(result: ImportResult) -> list[list[Any]]:
    """Every input pod: those read (with what they became) and those refused while reading."""
    rows = [(o.pod.source, o.pod.row, _pod_row(o)) for o in result.built.outcomes]
    read = {(o.pod.source, o.pod.row) for o in result.built.outcomes}
    for r in result.rejected:
        if r.kind == "Pod" and (r.source, r.row) not in read:
            rows.append((r.source, r.row, [r.source, r.row, r.namespace, r.name, "", "rejected", "", "", "", "",
                                           "", "", "", "", "", "", "", r.reason]))
    return [row for _, _, row in sorted(rows, key=lambda item: (item[0], item[1]))]


def _pod_row(outcome) -> list[Any]:
    pod = outcome.pod
    return [
        pod.source, pod.row, pod.namespace, pod.name, pod.uid, outcome.role, outcome.workload_id, outcome.member,
        outcome.attempt, outcome.mechanism, pod.phase, pod.node or "", _number(pod.gpus), iso(pod.created),
        iso(pod.started) if pod.started else "", iso(pod.finished) if pod.finished else "", pod.restarts,
        outcome.note,
    ]


def _number(value: float) -> str:
    """Whole numbers without a decimal point; others to the millisecond (or milli-GPU)."""
    rounded = round(float(value), 3)
    return str(int(rounded)) if rounded.is_integer() else repr(rounded)


def csv_text(columns: tuple[str, ...], rows) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        # Cells a spreadsheet would run as a formula get a quote (names and reasons are user text).
        writer.writerow([neutralise_formula(v) for v in row])
    return buffer.getvalue()


def write_files(out: Path, files: dict[str, str], stale: tuple[str, ...] = OUTPUTS,
                inputs: Iterable[Path] = ()) -> list[Path]:
    """Write ``files`` (name → text) into ``out`` under the write discipline
    (`scheduler.eventlog.writes.write_files`): never over one of ``inputs`` nor over a file of
    the user's; an earlier import's ``stale`` file this one does not have is removed."""
    try:
        return write_named_files(out, files, stale=stale, inputs=inputs)
    except NotOurs as refused:
        raise InputError(out, str(refused).removeprefix(f"{out}: ")) from None
