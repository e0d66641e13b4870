"""Input checks, atomic and deterministic rebuilds, several runs in one database, export."""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scenarios
from runs import write_prices

from pipeline.build import MART_TABLES, build
from pipeline.errors import PipelineError
from pipeline.runner import MODELS


def table_contents(db) -> dict[str, list]:
    """Every model's rows and every raw table's, in a stable order."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [m.name for m in MODELS] + [
            "raw_events", "raw_workloads", "raw_nodes", "raw_cluster_queues", "raw_runs", "raw_prices",
        ]
        return {table: con.execute(f"select * from {table} order by all").fetchall() for table in tables}
    finally:
        con.close()


def export_contents(export) -> dict[str, object]:
    """The export's files, each read back as rows, and its metadata."""
    files = sorted(export.rglob("*.parquet"))
    return {
        "files": [p.relative_to(export).as_posix() for p in files],
        "rows": [pq.read_table(p).to_pylist() for p in files],
        "metadata": (export / "focus_metadata.json").read_text(),
    }


def test_building_the_same_runs_twice_gives_identical_content(tmp_path, prices_csv):
    runs = tmp_path / "runs"
    run_dirs = [
        make().write(runs)
        for make in (scenarios.preempted_with_checkpoints, scenarios.kueue_quota_and_borrowing,
                     scenarios.reserved_then_started)
    ]
    db, export = tmp_path / "f.duckdb", tmp_path / "export"
    first = build(run_dirs, prices_csv, db, export=export, show_progress=False)
    before, exported = table_contents(db), export_contents(export)
    # the same runs again, into the same database and export: replaced, not duplicated
    second = build(run_dirs, prices_csv, db, export=export, show_progress=False)
    assert table_contents(db) == before
    assert export_contents(export) == exported
    assert first.row_counts == second.row_counts
    assert set(first.row_counts) == set(MART_TABLES)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith((".f.duckdb", ".export"))]


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
        ("resource,gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
         "gpu,A100,2,1,1\ndisk,,1,1,1\n", r"row 3: field 'resource' is 'disk', expected one of gpu, cpu, memory"),
        ("resource,gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
         "gpu,A100,2,1,1\ncpu,,0.04,0.03,0.01\ncpu,,0.05,0.03,0.01\n",
         r"row 4: field 'gpu_model' \(default\) listed twice for resource 'cpu'"),
    ],
)
def test_price_book_errors_name_row_and_field(tmp_path, content, message):
    run_dir = scenarios.finished_gang().write(tmp_path / "runs")
    prices = tmp_path / "prices.csv"
    prices.write_text(content)
    with pytest.raises(PipelineError, match=message):
        build([run_dir], prices, tmp_path / "f.duckdb", show_progress=False)


def test_a_priced_resource_must_price_every_node_that_has_it(tmp_path):
    run_dir = scenarios.cpu_and_memory().write(tmp_path / "runs")
    prices = write_prices(tmp_path / "p.csv", {"A100": (2.0, 1.5, 0.8)}, {("cpu", "A100"): (0.04, 0.03, 0.01)})
    with pytest.raises(PipelineError, match=r"p.csv: field 'gpu_model': no cpu price for CPU-only nodes"):
        build([run_dir], prices, tmp_path / "f.duckdb", show_progress=False)
    # without CPU rows at all, CPU is simply not costed
    gpu_only = write_prices(tmp_path / "g.csv", {"A100": (2.0, 1.5, 0.8)})
    build([run_dir], gpu_only, tmp_path / "f.duckdb", show_progress=False)
    con = duckdb.connect(str(tmp_path / "f.duckdb"), read_only=True)
    assert con.execute("select distinct x_Resource from focus_cost_records").fetchall() == [("gpu",)]
    con.close()


def test_cluster_queues_file_is_checked(tmp_path, prices_csv):
    run_dir = scenarios.kueue_quota_and_borrowing().write(tmp_path / "runs")
    queues = pq.read_table(run_dir / "cluster_queues.parquet")
    index = queues.schema.get_field_index("nominal_quota")
    pq.write_table(queues.set_column(index, "nominal_quota", queues.column(index).cast(pa.string())),
                   run_dir / "cluster_queues.parquet")
    with pytest.raises(PipelineError, match=r"cluster_queues.parquet: field 'nominal_quota' has type string"):
        build([run_dir], prices_csv, tmp_path / "f.duckdb", show_progress=False)


def test_schema_version_mismatch(tmp_path, prices_csv):
    run_dir = scenarios.finished_gang().write(tmp_path / "runs")
    meta = json.loads((run_dir / "run.json").read_text())
    meta["schema_version"] = "0.9"
    (run_dir / "run.json").write_text(json.dumps(meta))
    with pytest.raises(PipelineError, match=r"run.json: field 'schema_version' is '0.9'"):
        build([run_dir], prices_csv, tmp_path / "f.duckdb", show_progress=False)


