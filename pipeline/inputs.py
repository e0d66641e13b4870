"""Reading and checking the build's inputs: run directories and the price book.

Every problem raises `PipelineError` with one line naming the file, the row (where there is one)
and the field, so the CLI can print it without a traceback.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import PipelineError
from scheduler.eventlog.schema import (
    CLUSTER_SCHEMA,
    EVENT_SCHEMA,
    METADATA_KEY,
    RUN_FILES,
    SCHEMA_VERSION,
    WORKLOAD_SCHEMA,
)

PRICING_CATEGORIES = ("Standard", "Committed", "Dynamic")
PRICE_COLUMNS = (
    "list_usd_per_gpu_hour",
    "contracted_usd_per_gpu_hour",
    "spot_usd_per_gpu_hour",
)


@dataclass(frozen=True)
class RunInputs:
    """One checked run directory, its tables loaded in memory."""

    run_dir: Path
    run_id: str
    profile: str | None
    seed: int | None
    start: datetime  # naive UTC
    horizon_s: float
    events: pa.Table
    workloads: pa.Table
    cluster: pa.Table

    @property
    def end(self) -> datetime:
        from datetime import timedelta

        return self.start + timedelta(seconds=self.horizon_s)


@dataclass(frozen=True)
class PriceRow:
    gpu_model: str
    list_usd_per_gpu_hour: float
    contracted_usd_per_gpu_hour: float
    spot_usd_per_gpu_hour: float


def _read_parquet(path: Path, expected: pa.Schema) -> pa.Table:
    if not path.is_file():
        raise PipelineError(f"{path}: file missing from the run directory")
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several types for unreadable files
        raise PipelineError(f"{path}: not a readable Parquet file ({exc})") from exc
    version = (table.schema.metadata or {}).get(METADATA_KEY)
    if version is not None and version.decode() != SCHEMA_VERSION:
        raise PipelineError(
            f"{path}: schema version {version.decode()!r} in the Parquet metadata, "
            f"expected {SCHEMA_VERSION!r}"
        )
    for field in expected:
        if field.name not in table.schema.names:
            raise PipelineError(f"{path}: field '{field.name}' missing (expected {field.type})")
        found = table.schema.field(field.name).type
        if found != field.type:
            raise PipelineError(
                f"{path}: field '{field.name}' has type {found}, expected {field.type}"
            )
        if not field.nullable and table.column(field.name).null_count:
            raise PipelineError(f"{path}: field '{field.name}' has nulls but must not")
    extra = [name for name in table.schema.names if name not in expected.names]
    if extra:
        raise PipelineError(f"{path}: field '{extra[0]}' is not in the published schema")
    # drop the writer's metadata and order columns like the contract
    return table.select(expected.names).cast(expected)


def _parse_start(run_json: Path, value: object) -> datetime:
    if not isinstance(value, str):
        raise PipelineError(f"{run_json}: field 'start' must be an ISO 8601 string")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise PipelineError(f"{run_json}: field 'start' is not ISO 8601: {value!r}") from exc
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed


def read_run_dir(run_dir: Path) -> RunInputs:
    """Check a run directory against the event-log contract and load it."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise PipelineError(f"{run_dir}: not a run directory")
    run_json = run_dir / RUN_FILES["run"]
    if not run_json.is_file():
        raise PipelineError(f"{run_json}: file missing from the run directory")
    try:
        meta = json.loads(run_json.read_text())
    except json.JSONDecodeError as exc:
        raise PipelineError(f"{run_json}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    if not isinstance(meta, dict):
        raise PipelineError(f"{run_json}: expected a JSON object")
    for key in ("run_id", "schema_version", "start", "horizon_s"):
        if key not in meta:
            raise PipelineError(f"{run_json}: field '{key}' missing")
    if str(meta["schema_version"]) != SCHEMA_VERSION:
        raise PipelineError(
            f"{run_json}: field 'schema_version' is {meta['schema_version']!r}, "
            f"this pipeline reads {SCHEMA_VERSION!r}"
        )
    horizon = meta["horizon_s"]
    if not isinstance(horizon, int | float) or isinstance(horizon, bool) or horizon <= 0:
        raise PipelineError(f"{run_json}: field 'horizon_s' must be a positive number")
    cluster = _read_parquet(run_dir / RUN_FILES["cluster"], CLUSTER_SCHEMA)
    for row_number, category in enumerate(cluster.column("pricing_category").to_pylist(), 1):
        if category not in PRICING_CATEGORIES:
            raise PipelineError(
                f"{run_dir / RUN_FILES['cluster']}: row {row_number}: field 'pricing_category' "
                f"is {category!r}, expected one of {', '.join(PRICING_CATEGORIES)}"
            )
    for row_number, (model, gpus) in enumerate(
        zip(cluster.column("gpu_model").to_pylist(), cluster.column("gpus").to_pylist(), strict=True),
        1,
    ):
        if gpus > 0 and not model:
            raise PipelineError(
                f"{run_dir / RUN_FILES['cluster']}: row {row_number}: field 'gpu_model' is empty "
                "on a node with GPUs (it could not be priced)"
            )
    seed = meta.get("seed")
    return RunInputs(
        run_dir=run_dir,
        run_id=str(meta["run_id"]),
        profile=meta.get("profile"),
        seed=int(seed) if seed is not None else None,
        start=_parse_start(run_json, meta["start"]),
        horizon_s=float(horizon),
        events=_read_parquet(run_dir / RUN_FILES["events"], EVENT_SCHEMA),
        workloads=_read_parquet(run_dir / RUN_FILES["workloads"], WORKLOAD_SCHEMA),
        cluster=cluster,
    )


def read_price_book(path: Path, required_models: set[str]) -> list[PriceRow]:
    """Read the price book CSV; every GPU model of the clusters must have a price."""
    path = Path(path)
    if not path.is_file():
        raise PipelineError(f"{path}: price book not found")
    rows: list[PriceRow] = []
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        for column in ("gpu_model", *PRICE_COLUMNS):
            if column not in header:
                raise PipelineError(f"{path}: field '{column}' missing from the header")
        # row numbers count the header as row 1, like a spreadsheet
        for row_number, record in enumerate(reader, 2):
            model = (record.get("gpu_model") or "").strip()
            if not model:
                raise PipelineError(f"{path}: row {row_number}: field 'gpu_model' is empty")
            prices: dict[str, float] = {}
            for column in PRICE_COLUMNS:
                raw = (record.get(column) or "").strip()
                try:
                    value = float(raw)
                except ValueError:
                    raise PipelineError(
                        f"{path}: row {row_number}: field '{column}' is not a number: {raw!r}"
                    ) from None
                if not math.isfinite(value) or value < 0:
                    raise PipelineError(
                        f"{path}: row {row_number}: field '{column}' must be a finite "
                        f"non-negative price, got {raw!r}"
                    )
                prices[column] = value
            if any(existing.gpu_model == model for existing in rows):
                raise PipelineError(
                    f"{path}: row {row_number}: field 'gpu_model' {model!r} listed twice"
                )
            rows.append(PriceRow(model, **prices))
    missing = sorted(required_models - {row.gpu_model for row in rows})
    if missing:
        raise PipelineError(
            f"{path}: field 'gpu_model': no price for {', '.join(map(repr, missing))} "
            "(used by the cluster's nodes)"
        )
    return rows
