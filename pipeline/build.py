"""Event log → DuckDB marts + FOCUS cost records (+ Hive-partitioned Parquet export).

`build` checks every input first, then works on a temporary copy of the database next to the
target and renames it into place only when every model ran and every audit passed: a failed
build leaves the previous database untouched and nothing half-written behind. The target is
held from the start to the rename (`pipeline.target.BuildTarget`: a database open read-write
elsewhere is refused, a link is followed, a leftover write-ahead log is folded in first).

The FOCUS layout is a build option: FOCUS 1.2 rows (default) or FOCUS 1.3 split cost
allocation (`focus_split=True`). Every model is rebuilt over every run in the database, so the
layout applies to all of them.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import os
import re
import shutil
import uuid
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn

from pipeline.connect import BUILD_TABLE, MARTS_VERSION, connect, plan_as_written
from pipeline.errors import PipelineError
from pipeline.focus.columns import REGISTRY, focus_version, table_columns, virtual_columns
from pipeline.inputs import PriceRow, RunInputs, read_price_book, read_run_dir
from pipeline.runner import MODELS, audit_paths, create_macros, run_model
from pipeline.target import BuildTarget
from scheduler.eventlog.files import (
    FILES_MANIFEST,
    NotOurs,
    check_ours,
    files_in_manifest,
    folder_contents,
    replace_folder,
    write_files_manifest,
)
from scheduler.eventlog.schema import (
    CLUSTER_SCHEMA,
    DEVICE_ALLOCATION_SCHEMA,
    DEVICE_SCHEMA,
    EVENT_SCHEMA,
    QUEUE_SCHEMA,
    SCHEMA_VERSION,
    WORKLOAD_SCHEMA,
)
from scheduler.eventlog.writes import WriteFailed, disk_error_in

FOCUS_TABLE = "focus_cost_records"
DATA_GENERATOR = "gpu-finops"

RAW_RUNS_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("schema_version", pa.string()),
        ("profile", pa.string()),
        ("seed", pa.int64()),
        ("start_ts", pa.timestamp("us")),
        ("horizon_s", pa.float64()),
        ("charge_period_s", pa.float64()),
        ("run_json", pa.string()),
    ]
)
RAW_PRICES_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("resource", pa.string()),
        ("gpu_model", pa.string()),
        ("list_usd_per_gpu_hour", pa.float64()),
        ("contracted_usd_per_gpu_hour", pa.float64()),
        ("spot_usd_per_gpu_hour", pa.float64()),
    ]
)
# raw table -> schema of its columns after run_id
RAW_TABLES: dict[str, pa.Schema] = {
    "raw_events": EVENT_SCHEMA,
    "raw_workloads": WORKLOAD_SCHEMA,
    "raw_nodes": CLUSTER_SCHEMA,
    "raw_cluster_queues": QUEUE_SCHEMA,
    "raw_devices": DEVICE_SCHEMA,
    "raw_device_allocations": DEVICE_ALLOCATION_SCHEMA,
}
# raw table -> the RunInputs attribute it is loaded from
_RUN_TABLE_OF = {
    "raw_events": "events",
    "raw_workloads": "workloads",
    "raw_nodes": "cluster",
    "raw_cluster_queues": "cluster_queues",
    "raw_devices": "devices",
    "raw_device_allocations": "device_allocations",
}
MART_TABLES = tuple(model.name for model in MODELS if model.layer == "marts")
# DuckDB's memory during a build (the process adds the run's Arrow tables and Python).
BUILD_MEMORY_LIMIT = "2.5GiB"


@dataclass(frozen=True)
class BuildResult:
    db: Path
    run_ids: list[str]
    row_counts: dict[str, int] = field(default_factory=dict)
    export: Path | None = None


_DUCK_TYPES = {"string": "VARCHAR", "double": "DOUBLE", "int64": "BIGINT", "int32": "INTEGER",
               "timestamp[us]": "TIMESTAMP", "bool": "BOOLEAN",
               "map<string, string>": "MAP(VARCHAR, VARCHAR)"}


def _with_run_id(table: pa.Table, run_id: str) -> pa.Table:
    run_column = pa.array([run_id] * table.num_rows, type=pa.string())
    return table.add_column(0, "run_id", run_column)


def _create_raw_tables(con: duckdb.DuckDBPyConnection) -> None:
    schemas = {
        **{name: pa.schema([("run_id", pa.string()), *schema]) for name, schema in RAW_TABLES.items()},
        "raw_runs": RAW_RUNS_SCHEMA,
        "raw_prices": RAW_PRICES_SCHEMA,
    }
    for name, schema in schemas.items():
        empty = schema.empty_table()  # noqa: F841 - read by DuckDB's replacement scan
        con.execute(f"create table if not exists {name} as select * from empty")
        # a database written by an older build: add the columns it lacks (their rows get nulls)
        present = {row[0] for row in con.execute(f"select column_name from (describe {name})").fetchall()}
        for column in schema:
            if column.name not in present:
                con.execute(
                    f"alter table {name} add column \"{column.name}\" "
                    f"{_DUCK_TYPES.get(str(column.type), 'VARCHAR')}"
                )


def _load_runs(
    con: duckdb.DuckDBPyConnection,
    runs: list[RunInputs],
    prices: list[PriceRow],
    charge_period_s: int,
) -> None:
    """Replace the raw rows of `runs` (one delete and one insert per raw table)."""
    run_ids = [run.run_id for run in runs]
    placeholders = ", ".join("?" for _ in run_ids)
    # rebuilding a run replaces it: remove every raw row of those runs first
    for name in (*RAW_TABLES, "raw_runs", "raw_prices"):
        con.execute(f"delete from {name} where run_id in ({placeholders})", run_ids)
    for name, schema in RAW_TABLES.items():
        pieces = [_with_run_id(getattr(run, _RUN_TABLE_OF[name]), run.run_id) for run in runs]
        rows = pa.concat_tables(pieces) if pieces else schema.empty_table()  # noqa: F841
        con.execute(f"insert into {name} by name select * from rows")
    run_rows = pa.Table.from_pylist(  # noqa: F841 - read by DuckDB's replacement scan
        [
            {
                "run_id": run.run_id,
                "schema_version": SCHEMA_VERSION,
                "profile": run.profile,
                "seed": run.seed,
                "start_ts": run.start,
                "horizon_s": run.horizon_s,
                "charge_period_s": float(charge_period_s),
                "run_json": (run.run_dir / "run.json").read_text(),
            }
            for run in runs
        ],
        schema=RAW_RUNS_SCHEMA,
    )
    con.execute("insert into raw_runs by name select * from run_rows")
    price_table = pa.Table.from_pylist(  # noqa: F841
        [{"run_id": run.run_id, **price.__dict__} for run in runs for price in prices],
        schema=RAW_PRICES_SCHEMA,
    )
    con.execute("insert into raw_prices by name select * from price_table")


def run_audits(con: duckdb.DuckDBPyConnection) -> list[tuple[str, int, str]]:
    """(audit name, violating rows, first example) for every audit that found something."""
    failures = []
    for path in audit_paths():
        rows = con.execute(path.read_text()).fetchall()
        if rows:
            columns = [d[0] for d in con.description]
            example = dict(zip(columns, rows[0], strict=True))
            failures.append((path.stem, len(rows), repr(example)))
    return failures


def _progress(show: bool) -> Progress | nullcontext:
    if not show:
        return nullcontext()
    return Progress(
        TextColumn("[bold]build[/bold] {task.description:<28}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        console=Console(stderr=True),
        transient=False,
    )


def _temp_sibling(path: Path, suffix: str) -> Path:
    return path.parent / f".{path.name}.{suffix}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def _without_tables(run: RunInputs) -> RunInputs:
    """`run` without its tables (its identity, start and horizon stay)."""
    return dataclasses.replace(
        run,
        events=run.events.schema.empty_table(),
        workloads=run.workloads.schema.empty_table(),
        cluster=run.cluster.schema.empty_table(),
        cluster_queues=run.cluster_queues.schema.empty_table(),
        devices=run.devices.schema.empty_table(),
        device_allocations=run.device_allocations.schema.empty_table(),
    )


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
    Path(f"{path}.wal").unlink(missing_ok=True)
    shutil.rmtree(f"{path}.tmp", ignore_errors=True)  # what DuckDB spilled, if it is still there


def _nodes_needing(runs: list[RunInputs]) -> dict[str, set[str | None]]:
    """GPU models (None = CPU-only) of the nodes that have CPU, and of those that have memory."""
    needing: dict[str, set[str | None]] = {"cpu": set(), "memory": set()}
    for run in runs:
        for row in run.cluster.select(["gpu_model", "cpu_milli", "memory_mib"]).to_pylist():
            model = row["gpu_model"] or None
            if row["cpu_milli"]:
                needing["cpu"].add(model)
            if row["memory_mib"]:
                needing["memory"].add(model)
    return needing


def build(
    run_dirs: list[Path],
    prices: Path,
    db: Path,
    charge_period_s: int = 3600,
    export: Path | None = None,
    show_progress: bool = True,
    focus_split: bool = False,
    fresh: bool = False,
    extra_tables: Mapping[str, pa.Table] | None = None,
    check_target: Callable[[Path], None] | None = None,
) -> BuildResult:
    """Build (or rebuild) the given runs into `db`; other runs already there are kept.

    `focus_split` writes FOCUS 1.3 split cost allocation instead of FOCUS 1.2 rows (for every
    run in the database: all models are rebuilt). `fresh` starts from an empty database
    instead of the current one (a sweep's database holds exactly its runs); `extra_tables`
    are stored as they are (the sweep's scenario table), in the same swap; `check_target`
    is called with the database's path once its lock is held, before anything is read (a
    sweep refuses there a database it did not build).
    """
    if not run_dirs:
        raise PipelineError("build: no run directory given")
    if charge_period_s <= 0:
        raise PipelineError(f"build: charge period must be positive, got {charge_period_s} s")
    if export is not None and Path(export).exists() and not Path(export).is_dir():
        raise PipelineError(f"{export}: not a folder (--export names the folder to write)")
    if export is not None:
        check_export_folder(Path(export) / FOCUS_TABLE)  # before any work: it is replaced whole
    with BuildTarget(Path(db)) as target:  # before anything else: refuse a held database at once
        if check_target is not None:
            check_target(target.path)
        return _build(run_dirs, prices, target, charge_period_s, export, show_progress, focus_split,
                      fresh, extra_tables or {})


def _build(
    run_dirs: list[Path],
    prices: Path,
    target: BuildTarget,
    charge_period_s: int,
    export: Path | None,
    show_progress: bool,
    focus_split: bool,
    fresh: bool = False,
    extra_tables: Mapping[str, pa.Table] | None = None,
) -> BuildResult:
    runs = [read_run_dir(Path(run_dir)) for run_dir in run_dirs]
    seen: dict[str, Path] = {}
    for run in runs:
        if run.run_id in seen:
            raise PipelineError(
                f"{run.run_dir / 'run.json'}: field 'run_id' {run.run_id!r} repeats "
                f"{seen[run.run_id] / 'run.json'}"
            )
        seen[run.run_id] = run.run_dir
    models_in_use = {
        model for run in runs for model in run.cluster.column("gpu_model").to_pylist() if model
    }
    price_rows = read_price_book(Path(prices), models_in_use, _nodes_needing(runs))

    db = target.given
    temp_db = _temp_sibling(target.path, "building")
    try:
        if not fresh:
            target.copy_to(temp_db)
        try:
            con = connect(temp_db, read_only=False)
        except duckdb.Error as exc:  # the existing file is not a DuckDB database
            if disk_error_in(exc) is not None:
                raise
            with open(temp_db, "rb") as handle:
                sqlite = handle.read(16) == b"SQLite format 3\x00"
            why = "it is a SQLite database, not a DuckDB one" if sqlite else str(exc).splitlines()[0]
            raise PipelineError(f"{db}: cannot update it: {why}") from None
        try:
            # Every model runs on every core: sums of doubles are exact (`xsum`, models/macros.sql:
            # fixed-point integers, the same in any order), so the content does not depend on
            # the number of threads or the order a join hands rows on (docs/performance.md).
            # DuckDB holds up to 80 % of the machine's memory by default; a bound makes the
            # largest joins and sorts spill to the database's temporary folder instead, so a
            # month of a 10,000-GPU cluster builds within BUILD_MEMORY_LIMIT plus Python's own.
            con.execute(f"SET memory_limit = '{BUILD_MEMORY_LIMIT}'")
            # A table's content is the contract, not its physical row order (readers order their
            # queries, the export sorts): without keeping the query's order, DuckDB writes a
            # table on every core (the FOCUS table's 6.7 M rows at bench-1m: 17 -> 9 s of wall
            # on two cores, the same CPU) and holds less while it does. An ORDER BY still orders.
            con.execute("SET preserve_insertion_order = false")
            plan_as_written(con)
            _create_raw_tables(con)
            _load_runs(con, runs, price_rows, charge_period_s)
            # The runs' tables are in the database now: their Arrow copies go (a month of a
            # 10,000-GPU cluster's events is half a GiB), so they do not add to the models' peak.
            runs = [_without_tables(run) for run in runs]
            pa.default_memory_pool().release_unused()
            create_macros(con, focus_split=focus_split)
            focus_names = [column.name for column in table_columns(focus_split)]
            with _progress(show_progress) as progress:
                task = None
                if progress is not None:
                    task = progress.add_task("models", total=len(MODELS) + 1)
                for model in MODELS:
                    if progress is not None and task is not None:
                        progress.update(task, description=model.name)
                    if model.name == FOCUS_TABLE:
                        run_model(con, model, focus_names, virtual_columns(focus_split))
                    else:
                        run_model(con, model)
                    if progress is not None and task is not None:
                        progress.advance(task)
                if progress is not None and task is not None:
                    progress.update(task, description="audits")
                failures = run_audits(con)
                if progress is not None and task is not None:
                    progress.advance(task)
            if failures:
                name, count, example = failures[0]
                raise PipelineError(
                    f"{db}: audit '{name}' failed on {count} row(s), e.g. {example}"
                    + (f" (and {len(failures) - 1} more audits)" if len(failures) > 1 else "")
                )
            con.execute(f"create or replace table {BUILD_TABLE} as select ? as marts_version, ? as built_by",
                        [MARTS_VERSION, f"gpu-finops {_generator_version()}"])
            for name, table in (extra_tables or {}).items():
                con.register("extra_table_rows", table)
                con.execute(f'create or replace table "{name}" as select * from extra_table_rows')
                con.unregister("extra_table_rows")
            row_counts = {
                table: (con.execute(f"select count(*) from {table}").fetchone() or (0,))[0]
                for table in MART_TABLES
            }
            export_path = None
            if export is not None:
                export_path = export_focus(
                    con,
                    Path(export),
                    [run.run_id for run in runs],
                    max(r.end for r in runs),
                    focus_split=focus_split,
                )
            con.execute("checkpoint")
        finally:
            con.close()
            shutil.rmtree(f"{temp_db}.tmp", ignore_errors=True)  # spilled data, if DuckDB left any
        target.replace_with(temp_db)
    except (duckdb.Error, OSError) as error:
        _remove(temp_db)
        refused = disk_error_in(error)
        if refused is not None:  # a full disk: one line naming the database; the previous one is intact
            raise WriteFailed(db, refused) from None
        raise
    except BaseException:
        _remove(temp_db)
        raise
    return BuildResult(
        db=db, run_ids=[run.run_id for run in runs], row_counts=row_counts, export=export_path
    )


def _generator_version() -> str:
    try:
        return importlib.metadata.version("gpu-finops")
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return "0.1.0"


def _run_builds(con: duckdb.DuckDBPyConnection, run_ids: list[str] | None) -> list[dict[str, object]]:
    """The code that replayed the exported runs, as each run.json records it (`build`: the
    version, the scheduler's build, the commit), one entry per distinct record; a run written
    before runs recorded their build counts as unknown."""
    rows = con.execute("select run_id, run_json from raw_runs order by run_id").fetchall()
    builds: dict[str, dict[str, object]] = {}
    for run_id, run_json in rows:
        if run_ids is not None and run_id not in run_ids:
            continue
        record = json.loads(run_json).get("build") or {"version": None, "scheduler": None, "commit": None}
        builds.setdefault(json.dumps(record, sort_keys=True), {**record, "runs": []})
        builds[json.dumps(record, sort_keys=True)]["runs"].append(run_id)  # type: ignore[attr-defined]
    return [builds[key] for key in sorted(builds)]


def focus_metadata(
    con: duckdb.DuckDBPyConnection,
    creation_date: datetime,
    focus_split: bool = False,
    run_ids: list[str] | None = None,
) -> dict:
    """FOCUS metadata: the Data Generator object and a Schema object with ColumnDefinition;
    for FOCUS 1.3 (split layout) also the DatasetInstance and Recency objects it introduced.

    The SchemaId is a name-based UUID of the FOCUS version and the column list, so it changes
    exactly when the structure does (the spec asks for a new schema object then) and a rebuild
    of the same runs writes identical metadata.
    """
    types = dict(con.execute(f"select column_name, column_type from (describe {FOCUS_TABLE})").fetchall())
    definitions = []
    for name, duck_type in types.items():
        column = REGISTRY[name]
        definition: dict[str, object] = {"ColumnName": name, "DataType": column.data_type}
        if duck_type == "DOUBLE":
            definition["NumericPrecision"] = 53  # IEEE 754 binary64 significand bits
        elif duck_type == "VARCHAR":
            definition["StringEncoding"] = "UTF-8"
        if name in ("Tags", "AllocatedTags"):
            definition["ProviderTagPrefixes"] = []
        definitions.append(definition)
    version = focus_version(focus_split)
    schema_id = uuid.uuid5(uuid.NAMESPACE_URL, f"{DATA_GENERATOR}/focus-{version}/" + ",".join(types))
    metadata: dict[str, object] = {
        "DataGenerator": {
            "DataGenerator": DATA_GENERATOR,
            "DataGeneratorVersion": _generator_version(),
            "x_RunBuilds": _run_builds(con, run_ids),
        },
        "Schema": [
            {
                "SchemaId": str(schema_id),
                "FocusVersion": version,
                "CreationDate": _iso_z(creation_date),
                "ColumnDefinition": definitions,
            }
        ],
    }
    if focus_split:
        runs = sorted(run_ids or [])
        instance_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{DATA_GENERATOR}/runs/" + ",".join(runs)))
        placeholders = ", ".join("?" for _ in runs) or "null"
        first, last = con.execute(
            f"select min(ChargePeriodStart), max(ChargePeriodEnd) from {FOCUS_TABLE} "
            f"where x_RunId in ({placeholders})",
            runs,
        ).fetchone() or (None, None)
        metadata["DatasetInstance"] = [
            {
                "DatasetInstanceId": instance_id,
                "DatasetInstanceName": "gpu-finops cost and usage: " + ", ".join(runs),
                "FocusDatasetId": "CostAndUsage",
            }
        ]
        # a replay is complete: its whole window is one complete time sector
        if first is not None:
            metadata["Recency"] = [
                {
                    "DatasetInstanceId": instance_id,
                    "TimeSectors": [
                        {
                            "TimeSectorStart": _iso_z(first),
                            "TimeSectorEnd": _iso_z(last),
                            "TimeSectorComplete": True,
                        }
                    ],
                }
            ]
    return metadata


def _iso_z(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def export_focus(
    con: duckdb.DuckDBPyConnection,
    export: Path,
    run_ids: list[str],
    creation_date: datetime,
    focus_split: bool = False,
) -> Path:
    """Hive-partitioned Parquet of focus_cost_records for `run_ids` plus focus_metadata.json.

    Partitions: `billing_period=YYYY-MM/charge_date=YYYY-MM-DD`, one ``data_0.parquet`` each.
    Date/Time columns are written as UTC-adjusted timestamps (every engine reads them as
    `…Z`), and every file names its schema in the Parquet key-value metadata
    (`focus_schema_id`), as FOCUS asks of data artifacts. The rows stream from DuckDB to
    PyArrow's dataset writer: the export path is never part of SQL text. Written into a
    temporary folder with a list of its files (`FILES_MANIFEST`) and swapped in, so readers
    never see half an export, and a later build replaces only a folder it wrote.
    """
    export.mkdir(parents=True, exist_ok=True)
    target = export / FOCUS_TABLE
    staging = _temp_sibling(target, "exporting")
    placeholders = ", ".join("?" for _ in run_ids)
    metadata = focus_metadata(con, creation_date, focus_split, run_ids)
    schema_id = metadata["Schema"][0]["SchemaId"]
    columns = [row[0] for row in con.execute(f"select column_name from (describe {FOCUS_TABLE})").fetchall()]
    projection = ", ".join(
        f"timezone('UTC', \"{name}\") as \"{name}\""
        if REGISTRY[name].data_type == "Date/Time"
        else f'"{name}"'
        for name in columns
    )
    try:
        con.execute("set TimeZone = 'UTC'")  # zoned timestamps reach Arrow as UTC
        relation = con.sql(
            f"""
            select
                {projection},
                strftime(BillingPeriodStart, '%Y-%m') as billing_period,
                strftime(ChargePeriodStart, '%Y-%m-%d') as charge_date
            from {FOCUS_TABLE}
            where x_RunId in ({placeholders})
            order by x_RunId, ChargePeriodStart, x_Node, x_Resource, ChargeCategory,
                x_UsageClass, x_Workload, x_IdleReason, x_Borrowed, x_PreemptedBy,
                CommitmentDiscountId
            """,
            params=run_ids,
        )
        # Batches, never the whole table (DuckDB 1.x: record_batch, 2.x: to_arrow_reader).
        read_batches: Any = getattr(relation, "to_arrow_reader", None) or relation.record_batch
        batches = read_batches(65_536)
        rows = pa.RecordBatchReader.from_batches(
            batches.schema.with_metadata({"focus_schema_id": schema_id}), batches
        )
        ds.write_dataset(
            rows,
            staging,
            format="parquet",
            partitioning=ds.partitioning(
                pa.schema([("billing_period", pa.string()), ("charge_date", pa.string())]), flavor="hive"
            ),
            basename_template="data_{i}.parquet",
            existing_data_behavior="error",
            use_threads=False,  # rows keep the order above within each file
        )
        write_files_manifest(staging)
        metadata_temp = _temp_sibling(export / "focus_metadata.json", "writing")
        metadata_temp.write_text(json.dumps(metadata, indent=2) + "\n")
        check_export_folder(target)  # again: files may have been put there during the build
        replace_folder(staging, target)
        os.replace(metadata_temp, export / "focus_metadata.json")
    except BaseException:
        _remove(staging)
        raise
    return export


# Exports written before the files manifest: DuckDB's partitioned COPY layout and nothing else.
_LEGACY_EXPORT_FILE = re.compile(r"billing_period=\d{4}-\d{2}/charge_date=\d{4}-\d{2}-\d{2}/data_\d+\.parquet")


def check_export_folder(folder: Path) -> None:
    """Refuse to replace ``folder`` (``EXPORT/focus_cost_records``) unless a build wrote it:
    its files manifest lists everything in it (or, for an export of an older build, every
    file is a partition file of its layout). A user's own files there are never deleted."""
    if folder.is_dir() and not folder.is_symlink() and not (folder / FILES_MANIFEST).exists():
        contents = folder_contents(folder)
        if not contents.others and all(_LEGACY_EXPORT_FILE.fullmatch(name) for name in contents.files):
            return
    try:
        check_ours(folder, what="--export", manifest=FILES_MANIFEST, read_manifest=files_in_manifest)
    except NotOurs as refused:
        raise PipelineError(str(refused)) from None
