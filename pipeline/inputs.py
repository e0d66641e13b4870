"""Reading and checking the build's inputs: run directories and the price book.

Every problem raises `PipelineError` with one line naming the file, the row (where there is one)
and the field, so the CLI can print it without a traceback.
"""

from __future__ import annotations

import csv
import json
import math
import re
import reprlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import PipelineError
from pipeline.gpu_models import missing_price_message, resolve_model, split_aliases
from scheduler.eventlog.schema import (
    CLUSTER_SCHEMA,
    DEVICE_ALLOCATION_SCHEMA,
    DEVICE_SCHEMA,
    EVENT_SCHEMA,
    METADATA_KEY,
    QUEUE_SCHEMA,
    READABLE_SCHEMA_VERSIONS,
    RUN_FILES,
    WORKLOAD_COLUMNS_ADDED_SINCE_1_2,
    WORKLOAD_SCHEMA,
    upgrade_events,
)

PRICING_CATEGORIES = ("Standard", "Committed", "Dynamic")
PRICE_COLUMNS = (
    "list_usd_per_gpu_hour",
    "contracted_usd_per_gpu_hour",
    "spot_usd_per_gpu_hour",
)
# The optional `resource` column of the price book: which unit a row prices. GPU rows are per
# GPU-hour and name a GPU model; CPU rows are per core-hour and memory rows per GiB-hour, for
# the nodes of the GPU model they name, or for every other node (CPU-only ones included) when
# `gpu_model` is empty. The price columns keep their names: they hold $ per unit-hour.
PRICED_RESOURCES = ("gpu", "cpu", "memory")
_UNITS = {"gpu": "GPU-hour", "cpu": "core-hour", "memory": "GiB-hour"}
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?(nan|inf|infinity)", re.ASCII | re.IGNORECASE)
"""A price as plain ASCII decimal text (NaN and infinity pass, to be refused as not finite)."""
UNPRICED = "PRICE-ME"
"""What a starter price book (`gpu-finops import`) puts in the price cells of a GPU it knows no
price for: the build stops on it, naming the row, until the user fills in a number."""


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
    cluster_queues: pa.Table  # empty when the replay had no Kueue queues
    devices: pa.Table = dataclass_field(default_factory=DEVICE_SCHEMA.empty_table)  # DRA devices; empty without --dra
    # which devices each DRA pod took; empty without --dra
    device_allocations: pa.Table = dataclass_field(default_factory=DEVICE_ALLOCATION_SCHEMA.empty_table)

    @property
    def end(self) -> datetime:
        from datetime import timedelta

        return self.start + timedelta(seconds=self.horizon_s)


@dataclass(frozen=True)
class PriceRow:
    gpu_model: str | None  # None only on a cpu/memory row that applies to every other node
    list_usd_per_gpu_hour: float
    contracted_usd_per_gpu_hour: float
    spot_usd_per_gpu_hour: float
    resource: str = "gpu"


def _read_parquet(path: Path, expected: pa.Schema) -> pa.Table:
    if not path.is_file():
        raise PipelineError(f"{path}: file missing from the run directory")
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several types for unreadable files
        raise PipelineError(f"{path}: not a readable Parquet file ({exc})") from exc
    version = (table.schema.metadata or {}).get(METADATA_KEY)
    if version is not None and version.decode() not in READABLE_SCHEMA_VERSIONS:
        raise PipelineError(
            f"{path}: schema version {version.decode()!r} in the Parquet metadata, "
            f"expected one of {', '.join(READABLE_SCHEMA_VERSIONS)}"
        )
    if version is not None and expected is EVENT_SCHEMA:
        table = upgrade_events(table, version.decode())  # a 1.1 log gains 1.2's columns
    if expected is WORKLOAD_SCHEMA:
        # a run before 1.3 measured no utilisation: null (unknown), never a guess; one before
        # 1.4 carried no labels: null (none)
        for name in WORKLOAD_COLUMNS_ADDED_SINCE_1_2:
            if name not in table.schema.names:
                table = table.append_column(expected.field(name), pa.nulls(table.num_rows, expected.field(name).type))
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


