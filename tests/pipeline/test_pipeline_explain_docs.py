"""explain.workload_timeline / render_timeline and the generated table docs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rich.console import Console

from pipeline.docs import table_docs
from pipeline.errors import PipelineError
from pipeline.explain import render_timeline, workload_timeline

TABLES_MD = Path(__file__).resolve().parents[2] / "docs" / "tables.md"


def test_timeline_of_one_run(built):
    rows = workload_timeline(built.db, "w1", run_id="pod-by-pod")
    assert [row["event"] for row in rows] == [
        "submitted", "started", "started", "timed_out", "timed_out", "requeued",
    ]
    console = Console(record=True, width=140)
    render_timeline(rows, console)
    text = console.export_text()
    assert "GangNotSatisfiable" in text and "pod 1 on n1 (4 GPU)" in text


def test_ambiguous_and_unknown_workloads(built):
    with pytest.raises(PipelineError, match=r"several runs \(cpu-memory, finished-gang, .*\); name one"):
        workload_timeline(built.db, "w1")
    with pytest.raises(PipelineError, match="unknown workload 'nope'"):
        workload_timeline(built.db, "nope")
    assert workload_timeline(built.db, "w2", run_id="preempted")[0]["event"] == "submitted"
    # the flag is named as the user typed it, with the runs there are
    with pytest.raises(PipelineError, match=r"--run-id 'nope' is not a run of the database \(runs: admitted-latency, .*preempted"):
        workload_timeline(built.db, "w2", run_id="nope")
    with pytest.raises(PipelineError, match=r"unknown workload 'w2' in run 'cpu-memory'; it is in .*preempted"):
        workload_timeline(built.db, "w2", run_id="cpu-memory")


def test_committed_tables_md_is_current(built):
    generated = table_docs(built.db)
    if os.environ.get("GPU_FINOPS_REGENERATE_DOCS") == "1":  # `make docs`
        TABLES_MD.write_text(generated)
    assert "### `focus_cost_records` (table)" in generated
    assert "Grain: one row per run × workload (pod group)" in generated
    # every model is documented, with what it reads
    from pipeline.runner import MODELS

    for model in MODELS:
        assert f"### `{model.name}` ({model.materialization})" in generated
    assert "Reads: `fct_chargeback`\n" in generated  # fct_showback: the monthly rollup of the one rule
    assert TABLES_MD.read_text() == generated, "regenerate docs/tables.md with pipeline.docs"
