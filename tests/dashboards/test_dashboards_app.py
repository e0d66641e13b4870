"""The Streamlit app, headless (AppTest): every page runs, filters change, errors are clear."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import duckdb
import pytest
from fixture_db import build_fixture_db
from streamlit.testing.v1 import AppTest

from dashboards.data import DB_ENV_VAR

APP = str(Path(__file__).resolve().parents[2] / "dashboards" / "streamlit_app.py")
WHY_PENDING = "app_pages/why_pending.py"
OVERVIEW = "app_pages/overview.py"


def _app(monkeypatch: pytest.MonkeyPatch, db: Path | str | None) -> AppTest:
    if db is None:
        monkeypatch.delenv(DB_ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(DB_ENV_VAR, str(db))
    return AppTest.from_file(APP, default_timeout=60)


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _charts(at: AppTest) -> int:
    return len(at.get("vega_lite_chart"))


def test_overview_renders_metrics_charts_and_downloads(monkeypatch, fixture_db):
    at = _ok(_app(monkeypatch, fixture_db).run())
    at = _ok(at.selectbox(key="filters.run").select("demo-a").run())
    values = {m.label: m.value for m in at.metric}
    assert values["Total cost"] == "$1.5k"  # compact: five metrics share one laptop-wide row
    assert values["Idle cost"] == "$1.2k"
    assert values["Partial placement"] == "16 GPU-h"
    helps = {m.label: m.help for m in at.metric}
    assert helps["Total cost"].startswith("$1,536.00")  # the exact figure is one hover away
    assert helps["Idle cost"].startswith("$1,168.00")
    assert _charts(at) == 4  # spend by team, idle by cause, usage over time, costliest
    downloads = [b.key for b in at.get("download_button")]
    assert len(downloads) == len(at.dataframe) == 5  # a CSV button under every table


def test_overview_filters_change_the_numbers(monkeypatch, fixture_db):
    at = _ok(_app(monkeypatch, fixture_db).run())
    at = _ok(at.selectbox(key="filters.run").select("demo-a").run())
    at = _ok(at.multiselect(key="filters.teams.demo-a").select("team-o'brien").run())
    values = {m.label: m.value for m in at.metric}
    assert values["Total cost"] == "$32.00"  # the partially placed gang's A100 hours only
    assert values["Idle cost"] == "$1.2k"  # idle belongs to the cluster, not the team
    at = _ok(at.multiselect(key="filters.gpus.demo-a").select("H100").run())
    assert {m.label: m.value for m in at.metric}["Total cost"] == "$0.00"
    assert any("No team used GPUs" in i.value for i in at.info)
    at = _ok(at.date_input(key="filters.dates.demo-a")
             .set_value((date(2026, 11, 3), date(2026, 11, 3))).run())
    at = _ok(at.multiselect(key="filters.teams.demo-a").unselect("team-o'brien").run())
    assert {m.label: m.value for m in at.metric}["Total cost"] == "$576.00"  # 8 H100 x 24 h x 3


def test_why_pending_page(monkeypatch, fixture_db):
    at = _ok(_app(monkeypatch, fixture_db).run())
    at = _ok(at.selectbox(key="filters.run").select("demo-a").run())
    at = _ok(at.switch_page(WHY_PENDING).run())
    picker = at.selectbox(key="why_pending.workload.demo-a")
    # waiting workloads are offered first
    assert set(picker.options[:3]) == {"gang-2 (waiting)", "big-4 (waiting)", "=SUM(A1) (waiting)"}
    at = _ok(picker.select("big-4").run())
    assert _charts(at) == 2  # the workload's timeline and pending-by-reason
    timeline = at.dataframe[0].value
    assert list(timeline["reason"].dropna()) == ["Unschedulable", "QuotaExceeded"]
    expanders = [e.label for e in at.expander]
    assert "QuotaExceeded: 2 workload(s)" in expanders
    assert "Unschedulable: 1 workload(s)" in expanders
    at = _ok(at.text_input(key="why_pending.search").input("o'brien'; DROP TABLE x --").run())
    assert any("No workload id contains" in i.value for i in at.info)
    at = _ok(at.text_input(key="why_pending.search").input("SUM").run())
    assert at.selectbox(key="why_pending.workload.demo-a").options == ["=SUM(A1) (waiting)"]


def test_why_pending_when_nothing_waits(monkeypatch, fixture_db):
    at = _ok(_app(monkeypatch, fixture_db).run())
    at = _ok(at.selectbox(key="filters.run").select("demo-b").run())
    at = _ok(at.switch_page(WHY_PENDING).run())
    assert any("No workload is waiting" in s.value for s in at.success)
    at = _ok(at.switch_page(OVERVIEW).run())
    assert _charts(at) >= 3


def test_missing_db_shows_an_error_page(monkeypatch, tmp_path):
    at = _app(monkeypatch, tmp_path / "nope.duckdb").run()
    assert not at.exception
    assert "database not found" in at.error[0].value
    at = _app(monkeypatch, None).run()
    assert not at.exception
    assert "GPU_FINOPS_DB" in at.error[0].value


def test_empty_database_states(monkeypatch, tmp_path):
    db = build_fixture_db(tmp_path / "empty-facts.duckdb")
    with duckdb.connect(str(db)) as con:
        for table in ("fct_usage_hourly", "focus_cost_records", "fct_workloads",
                      "fct_workload_timeline", "fct_pod_intervals"):
            con.execute(f"DELETE FROM {table}")
    at = _ok(_app(monkeypatch, db).run())
    assert any("No cost records for these filters" in i.value for i in at.info)
    at = _ok(at.switch_page(WHY_PENDING).run())
    assert any("No workload id contains" in i.value for i in at.info)

    no_runs = build_fixture_db(tmp_path / "no-runs.duckdb")
    with duckdb.connect(str(no_runs)) as con:
        con.execute("DELETE FROM dim_runs")
    at = _ok(_app(monkeypatch, no_runs).run())
    assert any("holds no run" in i.value for i in at.info)


def test_rebuilt_database_is_reopened(monkeypatch, tmp_path):
    db = build_fixture_db(tmp_path / "rebuilt.duckdb")
    at = _ok(_app(monkeypatch, db).run())
    assert at.selectbox(key="filters.run").options[0].startswith("demo-b")
    # Rebuild as the pipeline does (new file, renamed over the old one) with one run fewer:
    # the app must notice the new mtime and read the new content.
    fresh = build_fixture_db(tmp_path / "rebuilt.duckdb.tmp")
    with duckdb.connect(str(fresh)) as con:
        con.execute("DELETE FROM dim_runs WHERE run_id = 'demo-b'")
    os.replace(fresh, db)
    at = _ok(_app(monkeypatch, db).run())
    assert [o.split(" ")[0] for o in at.selectbox(key="filters.run").options] == ["demo-a"]