def test_a_schema_1_1_log_builds_like_its_1_2_twin(tmp_path, prices_csv):
    """Readers keep reading 1.1 logs: the facts 1.2 made columns (preemptor, queue place)
    are recovered from 1.1's reason and message text at the boundary, once."""
    def builder():
        return (scenarios.preempted_with_checkpoints()
                .event(2500, "pending", "w1", reason="WaitingForQuota",
                       message="insufficient quota; position 3 of 12 in ClusterQueue team-a",
                       queue_position=3, queue_length=12))

    old = builder().write(tmp_path / "old", schema_version="1.1")
    assert "preemptor" not in pq.read_schema(old / "events.parquet").names
    new = builder().write(tmp_path / "new")
    for run_dir, name in ((old, "old.duckdb"), (new, "new.duckdb")):
        build([run_dir], prices_csv, tmp_path / name, show_progress=False)
    old_tables, new_tables = (table_contents(tmp_path / name) for name in ("old.duckdb", "new.duckdb"))
    assert old_tables.pop("raw_runs") != new_tables.pop("raw_runs")  # it keeps each run.json as written
    assert old_tables == new_tables
    with duckdb.connect(str(tmp_path / "old.duckdb"), read_only=True) as con:
        facts = con.execute("select event, preemptor, queue_position, queue_length from fct_workload_timeline "
                            "where preemptor is not null or queue_position is not null order by seq").fetchall()
    assert facts == [("preempted", "w2", None, None), ("pending", None, 3, 12)]


def test_a_schema_1_2_run_reads_with_unknown_utilisation(tmp_path, prices_csv):
    """1.3 added workloads.parquet's gpu_utilization: a 1.2 run has none, and reads as unknown
    (null), never as zero or as fully busy."""
    def builder():
        return scenarios.finished_gang()

    old = builder().write(tmp_path / "old", schema_version="1.2")
    assert "gpu_utilization" not in pq.read_schema(old / "workloads.parquet").names
    new = builder().write(tmp_path / "new")
    for run_dir, name in ((old, "old.duckdb"), (new, "new.duckdb")):
        build([run_dir], prices_csv, tmp_path / name, show_progress=False)
    old_tables, new_tables = (table_contents(tmp_path / name) for name in ("old.duckdb", "new.duckdb"))
    assert old_tables.pop("raw_runs") != new_tables.pop("raw_runs")
    assert old_tables == new_tables
    with duckdb.connect(str(tmp_path / "old.duckdb"), read_only=True) as con:
        assert con.execute("select count(*), count(gpu_utilization) from raw_workloads").fetchone() == (1, 0)


def test_a_schema_1_3_run_reads_without_labels(tmp_path, prices_csv):
    """1.4 added workloads.parquet's labels: a 1.3 run has none, reads as null, and builds the
    same tables as a 1.4 run of unlabelled workloads (no allocation by label)."""
    old = scenarios.finished_gang().write(tmp_path / "old", schema_version="1.3")
    assert "labels" not in pq.read_schema(old / "workloads.parquet").names
    assert "gpu_utilization" in pq.read_schema(old / "workloads.parquet").names
    new = scenarios.finished_gang().write(tmp_path / "new")
    for run_dir, name in ((old, "old.duckdb"), (new, "new.duckdb")):
        build([run_dir], prices_csv, tmp_path / name, show_progress=False)
    old_tables, new_tables = (table_contents(tmp_path / name) for name in ("old.duckdb", "new.duckdb"))
    assert old_tables.pop("raw_runs") != new_tables.pop("raw_runs")
    assert old_tables == new_tables
    with duckdb.connect(str(tmp_path / "old.duckdb"), read_only=True) as con:
        assert con.execute("select count(*), count(labels) from raw_workloads").fetchone() == (1, 0)
        assert con.execute("select count(*) from fct_label_allocation").fetchone() == (0,)


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


def test_export_replaces_the_previous_one_atomically(tmp_path, prices_csv):
    runs = tmp_path / "runs"
    export = tmp_path / "export"
    build([scenarios.reserved_then_started().write(runs)], prices_csv, tmp_path / "f.duckdb",
          export=export, show_progress=False)
    build([scenarios.finished_gang().write(runs)], prices_csv, tmp_path / "f.duckdb",
          export=export, show_progress=False)
    # the export holds the runs of the latest build; nothing temporary is left behind
    table = pq.ParquetDataset(export / "focus_cost_records").read(columns=["x_RunId"])
    assert set(table.column("x_RunId").to_pylist()) == {"finished-gang"}
    assert sorted(p.name for p in export.iterdir()) == ["focus_cost_records", "focus_metadata.json"]
