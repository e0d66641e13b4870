"""`replay`: read the inputs, run the scheduler, write the run directory atomically."""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.parquet as pq

from scheduler import BUILD
from scheduler.admission.port import ReplayPort
from scheduler.compiled import build_record
from scheduler.errors import InputError
from scheduler.eventlog.files import NotOurs, remove_orphaned_staging, replace_folder
from scheduler.eventlog.schema import RUN_FILES, SCHEMA_VERSION
from scheduler.eventlog.writer import EventLogWriter
from scheduler.eventlog.writes import (
    WriteFailed,
    check_not_an_input,
    is_disk_error,
    output_lock,
    sha256_file,
)
from scheduler.framework.profile import load_profile
from scheduler.lifecycle import AdmissionLayer
from scheduler.model import Workload
from scheduler.plugins.names import PRIORITY_LEVEL_SEARCH
from scheduler.runner import Replay, loading_collections
from scheduler.trace.checks import check_against_cluster, write_rejected_csv
from scheduler.trace.cluster import cluster_to_arrow, workloads_to_arrow
from scheduler.trace.detect import TRACE_FORMATS, load_trace
from scheduler.trace.inventories import read_any_cluster
from scheduler.trace.io import check_replaceable, not_utf8_error, spooled
from scheduler.verify import Verifier

if TYPE_CHECKING:
    from scheduler.admission.manifests import QueueConfig

DEFAULT_START = datetime(2026, 11, 2, tzinfo=UTC)  # a Monday; never the wall clock


@dataclass(frozen=True)
class ReplayResult:
    run_dir: Path
    run_id: str
    workloads: int
    rejected_rows: int
    events: int
    horizon_s: float
    warnings: tuple[str, ...] = ()  # e.g. unknown fields of the queues file
    settled: str | None = None  # the replay stopped at quiescence: who waits for good, and why


def parse_start(value: str | None) -> datetime:
    if not value:
        return DEFAULT_START
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InputError("--start", f"not an ISO 8601 time: {value!r}") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def read_resizes(path: Path, workloads: dict[str, Workload]) -> list[tuple[str, float, int]]:
    """Elastic min_count changes: CSV `workload_id, time_s, min_count` (time in seconds from
    the run start). Each row must name a replayed workload, with 1 <= min_count <= pods."""
    import csv

    rows: list[tuple[str, float, int]] = []
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = {"workload_id", "time_s", "min_count"} - set(reader.fieldnames or ())
            if missing:
                raise InputError(path, "required column missing", row=1, field=sorted(missing)[0])
            for number, record in enumerate(reader, start=2):
                wid = (record["workload_id"] or "").strip()
                if wid not in workloads:
                    raise InputError(path, f"no replayed workload {wid!r}", row=number, field="workload_id")
                try:
                    at_s, min_count = float(record["time_s"]), int(record["min_count"])
                except (TypeError, ValueError):
                    raise InputError(path, "time_s must be a number and min_count a whole number",
                                     row=number, field="time_s") from None
                if not 1 <= min_count <= workloads[wid].pods or at_s < 0:
                    raise InputError(path, f"min_count must be 1..{workloads[wid].pods} and time_s >= 0",
                                     row=number, field="min_count")
                rows.append((wid, at_s, min_count))
    except UnicodeDecodeError:
        raise not_utf8_error(path) from None  # names the line and the byte
    except OSError as error:
        raise InputError(path, f"cannot read: {error.strerror}") from None
    return rows


def _admission(queues: Path | None, verifier: Verifier | None = None) -> tuple[
        QueueConfig | None, Callable[[ReplayPort], AdmissionLayer] | None]:
    """The Kueue admission layer when a queues file is given; no queues, no admission."""
    if queues is None:
        return None, None
    from scheduler.admission.kueue import kueue_admission
    from scheduler.admission.manifests import read_queue_config

    config = read_queue_config(queues)
    # The replay terminates preempted pods for the profile's grace period and releases them
    # afterwards: Kueue frees their quota at that release, so it adds no grace of its own.
    return config, kueue_admission(config, eviction_grace_s=0.0, verifier=verifier)