# pandas (the dashboard, the report) holds timestamps in nanoseconds: a run must lie in here.
_EARLIEST, _LATEST = datetime(1678, 1, 1), datetime(2262, 1, 1)


def _parse_start(run_json: Path, value: object, horizon_s: float) -> datetime:
    if not isinstance(value, str):
        raise PipelineError(f"{run_json}: field 'start' must be an ISO 8601 string")
    try:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is not None:
            parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    except (ValueError, OverflowError) as exc:
        raise PipelineError(f"{run_json}: field 'start' is not ISO 8601: {reprlib.repr(value)}") from exc
    if parsed < _EARLIEST or (_LATEST - parsed).total_seconds() < horizon_s:
        raise PipelineError(
            f"{run_json}: field 'start' {value!r}: the run must lie between {_EARLIEST.year} and "
            f"{_LATEST.year} (timestamps are kept in nanoseconds)"
        )
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
        meta = json.loads(run_json.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise PipelineError(f"{run_json}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    except UnicodeDecodeError:
        raise PipelineError(f"{run_json}: not UTF-8 text") from None
    if not isinstance(meta, dict):
        raise PipelineError(f"{run_json}: expected a JSON object")
    for key in ("run_id", "schema_version", "start", "horizon_s"):
        if key not in meta:
            raise PipelineError(f"{run_json}: field '{key}' missing")
    if str(meta["schema_version"]) not in READABLE_SCHEMA_VERSIONS:
        raise PipelineError(
            f"{run_json}: field 'schema_version' is {meta['schema_version']!r}, "
            f"this pipeline reads {', '.join(READABLE_SCHEMA_VERSIONS)}"
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
    queues_path = run_dir / RUN_FILES["queues"]
    cluster_queues = (
        _read_parquet(queues_path, QUEUE_SCHEMA)
        if queues_path.exists()
        else QUEUE_SCHEMA.empty_table()
    )
    devices_path = run_dir / RUN_FILES["devices"]
    devices = _read_parquet(devices_path, DEVICE_SCHEMA) if devices_path.exists() else DEVICE_SCHEMA.empty_table()
    allocations_path = run_dir / RUN_FILES["device_allocations"]
    device_allocations = (_read_parquet(allocations_path, DEVICE_ALLOCATION_SCHEMA) if allocations_path.exists()
                          else DEVICE_ALLOCATION_SCHEMA.empty_table())
    seed = meta.get("seed")
    return RunInputs(
        run_dir=run_dir,
        run_id=str(meta["run_id"]),
        profile=meta.get("profile"),
        seed=int(seed) if seed is not None else None,
        start=_parse_start(run_json, meta["start"], float(horizon)),
        horizon_s=float(horizon),
        events=_read_parquet(run_dir / RUN_FILES["events"], EVENT_SCHEMA),
        workloads=_read_parquet(run_dir / RUN_FILES["workloads"], WORKLOAD_SCHEMA),
        cluster=cluster,
        cluster_queues=cluster_queues,
        devices=devices,
        device_allocations=device_allocations,
    )


def _utf8_lines(handle: Iterable[str], path: Path) -> Iterator[str]:
    """The file's lines; bytes that are not UTF-8 are a PipelineError, not a traceback."""
    try:
        yield from handle
    except UnicodeDecodeError:
        # The text layer decodes ahead in blocks: the position is found again in the bytes
        # (a price book is small), so the message names the line.
        data = path.read_bytes()
        try:
            data.decode("utf-8")
            where = ""
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            where = f": line {line}, byte {exc.start}"
        raise PipelineError(f"{path}: not UTF-8 text{where}: save the price book as UTF-8 CSV") from None


def _price_header(reader: csv.DictReader, path: Path) -> list[str]:
    try:
        header = [name.strip() for name in reader.fieldnames or []]
    except csv.Error as exc:
        raise PipelineError(f"{path}: row 1: not a CSV header: {exc}") from None
    twice = sorted({name for name in header if name and header.count(name) > 1})
    if twice:
        raise PipelineError(f"{path}: row 1: field '{twice[0]}' appears twice in the header")
    reader.fieldnames = header
    return header


def _price_records(reader: csv.DictReader, path: Path) -> Iterator[tuple[int, dict]]:
    """(spreadsheet row, record) pairs. A malformed line, or a line with more values than the
    header (an unquoted "1,000.50" shifts every price after it), is an error."""
    while True:
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise PipelineError(f"{path}: row {reader.line_num}: malformed CSV: {exc}") from None
        if None in record:  # DictReader keeps surplus values under the key None
            width = len(reader.fieldnames or [])
            raise PipelineError(
                f"{path}: row {reader.line_num}: {width + len(record[None])} values but the "
                f"header has {width} columns"
            )
        yield reader.line_num, record


def read_price_book(
    path: Path,
    required_models: set[str],
    nodes_needing: dict[str, set[str | None]] | None = None,
) -> list[PriceRow]:
    """Read the price book CSV; every GPU model of the clusters must have a GPU price.

    A cluster's model is priced by the row of that model, of one that lists it in its optional
    `aliases` column, or that the built-in normaliser reads it as (`pipeline.gpu_models`); the
    rows returned include one under the cluster's own name for each model priced that way, so
    the models' joins on `gpu_model` find it. `nodes_needing` maps "cpu"/"memory" to the GPU
    models (None = CPU-only nodes) of nodes that have that resource: once the book prices a
    resource at all, each of them must resolve to a row (their model's, or the default row with
    an empty `gpu_model`).
    """
    path = Path(path)
    if not path.is_file():
        raise PipelineError(f"{path}: price book not found")
    rows: list[PriceRow] = []
    aliases: dict[str, str] = {}  # lower-cased alias -> the gpu_model of the row listing it
    alias_rows: dict[str, int] = {}
    # utf-8-sig: a spreadsheet's "CSV UTF-8" starts with a byte-order mark
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(_utf8_lines(handle, path))
        header = _price_header(reader, path)
        for column in ("gpu_model", *PRICE_COLUMNS):
            if column not in header:
                raise PipelineError(f"{path}: field '{column}' missing from the header")
        # row numbers count the header as row 1, like a spreadsheet
        for row_number, record in _price_records(reader, path):
            resource = (record.get("resource") or "gpu").strip().lower()
            if resource not in PRICED_RESOURCES:
                raise PipelineError(
                    f"{path}: row {row_number}: field 'resource' is {reprlib.repr(record.get('resource'))}, "
                    f"expected one of {', '.join(PRICED_RESOURCES)}"
                )
            model = (record.get("gpu_model") or "").strip() or None
            if model is None and resource == "gpu":
                raise PipelineError(f"{path}: row {row_number}: field 'gpu_model' is empty")
            for field, name in (("gpu_model", model), *(("aliases", a) for a in split_aliases(record.get("aliases")))):
                if name is not None and not name.isprintable():  # "A100" + U+200B would never match a node
                    raise PipelineError(f"{path}: row {row_number}: field '{field}': {reprlib.repr(name)} has an "
                                        "invisible or control character")
            prices: dict[str, float] = {}
            for column in PRICE_COLUMNS:
                raw = (record.get(column) or "").strip()
                if raw.upper() == UNPRICED:
                    raise PipelineError(
                        f"{path}: row {row_number}: {model or '(default)'!r} is not priced yet (field "
                        f"'{column}' is {UNPRICED}, as the starter price book of `gpu-finops import` "
                        f"marks a GPU it knows no price for): fill in your $ per {_UNITS[resource]}")
                if not _PLAIN_NUMBER.fullmatch(raw):  # float() also takes "1_000" and full-width digits
                    raise PipelineError(
                        f"{path}: row {row_number}: field '{column}' is not a number (plain digits, no thousands "
                        f"separator): {reprlib.repr(raw)}"
                    )
                value = float(raw)
                if not math.isfinite(value) or value < 0:
                    raise PipelineError(
                        f"{path}: row {row_number}: field '{column}' must be a finite "
                        f"non-negative price, got {reprlib.repr(raw)}"
                    )
                prices[column] = value
            twin = next((r for r in rows if (r.gpu_model or "").lower() == (model or "").lower()
                         and r.resource == resource), None)
            if twin is not None:  # models resolve letter case aside: "a100" and "A100" would be one name, two prices
                what = repr(model) if model else "(default)"
                raise PipelineError(
                    f"{path}: row {row_number}: field 'gpu_model' {what} listed twice"
                    + ("" if twin.gpu_model == model else f" (as {twin.gpu_model!r}: letter case aside)")
                    + ("" if resource == "gpu" else f" for resource {resource!r}")
                )
            rows.append(PriceRow(model, **prices, resource=resource))
            for alias in split_aliases(record.get("aliases")):
                if model is None:
                    raise PipelineError(f"{path}: row {row_number}: field 'aliases': a row without a "
                                        "gpu_model has no aliases (it prices every other node)")
                earlier = aliases.setdefault(alias.lower(), model)
                if earlier != model:
                    raise PipelineError(
                        f"{path}: row {row_number}: field 'aliases': {alias!r} is already an alias of "
                        f"{earlier!r} (row {alias_rows[alias.lower()]}): one name, one price")
                alias_rows.setdefault(alias.lower(), row_number)
    for alias, model in aliases.items():
        owner = next((r.gpu_model for r in rows if r.gpu_model and r.gpu_model.lower() == alias), None)
        if owner is not None and owner != model:
            raise PipelineError(
                f"{path}: row {alias_rows[alias]}: field 'aliases': {alias!r} is the gpu_model of "
                f"another row ({owner!r}): one name, one price")
    return _keyed_rows(path, rows, aliases, required_models, nodes_needing or {})


def _keyed_rows(path: Path, rows: list[PriceRow], aliases: dict[str, str], required_models: set[str],
                nodes_needing: dict[str, set[str | None]]) -> list[PriceRow]:
    """``rows`` plus, for every model of the clusters priced through an alias or the normaliser,
    a copy of its row under the cluster's name; a GPU model nothing prices is an error."""
    keyed = list(rows)
    needing: dict[str, set[str | None]] = {"gpu": set(required_models)}
    for resource, models in nodes_needing.items():
        needing.setdefault(resource, set()).update(models)
    for resource, models in needing.items():
        of_resource = {r.gpu_model: r for r in rows if r.resource == resource}
        if resource != "gpu" and not of_resource:
            continue  # the book does not price this resource
        book_models = [m for m in of_resource if m]
        unpriced: list[str | None] = []
        for model in sorted(models, key=lambda m: m or ""):
            if model in of_resource:
                continue
            found = resolve_model(model, book_models, aliases) if model else None
            if found is not None:
                keyed.append(replace(of_resource[found], gpu_model=model))
            elif None not in of_resource:
                unpriced.append(model)
        if unpriced and resource == "gpu":
            raise PipelineError(f"{path}: field 'gpu_model': {missing_price_message(m for m in unpriced if m)}")
        if unpriced:
            names = sorted(repr(m) if m else "CPU-only nodes" for m in unpriced)
            raise PipelineError(
                f"{path}: field 'gpu_model': no {resource} price for {', '.join(names)} "
                f"(add a {resource} row for them, or one with an empty gpu_model)"
            )
    return keyed
