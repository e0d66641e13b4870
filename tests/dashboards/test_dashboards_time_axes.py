"""Every chart of one page covers the window the page shows: on the demo's own database, the
pages with several time charts (Idle, Queues, Pending, Workload, ...) draw their x axes to the
same last day. Read from the charts the real Streamlit runtime sends to the browser (AppTest:
each chart's Vega-Lite spec and its Arrow datasets), so a chart fed another window fails."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from dashboards import data
from dashboards.data import DB_ENV_VAR

pytestmark = pytest.mark.slow

APP = str(Path(__file__).resolve().parents[2] / "dashboards" / "streamlit_app.py")
PAGES = ("overview", "teams", "idle", "queues", "pending", "preemption", "scenarios", "workload")
_NESTED = ("layer", "hconcat", "vconcat", "concat", "spec")


def _instant(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if isinstance(value, (int, float)):  # Vega-Lite's epoch milliseconds
        return datetime.fromtimestamp(value / 1000, UTC).replace(tzinfo=None)
    return datetime.fromisoformat(str(value).replace("Z", "")).replace(tzinfo=None)


def _day(value: Any, *, exclusive_end: bool = False) -> date:
    """The day of an instant; a bar's end (x2) is exclusive: a day's bar ending at the next
    midnight covers that day, not the next."""
    moment = _instant(value)
    return (moment - timedelta(microseconds=1)).date() if exclusive_end else moment.date()


def _last_days(proto: Any) -> list[date]:
    """The last day of every temporal x axis of one chart: its explicit domain's end, else the
    latest day its x (and x2) field covers in the data the chart was sent."""
    spec = json.loads(proto.spec)
    tables = {d.name: pa.ipc.open_stream(d.data.data).read_all() for d in proto.datasets}
    ends: list[date] = []

    def walk(node: Any, data_name: str | None) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, data_name)
            return
        if not isinstance(node, dict):
            return
        data = node.get("data")
        if isinstance(data, dict) and data.get("name"):
            data_name = data["name"]
        encoding = node.get("encoding") or {}
        x = encoding.get("x")
        if isinstance(x, dict) and x.get("type") == "temporal":
            domain = (x.get("scale") or {}).get("domain")
            if isinstance(domain, list) and domain:
                ends.append(max(_day(v, exclusive_end=True) for v in domain))  # the window's end
            elif data_name in tables:
                table = tables[data_name]
                # a step chart's last x closes its last step (charts.closed_steps): an exclusive end
                mark = node.get("mark")
                stepped = isinstance(mark, dict) and mark.get("interpolate") == "step-after"
                days = [_day(v, exclusive_end=end) for f, end in ((x.get("field"), stepped),
                                                                   ((encoding.get("x2") or {}).get("field"), True))
                        if f in table.column_names for v in table.column(f).to_pylist() if v is not None]
                if days:
                    ends.append(max(days))
        for key in _NESTED:
            if key in node:
                walk(node[key], data_name)

    walk(spec, None)
    return ends


@pytest.fixture(scope="module")
def app(demo_db):
    import os

    before = os.environ.get(DB_ENV_VAR)
    os.environ[DB_ENV_VAR] = str(demo_db)
    try:
        yield AppTest.from_file(APP, default_timeout=180).run()
    finally:
        # The runtime ran in this process: its cached read-only connection to the demo
        # database must go, or a later test's connection of another configuration is refused.
        from dashboards import cache

        cache.close_connections()
        if before is None:
            os.environ.pop(DB_ENV_VAR, None)
        else:
            os.environ[DB_ENV_VAR] = before


# the sidebar's default (the first run, steady phase), the other run over the whole run, a drain
SELECTIONS = [("demo-gang-v1.37", "steady"), ("demo-kube-default", "all"), ("demo-gang-v1.37", "drain")]


# pages whose time charts are charge periods of the window the sidebar picks (Pending and
# Workload draw one workload's own life, on one shared axis)
WINDOWED = ("overview", "teams", "idle", "queues", "preemption")


def _window_last_day(demo_db: Path, run: str, phase: str) -> date:
    con = data.connect_read_only(demo_db)
    try:
        filters = data.with_phase(con, data.Filters(run), None if phase == "all" else phase)
        run_range = data.run_date_range(con, run)
    finally:
        con.close()
    if filters.phase_window is None:
        assert run_range is not None
        return run_range[1]
    return _day(filters.phase_window[1], exclusive_end=True)


@pytest.mark.parametrize(("run", "phase"), SELECTIONS, ids=["-".join(s) for s in SELECTIONS])
@pytest.mark.parametrize("page", PAGES)
def test_the_time_charts_of_a_page_end_on_the_same_day(app, demo_db, page, run, phase):
    app.session_state["filters.run"] = run
    app.session_state[f"filters.phase.{run}"] = phase
    at = app.run().switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.message for e in at.exception]
    per_chart = [days for days in (_last_days(c.proto) for c in at.get("vega_lite_chart")) if days]
    last = {day for days in per_chart for day in days}
    assert len(last) <= 1, (page, run, phase, [sorted(set(days)) for days in per_chart])
    if page in WINDOWED and last:  # and that day is the last of the window the page shows
        assert last == {_window_last_day(demo_db, run, phase)}, (page, run, phase)


def test_the_committed_capacity_table_fits_the_page(app):
    """Sixteen columns were cut off at the right of the Idle page: it shows the ten a reader
    needs, the CSV keeps every one."""
    app.session_state["filters.run"] = "demo-gang-v1.37"
    at = app.run().switch_page("app_pages/idle.py").run()
    pools = next(f.value for f in at.dataframe if "sku_id" in f.value.columns)
    assert len(pools.columns) <= 10 and {"utilization", "coverage", "unused_cost"} <= set(pools.columns)
    assert any("commitment-eligible" in c.value for c in at.caption)
