"""Every loader, fed broken and hostile files: a clean one-line error, or every row accounted.

The property each test checks, for any file the strategies in `hostile.py` draw:

- the loader raises its one user-facing error type (InputError, PipelineError) with one short
  line that names the file; nothing else escapes (no traceback, no hang on an alias bomb); or
- it returns, and every data row of the file is accounted for: accepted + rejected = rows
  in the file, each rejected row with its row number, column and reason; what it accepted
  fits the run directory's columns (the replay writes it without overflowing).
"""

from __future__ import annotations

import csv
import math
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.errors import PipelineError
from pipeline.inputs import read_price_book
from scheduler.admission.manifests import read_queue_config
from scheduler.admission.tables import write_queue_table
from scheduler.errors import InputError
from scheduler.trace.checks import write_rejected_csv
from scheduler.trace.cluster import cluster_to_arrow, workloads_to_arrow
from scheduler.trace.detect import load_trace
from scheduler.trace.generic import MAX_PODS, MAX_SECONDS, TraceLoad, read_generic_trace
from scheduler.trace.inventories import read_any_cluster
from tests.reliability import hostile
from tests.reliability.profiles import fuzz_settings

START = datetime(2026, 11, 2, tzinfo=UTC)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def assert_clean_error(error: Exception, file: hostile.HostileFile) -> None:
    text = str(error)
    assert "\n" not in text and "\r" not in text, f"more than one line: {text!r}"
    assert len(text) <= 800, f"a {len(text)}-character error is not one clear line"
    assert file.name in text, f"the error does not name the file: {text!r}"


def assert_rows_accounted(load: TraceLoad, file: hostile.HostileFile) -> None:
    """accepted + rejected = rows in the file; every row once; values the run dir can hold."""
    if file.rows is not None:
        assert load.input_rows == file.rows, "rows read differ from the rows in the file"
    assert len(load.workloads) + len(load.rejected) == load.input_rows
    rows = [w.source_row for w in load.workloads] + [r.row for r in load.rejected]
    assert len(set(rows)) == len(rows) and all(row >= 2 for row in rows), "a row counted twice"
    assert len({w.workload_id for w in load.workloads}) == len(load.workloads), "duplicate id accepted"
    for workload in load.workloads:
        assert workload.workload_id and workload.workload_id == workload.workload_id.strip()
        assert 0 < workload.duration_s <= MAX_SECONDS and math.isfinite(workload.duration_s)
        assert 0 <= workload.submit_time_s <= MAX_SECONDS
        assert 1 <= workload.min_count <= workload.pods <= MAX_PODS
        assert workload.gpus_per_pod >= 0.001
    for rejected in load.rejected:
        assert rejected.field and rejected.reason, rejected
        assert "\n" not in rejected.reason, rejected
    workloads_to_arrow(load.workloads)  # the replay's workloads.parquet: no overflow


def assert_quarantine_file_is_safe(load: TraceLoad, folder: Path) -> None:
    """rejected.csv holds every rejected row once, and no cell a spreadsheet would run."""
    path = folder / "rejected.csv"
    write_rejected_csv(load.rejected, path)
    with path.open(encoding="utf-8", newline="") as handle:
        records = list(csv.reader(handle))
    assert len(records) == 1 + len(load.rejected)
    for record in records[1:]:
        for cell in record:
            assert not cell.startswith(FORMULA_STARTS), f"formula cell in rejected.csv: {cell!r}"


@fuzz_settings()
@given(file=st.one_of(hostile.generic_trace_csv(), hostile.generic_trace_parquet()))
def test_generic_trace_every_row_is_accepted_or_quarantined(file):
    with tempfile.TemporaryDirectory() as folder:
        path = file.write(Path(folder))
        try:
            load = read_generic_trace(path, START)
        except InputError as error:
            assert_clean_error(error, file)
            return
        assert file.name.endswith(".parquet") or file.utf8, "bytes that are not UTF-8 were read as text"
        assert_rows_accounted(load, file)
        assert_quarantine_file_is_safe(load, Path(folder))


@fuzz_settings(share=0.5)
@given(file=st.one_of(hostile.openb_trace_csv(), hostile.aaic_trace_csv()), detect=st.booleans())
def test_real_trace_adapters_account_for_every_row(file, detect):
    with tempfile.TemporaryDirectory() as folder:
        path = file.write(Path(folder))
        trace_format = "auto" if detect else "openb" if file.name.startswith("openb") else "aaic"
        try:
            load, _, _ = load_trace(path, trace_format, None, START)  # as `replay --format` does
        except InputError as error:
            assert_clean_error(error, file)
            return
        assert file.utf8, "bytes that are not UTF-8 were read as text"
        assert_rows_accounted(load, file)


@fuzz_settings(share=0.5)
@given(file=st.one_of(hostile.node_table_csv(), hostile.cluster_toml(), hostile.inventory_csv()))
def test_cluster_loads_whole_or_fails_with_one_line(file):
    with tempfile.TemporaryDirectory() as folder:
        path = file.write(Path(folder))
        try:
            cluster = read_any_cluster(path)
        except InputError as error:
            assert_clean_error(error, file)
            return
        # A cluster is all or nothing: every row became a node.
        if file.name == "cluster.csv" and file.rows is not None:
            assert len(cluster.nodes) == file.rows
        assert cluster.nodes and len({n.name for n in cluster.nodes}) == len(cluster.nodes)
        cluster_to_arrow(cluster)  # the replay's cluster.parquet: no overflow


@fuzz_settings(share=0.5)
@given(file=hostile.price_book_csv())
def test_price_book_loads_whole_or_fails_with_one_line(file):
    with tempfile.TemporaryDirectory() as folder:
        path = file.write(Path(folder))
        try:
            prices = read_price_book(path, {"A100"})
        except PipelineError as error:
            assert_clean_error(error, file)
            return
        assert file.utf8
        assert len(prices) == file.rows, "a price row was dropped or invented"
        for row in prices:
            for value in (row.list_usd_per_gpu_hour, row.contracted_usd_per_gpu_hour, row.spot_usd_per_gpu_hour):
                assert math.isfinite(value) and value >= 0


@fuzz_settings(share=0.5)
@given(file=hostile.kueue_yaml())
def test_kueue_manifests_load_or_fail_with_one_line(file):
    with tempfile.TemporaryDirectory() as folder:
        path = file.write(Path(folder))
        try:
            config = read_queue_config(path)
        except InputError as error:
            assert_clean_error(error, file)
            return
        for warning in config.warnings:
            assert "\n" not in warning and len(warning) <= 800, warning
        write_queue_table(config, Path(folder) / "cluster_queues.parquet")  # as the replay does
        pq.read_table(Path(folder) / "cluster_queues.parquet")


@pytest.mark.parametrize("text", hostile.HOSTILE_YAML, ids=lambda t: repr(t[:24]))
def test_each_hostile_yaml_fails_cleanly_or_loads(tmp_path, text):
    """The fixed corpus, every case every run: alias bombs, deep nesting, Python tags, …"""
    file = hostile.HostileFile("queues.yaml", text.encode("utf-8"))
    try:
        read_queue_config(file.write(tmp_path))
    except InputError as error:
        assert_clean_error(error, file)