def run_horizon_s(last_event_s: float, last_submit_s: float) -> float:
    """The replay window [0, horizon): whole hours up to the last event. A pod that ends exactly
    on the hour ends the run there (its interval closes at the horizon, no idle hour after it);
    only a submission exactly on the hour needs the next hour to lie inside the window."""
    horizon_s = max(3600.0, math.ceil(max(last_event_s, last_submit_s) / 3600.0) * 3600.0)
    if last_submit_s >= horizon_s:
        horizon_s += 3600.0
    return horizon_s


def replay(
    trace: Path,
    cluster_path: Path,
    out: Path,
    *,
    profile: str | None = None,
    seed: int = 42,
    start: str | None = None,
    queues: Path | None = None,
    trace_format: str = "auto",
    run_id: str | None = None,
    progress: Callable[[float, int, float], None] | None = None,
    resizes: Path | None = None,
    verifier: Verifier | None = None,
    dra: Path | None = None,
) -> ReplayResult:
    """Replay `trace` on `cluster_path` into the run directory `out` (written atomically).

    `verifier`: check every fast path against the plain computation as the replay goes
    (slower; stops with a `VerificationError` at the first difference; `replay --verify`).

    An input that is not a regular file (a pipe, ``<(…)``) is read once into a temporary copy
    of the same name first: the trace and the cluster are read more than once (format
    detection, checksum), which would consume a pipe."""
    with spooled([trace, cluster_path, queues, resizes, dra]) as (trace_copy, cluster_copy, queues_copy,
                                                                  resizes_copy, dra_copy):
        assert trace_copy is not None and cluster_copy is not None
        with loading_collections():
            return _replay(trace_copy, cluster_copy, out, profile=profile, seed=seed, start=start,
                           queues=queues_copy, trace_format=trace_format, run_id=run_id,
                           progress=progress, resizes=resizes_copy, verifier=verifier, dra=dra_copy)


