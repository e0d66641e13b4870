"""The dashboard on a database an older gpu-finops built, or one made elsewhere (issue 24): in a
real headless Chromium, every page shows the one line "built by an older version: rebuild
with `gpu-finops build …`", never a traceback or a Streamlit exception.

Databases without the recorded layout: a DuckDB file with none of the marts (made elsewhere);
the fixture's marts without one every page's filters read (every page says the line); without
the workload timelines, or with cost records lacking a column an older build did not write
(the pages that read them say the line, the others draw as usual).
Before, the pages raised CatalogException / BinderException inside the page."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from dashboards.serve import serve
from tests.browser import _free_port, _stop, _wait_healthy, chromium_or_skip, open_pages_in_chromium

pytestmark = pytest.mark.e2e

PAGES = ("", "teams", "budgets", "idle", "scenarios", "advice", "queues", "pending", "preemption", "workload", "sql")
LINE = "built by an older version of gpu-finops: rebuild with"


def _variant(fixture_db: Path, folder: Path, how: str) -> Path:
    db = folder / f"{how}.duckdb"
    if how == "foreign":
        with duckdb.connect(str(db)) as con:
            con.execute("create table invoices as select 1 as id, 'x' as note")
        return db
    shutil.copyfile(fixture_db, db)
    with duckdb.connect(str(db)) as con:
        con.execute("drop table if exists gpu_finops_build")
        if how == "no-sidebar-mart":  # every page's filters read it
            con.execute("drop table dim_nodes")
        elif how == "missing-mart":  # the timelines of the Pending and Workload pages
            con.execute("drop table fct_workload_timeline")
        else:
            con.execute("alter table focus_cost_records drop column x_IdleReason")
    return db


def _open_every_page(db: Path, folder: Path, chromium: str) -> list[dict]:
    port = _free_port()
    server = serve(db, port=port, host="127.0.0.1", block=False)
    assert server is not None
    try:
        _wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", server)
        pages = [(f"http://127.0.0.1:{port}/{path}?run=demo-a", folder / f"{path or 'overview'}.png") for path in PAGES]
        return open_pages_in_chromium(chromium, pages, folder / "chromium-profile", min_charts=0)
    finally:
        _stop(server)


@pytest.mark.parametrize("how", ["foreign", "no-sidebar-mart"])
def test_every_page_says_one_line_on_a_database_without_the_layout_and_the_marts(fixture_db, tmp_path, how):
    chromium = chromium_or_skip()
    db = _variant(fixture_db, tmp_path, how)
    for path, state in zip(PAGES, _open_every_page(db, tmp_path, chromium), strict=True):
        summary = {k: v for k, v in state.items() if k not in ("dom", "icons")}
        assert not state.get("traceback") and not state.get("exception") and not state.get("apiError"), summary
        assert state.get("errors") == 1 and LINE in state.get("mainText", ""), (path, summary)
        assert "gpu-finops build" in state["mainText"] and str(db) in state["mainText"], (path, summary)


@pytest.mark.parametrize(("how", "page"), [("missing-column", "idle"), ("missing-mart", "pending")])
def test_a_page_reading_what_an_older_build_lacks_says_one_line(fixture_db, tmp_path, monkeypatch, how, page):
    """The page itself (Streamlit's AppTest: every element, no timing): the one line, no exception."""
    from streamlit.testing.v1 import AppTest

    db = _variant(fixture_db, tmp_path, how)
    monkeypatch.setenv("GPU_FINOPS_DB", str(db))
    at = AppTest.from_file(str(Path(__file__).parents[2] / "dashboards" / "streamlit_app.py"), default_timeout=60)
    at.run()
    at = at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert [LINE in e.value.replace("\\", "") for e in at.error] == [True]
