"""Event log → DuckDB marts + FOCUS 1.2 cost records (+ Hive-partitioned Parquet export).

`build` checks every input first, then works on a temporary copy of the database next to the
target and renames it into place only when every model ran and every audit passed: a failed
build leaves the previous database untouched and nothing half-written behind.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import duckdb
import pyarrow as pa
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn

from pipeline.errors import PipelineError
from pipeline.focus.columns import CUSTOM_COLUMNS, FOCUS_COLUMNS
from pipeline.inputs import PriceRow, RunInputs, read_price_book, read_run_dir
from pipeline.runner import MODELS, audit_paths, create_macros, run_model
from scheduler.eventlog.schema import CLUSTER_SCHEMA, EVENT_SCHEMA, SCHEMA_VERSION, WORKLOAD_SCHEMA

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
}
MART_TABLES = (
    "dim_runs",
    "dim_nodes",
    "fct_workloads",
    "fct_workload_timeline",
    "fct_pod_intervals",
    "fct_usage_hourly",
    "focus_cost_records",
)


@dataclass(frozen=True)
class BuildResult:
    db: Path
    run_ids: list[str]
    row_counts: dict[str, int] = field(default_factory=dict)
    export: Path | None = None


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


def _load_run(
    con: duckdb.DuckDBPyConnection,
    run: RunInputs,
    prices: list[PriceRow],
    charge_period_s: int,
) -> None:
    # rebuilding a run replaces it: remove every raw row of that run first
    for name in (*RAW_TABLES, "raw_runs", "raw_prices"):
        con.execute(f"delete from {name} where run_id = ?", [run.run_id])
    loads = {
        "raw_events": run.events,
        "raw_workloads": run.workloads,
        "raw_nodes": run.cluster,
    }
    for name, table in loads.items():
        rows = _with_run_id(table, run.run_id)  # noqa: F841 - read by DuckDB's replacement scan
        con.execute(f"insert into {name} by name select * from rows")
    run_json = (run.run_dir / "run.json").read_text()
    runs = pa.Table.from_pylist(  # noqa: F841
        [
            {
                "run_id": run.run_id,
                "schema_version": SCHEMA_VERSION,
                "profile": run.profile,
                "seed": run.seed,
                "start_ts": run.start,
                "horizon_s": run.horizon_s,
                "charge_period_s": float(charge_period_s),
                "run_json": run_json,
            }
        ],
        schema=RAW_RUNS_SCHEMA,
    )
    con.execute("insert into raw_runs by name select * from runs")
    price_table = pa.Table.from_pylist(  # noqa: F841
        [{"run_id": run.run_id, **price.__dict__} for price in prices], schema=RAW_PRICES_SCHEMA
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


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
    Path(f"{path}.wal").unlink(missing_ok=True)


def build(
    run_dirs: list[Path],
    prices: Path,
    db: Path,
    charge_period_s: int = 3600,
    export: Path | None = None,
    show_progress: bool = True,
) -> BuildResult:
    """Build (or rebuild) the given runs into `db`; other runs already there are kept."""
    if not run_dirs:
        raise PipelineError("build: no run directory given")
    if charge_period_s <= 0:
        raise PipelineError(f"build: charge period must be positive, got {charge_period_s} s")
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
    price_rows = read_price_book(Path(prices), models_in_use)

    db = Path(db)
    db.parent.mkdir(parents=True, exist_ok=True)
    temp_db = _temp_sibling(db, "building")
    try:
        if db.exists():
            shutil.copy2(db, temp_db)
        con = duckdb.connect(str(temp_db))
        try:
            _create_raw_tables(con)
            for run in runs:
                _load_run(con, run, price_rows, charge_period_s)
            create_macros(con)
            with _progress(show_progress) as progress:
                task = None
                if progress is not None:
                    task = progress.add_task("models", total=len(MODELS) + 1)
                for model in MODELS:
                    if progress is not None:
                        progress.update(task, description=model.name)
                    run_model(con, model)
                    if progress is not None:
                        progress.advance(task)
                if progress is not None:
                    progress.update(task, description="audits")
                failures = run_audits(con)
                if progress is not None:
                    progress.advance(task)
            if failures:
                name, count, example = failures[0]
                raise PipelineError(
                    f"{db}: audit '{name}' failed on {count} row(s), e.g. {example}"
                    + (f" (and {len(failures) - 1} more audits)" if len(failures) > 1 else "")
                )
            row_counts = {
                table: con.execute(f"select count(*) from {table}").fetchone()[0]
                for table in MART_TABLES
            }
            export_path = None
            if export is not None:
                export_path = export_focus(
                    con, Path(export), [run.run_id for run in runs], max(r.end for r in runs)
                )
            con.execute("checkpoint")
        finally:
            con.close()
        os.replace(temp_db, db)
    except BaseException:
        _remove(temp_db)
        raise
    return BuildResult(
        db=db, run_ids=[run.run_id for run in runs], row_counts=row_counts, export=export_path
    )


def focus_metadata(con: duckdb.DuckDBPyConnection, creation_date: datetime) -> dict:
    """FOCUS 1.2 metadata: a Data Generator object and a Schema object with ColumnDefinition."""
    types = dict(con.execute("select column_name, column_type from (describe focus_cost_records)").fetchall())
    registry = {column.name: column for column in (*FOCUS_COLUMNS, *CUSTOM_COLUMNS)}
    definitions = []
    for name, duck_type in types.items():
        definition: dict[str, object] = {"ColumnName": name, "DataType": registry[name].data_type}
        if duck_type == "DOUBLE":
            definition["NumericPrecision"] = 53  # IEEE 754 binary64 significand bits
        if name == "Tags":
            definition["ProviderTagPrefixes"] = []
        definitions.append(definition)
    created = creation_date.strftime("%Y-%m-%dT%H:%M:%SZ")
    # a name-based UUID: the same column list and date give the same SchemaId on every build
    schema_id = uuid.uuid5(uuid.NAMESPACE_URL, "gpu-finops/focus-1.2/" + ",".join(types) + created)
    return {
        "DataGenerator": {"DataGenerator": "gpu-finops", "DataGeneratorVersion": "0.1.0"},
        "Schema": [
            {
                "SchemaId": str(schema_id),
                "FocusVersion": "1.2",
                "CreationDate": created,
                "ColumnDefinition": definitions,
            }
        ],
    }


def export_focus(
    con: duckdb.DuckDBPyConnection, export: Path, run_ids: list[str], creation_date: datetime
) -> Path:
    """Hive-partitioned Parquet of focus_cost_records for `run_ids` plus focus_metadata.json.

    Written into a temporary folder and renamed, so readers never see half an export.
    """
    export.mkdir(parents=True, exist_ok=True)
    target = export / "focus_cost_records"
    staging = _temp_sibling(target, "exporting")
    placeholders = ", ".join("?" for _ in run_ids)
    try:
        con.execute(
            f"""
            copy (
                select
                    *,
                    strftime(BillingPeriodStart, '%Y-%m') as billing_period,
                    strftime(ChargePeriodStart, '%Y-%m-%d') as charge_date
                from focus_cost_records
                where x_RunId in ({placeholders})
                order by x_RunId, ChargePeriodStart, x_Node, x_UsageClass, x_Workload, x_IdleReason
            ) to '{staging}' (format parquet, partition_by (billing_period, charge_date))
            """,
            run_ids,
        )
        metadata = json.dumps(focus_metadata(con, creation_date), indent=2) + "\n"
        metadata_temp = _temp_sibling(export / "focus_metadata.json", "writing")
        metadata_temp.write_text(metadata)
        previous = _temp_sibling(target, "previous")
        if target.exists():
            target.rename(previous)
        staging.rename(target)
        shutil.rmtree(previous, ignore_errors=True)
        os.replace(metadata_temp, export / "focus_metadata.json")
    except BaseException:
        _remove(staging)
        raise
    return export