def _replay(
    trace: Path,
    cluster_path: Path,
    out: Path,
    *,
    profile: str | None = None,
    seed: int = 42,
    start: str | None = None,
    queues: Path | None = None,
    trace_format: str = "auto",
    run_id: str | None = None,
    progress: Callable[[float, int, float], None] | None = None,
    resizes: Path | None = None,
    verifier: Verifier | None = None,
    dra: Path | None = None,
) -> ReplayResult:
    if trace_format not in TRACE_FORMATS:
        raise InputError("--format", f"unknown trace format {trace_format!r}; known: {', '.join(TRACE_FORMATS)}")
    check_run_folder(out)  # before any work: the old folder is replaced whole
    try:
        check_not_an_input([trace, cluster_path, queues, resizes, dra], folders=[out], what="--out")
    except NotOurs as not_ours:
        raise InputError(out, str(not_ours).removeprefix(f"{Path(out).resolve()}: ")) from None
    chosen = load_profile(profile)
    warnings: list[str] = [f"profile {chosen.name}: {name} is KEP-5710's search for the lowest sufficient priority "
                           "level, a proposal upstream dropped, not upstream behaviour"
                           for name in chosen.post_filter if name == PRIORITY_LEVEL_SEARCH]
    cluster = read_any_cluster(cluster_path, warnings=warnings)
    # Relative times take --start (else DEFAULT_START); Unix times (aaic) map to UTC.
    loaded, anchor, _ = load_trace(trace, trace_format, parse_start(start) if start else None, DEFAULT_START)
    accepted, refused = check_against_cluster(loaded.workloads, cluster)
    queue_config, admission_factory = _admission(queues, verifier)
    dra_setup = None
    if dra is not None:
        from scheduler.dra.setup import load_dra

        dra_setup, accepted, unknown_claims = load_dra(dra, cluster_path, cluster, accepted,
                                                       queue_config.configuration if queue_config else None)
        refused = sorted(refused + unknown_claims, key=lambda r: r.row)
        warnings.extend(dra_setup.warnings)
    refused_by_id = {r.workload_id: r for r in refused}
    # Rows that can never run on this cluster still arrive, and are rejected in the log.
    never_runs = [(w, refused_by_id[w.workload_id].code or "", refused_by_id[w.workload_id].message or "")
                  for w in loaded.workloads if w.workload_id in refused_by_id]
    warnings.extend(loaded.warnings)
    if queue_config is not None:
        from scheduler.admission.admits_nothing import admission_warnings
        from scheduler.admission.objects import taint_nodes, unmatched_flavor_warnings

        warnings.extend(queue_config.warnings)
        warnings.extend(admission_warnings(queue_config, [w.queue for w in accepted]))
        warnings.extend(unmatched_flavor_warnings(cluster, queue_config))
        cluster = taint_nodes(cluster, queue_config.flavors)  # the flavors' nodeTaints, for placement
    resize_rows = read_resizes(resizes, {w.workload_id: w for w in accepted}) if resizes else []
    run_id = run_id or f"{trace.stem}-{chosen.name}-s{seed}"

    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_orphaned_staging(out)
    staging = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        writer = EventLogWriter(staging / RUN_FILES["events"])
        try:
            engine = Replay(cluster, accepted, never_runs, chosen, writer, seed, progress=progress,
                            admission_factory=admission_factory, verifier=verifier, dra=dra_setup)
            for workload_id, at_s, min_count in resize_rows:
                engine.schedule_resize(workload_id, at_s, min_count)
            last = engine.run()
        except BaseException:
            writer.abort()
            raise
        writer.close()
        last_submit = max((w.submit_time_s for w in loaded.workloads), default=0.0)
        horizon_s = run_horizon_s(last, last_submit)
        everything = sorted(accepted + [w for w, _, _ in never_runs],
                            key=lambda w: (w.submit_time_s, w.source_row))
        pq.write_table(workloads_to_arrow(everything), staging / RUN_FILES["workloads"])
        pq.write_table(cluster_to_arrow(cluster), staging / RUN_FILES["cluster"])
        if queue_config is not None:
            from scheduler.admission.tables import write_queue_table

            write_queue_table(queue_config, staging / RUN_FILES["queues"])
        if dra_setup is not None:
            from scheduler.dra.setup import devices_table

            pq.write_table(devices_table(dra_setup.state, cluster), staging / RUN_FILES["devices"])
            assert engine.emitter.device_allocations is not None
            pq.write_table(engine.emitter.device_allocations.table(), staging / RUN_FILES["device_allocations"])
        rejected_rows = list(loaded.rejected) + refused
        if rejected_rows:
            write_rejected_csv(sorted(rejected_rows, key=lambda r: r.row), staging / RUN_FILES["rejected"])
        inputs = ({"trace": trace, "cluster": cluster_path} | ({"queues": queues} if queues else {})
                  | ({"dra": dra} if dra else {}))
        manifest = {
            "run_id": run_id,
            "schema_version": SCHEMA_VERSION,
            "seed": seed,
            "profile": chosen.name,
            "profile_source": chosen.source,
            "start": anchor.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "horizon_s": horizon_s,
            "last_event_s": last,
            **({"settled": engine.settled} if engine.settled else {}),
            "inputs": {k: {"file": p.name, "sha256": sha256_file(p)} for k, p in inputs.items()},
            "build": build_record(BUILD),  # which code wrote this run (the event log is the same under each build)
            "counts": {
                "input_rows": loaded.input_rows,
                "workloads": len(accepted),
                "rejected_rows": len(rejected_rows),
                "pods": sum(w.pods for w in accepted),
                "events": writer.rows,
                "nodes": len(cluster.nodes),
                "gpus": cluster.total_gpus,
                "by_event": dict(sorted(writer.counts.items())),
            },
        }
        (staging / RUN_FILES["run"]).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        with output_lock(out):  # one replay at a time swaps into one folder
            check_run_folder(out)  # again: files may have been put there while the replay ran
            replace_folder(staging, out)  # one atomic swap where the OS has it
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        if is_disk_error(error):  # a full disk: one line naming the folder; the previous run stays
            raise WriteFailed(out, error) from None
        raise
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ReplayResult(out, run_id, len(accepted), len(rejected_rows), writer.rows, horizon_s, tuple(warnings),
                        engine.settled)


def check_run_folder(out: Path) -> None:
    """Refuse an ``--out`` that is not exactly a previous run folder (or new, or empty). A link
    to a folder is followed: the folder it points to is the one replaced."""
    check_replaceable(Path(out).resolve(), RUN_FILES["run"], RUN_FILES.values(),
                      required_keys=("run_id", "schema_version"))

