"""Input checks, atomic rebuilds, several runs in one database, export."""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scenarios
from runs import write_prices

from pipeline.build import build
from pipeline.errors import PipelineError


def table_contents(db) -> dict[str, list]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            table: con.execute(f"select * from {table} order by all").fetchall()
            for table in ("focus_cost_records", "fct_workloads", "fct_pod_intervals", "dim_runs")
        }
    finally:
        con.close()


def test_rebuilding_a_run_replaces_it(tmp_path, prices_csv):
    run_dir = scenarios.preempted_with_checkpoints().write(tmp_path / "runs")
    db = tmp_path / "f.duckdb"
    first = build([run_dir], prices_csv, db, show_progress=False)
    before = table_contents(db)
    second = build([run_dir], prices_csv, db, show_progress=False)
    assert table_contents(db) == before
    assert first.row_counts == second.row_counts
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".f.duckdb")]


def test_two_runs_in_one_db_are_kept_apart(tmp_path, prices_csv):
    runs = tmp_path / "runs"
    a = scenarios.finished_gang().write(runs)
    b = scenarios.fractional_sharing().write(runs)
    db = tmp_path / "f.duckdb"
    build([a], prices_csv, db, show_progress=False)
    result = build([b], prices_csv, db, show_progress=False)
    assert result.run_ids == ["fractional"]
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("select run_id from dim_runs order by 1").fetchall() == [
        ("finished-gang",),
        ("fractional",),
    ]
    assert con.execute(
        "select x_RunId, count(*) from focus_cost_records group by all order by 1"
    ).fetchall() == [("finished-gang", 3), ("fractional", 4)]
    con.close()


def test_failed_build_leaves_the_old_db_untouched(tmp_path, prices_csv):
    run_dir = scenarios.finished_gang().write(tmp_path / "runs")
    db = tmp_path / "f.duckdb"
    build([run_dir], prices_csv, db, show_progress=False)
    before = db.read_bytes()
    bad_prices = write_prices(tmp_path / "bad.csv", {"H100": (1.0, 1.0, 1.0)})
    with pytest.raises(PipelineError, match=r"bad.csv: field 'gpu_model': no price for 'A100'"):
        build([run_dir], bad_prices, db, show_progress=False)
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "f.duckdb", "runs"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
         "A100,2,-1,1\n", r"row 2: field 'contracted_usd_per_gpu_hour' must be a finite non-negative"),
        ("gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
         "A100,2,1,1\nH100,two,1,1\n", r"row 3: field 'list_usd_per_gpu_hour' is not a number"),
        ("gpu_model,list_usd_per_gpu_hour,spot_usd_per_gpu_hour\nA100,2,1\n",
         r"field 'contracted_usd_per_gpu_hour' missing from the header"),
    ],
)
def test_price_book_errors_name_row_and_field(tmp_path, content, message):
    run_dir = scenarios.finished_gang().write(tmp_path / "runs")
    prices = tmp_path / "prices.csv"
    prices.write_text(content)
    with pytest.raises(PipelineError, match=message):
        build([run_dir], prices, tmp_path / "f.duckdb", show_progress=False)


def test_schema_version_mismatch(tmp_path, prices_csv):
    run_dir = scenarios.finished_gang().write(tmp_path / "runs")
    meta = json.loads((run_dir / "run.json").read_text())
    meta["schema_version"] = "0.9"
    (run_dir / "run.json").write_text(json.dumps(meta))
    with pytest.raises(PipelineError, match=r"run.json: field 'schema_version' is '0.9'"):
        build([run_dir], prices_csv, tmp_path / "f.duckdb", show_progress=False)


def test_missing_file_and_wrong_field_type(tmp_path, prices_csv):
    run_dir = scenarios.finished_gang().write(tmp_path / "runs")
    events = pq.read_table(run_dir / "events.parquet")
    wrong = events.set_column(
        events.schema.get_field_index("gpus"), "gpus", events.column("gpus").cast(pa.string())
    )
    pq.write_table(wrong, run_dir / "events.parquet")
    with pytest.raises(PipelineError, match=r"events.parquet: field 'gpus' has type string, expected double"):
        build([run_dir], prices_csv, tmp_path / "f.duckdb", show_progress=False)
    (run_dir / "events.parquet").unlink()
    with pytest.raises(PipelineError, match=r"events.parquet: file missing"):
        build([run_dir], prices_csv, tmp_path / "f.duckdb", show_progress=False)


def test_export_is_hive_partitioned_with_reproducible_metadata(tmp_path, prices_csv):
    run_dir = scenarios.reserved_then_started().write(tmp_path / "runs")
    export = tmp_path / "export"
    build([run_dir], prices_csv, tmp_path / "f.duckdb", export=export, show_progress=False)
    files = sorted(p.relative_to(export).as_posix() for p in export.rglob("*.parquet"))
    assert files == [
        "focus_cost_records/billing_period=2026-11/charge_date=2026-11-02/data_0.parquet"
    ]
    metadata = json.loads((export / "focus_metadata.json").read_text())
    schema = metadata["Schema"][0]
    assert metadata["DataGenerator"]["DataGenerator"] == "gpu-finops"
    assert schema["FocusVersion"] == "1.2"
    assert schema["CreationDate"] == "2026-11-02T02:00:00Z"  # the run's end, not the wall clock
    assert len(schema["ColumnDefinition"]) == 60
    first = (export / "focus_metadata.json").read_text()
    build([run_dir], prices_csv, tmp_path / "f.duckdb", export=export, show_progress=False)
    assert (export / "focus_metadata.json").read_text() == first
